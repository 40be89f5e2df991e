//! Groups of people on a server that hosts several (`aw-users`), kept in
//! the users' index (`user_index.rs`): a group, its members with what
//! each shares, and the invitations to it. A person is a member only
//! after joining with their own credential; an invitation is only an
//! invitation. What a member shares is read from their own file when it
//! is asked for, so leaving stops it at once.

use aw_models::Timestamp;
use rusqlite::{params, OptionalExtension};

use crate::user_index::drop_empty_groups;
use crate::{Result, UserIndex};

/// A member of a group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupMember {
    /// The person.
    pub user: String,
    /// When they joined.
    pub joined: Timestamp,
    /// Whether they share their apps beside their categories.
    pub share_apps: bool,
}

/// A group and its members, by name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Group {
    /// Its name.
    pub name: String,
    /// When it was made.
    pub created: Timestamp,
    /// Its members, by name.
    pub members: Vec<GroupMember>,
}

/// An invitation to a group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invitation {
    /// The group.
    pub group: String,
    /// Who is invited.
    pub user: String,
    /// The member who invited them.
    pub invited_by: String,
    /// When.
    pub at: Timestamp,
}

/// What joining did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Joined {
    /// Joined, the invitation used up.
    Joined,
    /// A member already: what they share is now as asked.
    Changed,
    /// No invitation to that group (or no such group).
    NotInvited,
}

impl UserIndex {
    /// Makes group `name` with `user` as its first member; false, and
    /// nothing written, when the name is taken.
    pub fn create_group(
        &self,
        name: &str,
        user: &str,
        share_apps: bool,
        now: Timestamp,
    ) -> Result<bool> {
        let mut conn = self.conn();
        let transaction = conn.transaction()?;
        let made = transaction.execute(
            "INSERT OR IGNORE INTO groups (name, created) VALUES (?1, ?2)",
            params![name, now.nanos()],
        )?;
        if made == 1 {
            transaction.execute(
                "INSERT INTO group_members (grp, user, joined, share_apps) VALUES (?1, ?2, ?3, ?4)",
                params![name, user, now.nanos(), share_apps],
            )?;
        }
        transaction.commit()?;
        Ok(made == 1)
    }

    /// Group `name` with its members, if it exists.
    pub fn group(&self, name: &str) -> Result<Option<Group>> {
        let conn = self.conn();
        let created: Option<i64> = conn
            .query_row(
                "SELECT created FROM groups WHERE name = ?1",
                [name],
                |row| row.get(0),
            )
            .optional()?;
        let Some(created) = created else {
            return Ok(None);
        };
        let mut statement = conn.prepare_cached(
            "SELECT user, joined, share_apps FROM group_members WHERE grp = ?1 ORDER BY user",
        )?;
        let members = statement
            .query_map([name], |row| {
                Ok(GroupMember {
                    user: row.get(0)?,
                    joined: Timestamp::from_nanos(row.get(1)?),
                    share_apps: row.get(2)?,
                })
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(Some(Group {
            name: name.to_string(),
            created: Timestamp::from_nanos(created),
            members,
        }))
    }

    /// The groups `user` is a member of, by name.
    pub fn groups_of(&self, user: &str) -> Result<Vec<Group>> {
        let names: Vec<String> = {
            let conn = self.conn();
            let mut statement =
                conn.prepare_cached("SELECT grp FROM group_members WHERE user = ?1 ORDER BY grp")?;
            let names = statement
                .query_map([user], |row| row.get(0))?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            names
        };
        let mut groups = Vec::new();
        for name in names {
            groups.extend(self.group(&name)?);
        }
        Ok(groups)
    }

    /// Invites `user` into `group` on behalf of the member `by`; false
    /// when they were invited already.
    pub fn invite(&self, group: &str, user: &str, by: &str, now: Timestamp) -> Result<bool> {
        let conn = self.conn();
        let made = conn.execute(
            "INSERT OR IGNORE INTO group_invitations (grp, user, invited_by, at) \
             VALUES (?1, ?2, ?3, ?4)",
            params![group, user, by, now.nanos()],
        )?;
        Ok(made == 1)
    }

    /// The invitations to `user`, by group.
    pub fn invitations_of(&self, user: &str) -> Result<Vec<Invitation>> {
        let conn = self.conn();
        let mut statement = conn.prepare_cached(
            "SELECT grp, invited_by, at FROM group_invitations WHERE user = ?1 ORDER BY grp",
        )?;
        let invitations = statement
            .query_map([user], |row| {
                Ok(Invitation {
                    group: row.get(0)?,
                    user: user.to_string(),
                    invited_by: row.get(1)?,
                    at: Timestamp::from_nanos(row.get(2)?),
                })
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(invitations)
    }

    /// `user` joins `group` (their invitation used up), sharing their
    /// apps or not; a member changes what they share.
    pub fn join(
        &self,
        group: &str,
        user: &str,
        share_apps: bool,
        now: Timestamp,
    ) -> Result<Joined> {
        let mut conn = self.conn();
        let transaction = conn.transaction()?;
        let changed = transaction.execute(
            "UPDATE group_members SET share_apps = ?3 WHERE grp = ?1 AND user = ?2",
            params![group, user, share_apps],
        )?;
        if changed == 1 {
            transaction.commit()?;
            return Ok(Joined::Changed);
        }
        let invited = transaction.execute(
            "DELETE FROM group_invitations WHERE grp = ?1 AND user = ?2",
            params![group, user],
        )?;
        if invited == 0 {
            return Ok(Joined::NotInvited);
        }
        transaction.execute(
            "INSERT INTO group_members (grp, user, joined, share_apps) VALUES (?1, ?2, ?3, ?4)",
            params![group, user, now.nanos(), share_apps],
        )?;
        transaction.commit()?;
        Ok(Joined::Joined)
    }

    /// `user` leaves `group` (or declines its invitation); false when
    /// they were neither member nor invited. A group left without
    /// members is removed.
    pub fn leave(&self, group: &str, user: &str) -> Result<bool> {
        let mut conn = self.conn();
        let transaction = conn.transaction()?;
        let left = transaction.execute(
            "DELETE FROM group_members WHERE grp = ?1 AND user = ?2",
            params![group, user],
        )? + transaction.execute(
            "DELETE FROM group_invitations WHERE grp = ?1 AND user = ?2",
            params![group, user],
        )?;
        drop_empty_groups(&transaction)?;
        transaction.commit()?;
        Ok(left > 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn members_join_only_when_invited_and_an_empty_group_goes() {
        let folder = tempfile::tempdir().unwrap();
        let index = UserIndex::open(folder.path().join("index.db")).unwrap();
        let now = Timestamp::from_nanos(1_000);
        for name in ["alice", "bob", "carol"] {
            index.add_user(name, now).unwrap();
        }
        assert!(index.create_group("family", "alice", true, now).unwrap());
        assert!(!index.create_group("family", "bob", false, now).unwrap());
        assert_eq!(
            index.join("family", "bob", false, now).unwrap(),
            Joined::NotInvited
        );
        assert!(index.invite("family", "bob", "alice", now).unwrap());
        assert!(!index.invite("family", "bob", "alice", now).unwrap());
        assert_eq!(index.invitations_of("bob").unwrap()[0].invited_by, "alice");
        assert!(index.groups_of("bob").unwrap().is_empty(), "invited only");
        assert_eq!(
            index.join("family", "bob", false, now).unwrap(),
            Joined::Joined
        );
        assert!(index.invitations_of("bob").unwrap().is_empty());
        let group = index.group("family").unwrap().unwrap();
        let members: Vec<(&str, bool)> = group
            .members
            .iter()
            .map(|member| (member.user.as_str(), member.share_apps))
            .collect();
        assert_eq!(members, [("alice", true), ("bob", false)]);
        assert_eq!(
            index.join("family", "bob", true, now).unwrap(),
            Joined::Changed
        );
        assert!(index.leave("family", "bob").unwrap());
        assert!(!index.leave("family", "bob").unwrap());
        // A removed person's memberships go; the empty group goes too.
        index.invite("family", "carol", "alice", now).unwrap();
        assert!(index.remove_user("alice").unwrap());
        assert_eq!(index.group("family").unwrap(), None);
        assert!(index.invitations_of("carol").unwrap().is_empty());
    }
}
