//! Sharing, only when a person chooses it: groups that people make, are
//! invited to and join with their own credential, and leave. The rules
//! are here; the rows are the index's (`aw_datastore::Group`). A member
//! shares their per-day category totals, and their apps' totals only if
//! they said so; titles and URLs never.

use aw_datastore::{Group, Invitation, Joined};
use aw_models::Timestamp;

use crate::{check_name, Users, UsersError};

impl Users {
    /// `user` makes group `name` and is its first member.
    pub fn create_group(
        &self,
        user: &str,
        name: &str,
        share_apps: bool,
    ) -> Result<Group, UsersError> {
        check_name(name)?;
        if !self
            .index()
            .create_group(name, user, share_apps, Timestamp::now())?
        {
            return Err(UsersError::GroupExists(name.to_string()));
        }
        self.member_group(user, name)
    }

    /// The groups `user` is a member of, and the invitations to them.
    pub fn groups_of(&self, user: &str) -> Result<(Vec<Group>, Vec<Invitation>), UsersError> {
        Ok((
            self.index().groups_of(user)?,
            self.index().invitations_of(user)?,
        ))
    }

    /// Group `name` if `user` is a member; to anyone else it does not
    /// exist.
    pub fn member_group(&self, user: &str, name: &str) -> Result<Group, UsersError> {
        self.index()
            .group(name)?
            .filter(|group| group.members.iter().any(|member| member.user == user))
            .ok_or_else(|| UsersError::NoGroup(name.to_string()))
    }

    /// The member `by` invites `user` into `group`.
    pub fn invite(&self, by: &str, group: &str, user: &str) -> Result<(), UsersError> {
        let found = self.member_group(by, group)?;
        if self.index().user(user)?.is_none() {
            return Err(UsersError::Unknown(user.to_string()));
        }
        if found.members.iter().any(|member| member.user == user) {
            return Err(UsersError::AlreadyMember {
                user: user.to_string(),
                group: group.to_string(),
            });
        }
        self.index().invite(group, user, by, Timestamp::now())?;
        Ok(())
    }

    /// `user` joins `group`, which invited them (or, a member, changes
    /// whether they share their apps).
    pub fn join(&self, user: &str, group: &str, share_apps: bool) -> Result<Group, UsersError> {
        match self
            .index()
            .join(group, user, share_apps, Timestamp::now())?
        {
            Joined::Joined | Joined::Changed => self.member_group(user, group),
            Joined::NotInvited => Err(UsersError::NoGroup(group.to_string())),
        }
    }

    /// `user` leaves `group` (or declines its invitation): their sharing
    /// stops at once.
    pub fn leave(&self, user: &str, group: &str) -> Result<(), UsersError> {
        if self.index().leave(group, user)? {
            Ok(())
        } else {
            Err(UsersError::NoGroup(group.to_string()))
        }
    }
}
