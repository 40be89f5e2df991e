//! Which bucket becomes, or goes into, which: decided from the bucket
//! list alone, before anything is written.

use std::collections::{BTreeMap, BTreeSet};

use aw_models::{check_bucket_id, is_own_bucket, Bucket, BucketAction};
use serde::{Deserialize, Serialize};

use crate::{HostsError, Result};

/// A rename or a merge.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Operation {
    /// Every bucket of a host given a new host name.
    Rename,
    /// Every bucket of a host into another host's.
    Merge,
}

impl Operation {
    /// Its name in reports.
    pub fn name(self) -> &'static str {
        match self {
            Operation::Rename => "rename",
            Operation::Merge => "merge",
        }
    }
}

/// One bucket of the plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Step {
    /// The bucket's id now.
    pub from: String,
    /// What it becomes or goes into.
    pub to: String,
    /// Renamed or merged.
    pub action: BucketAction,
}

/// A planned change, as the journal stores it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Plan {
    /// Which change.
    pub operation: Operation,
    /// The host renamed or merged away.
    pub from: String,
    /// The new name, or the host merged into.
    pub to: String,
    /// Every own bucket of `from`, by id.
    pub steps: Vec<Step>,
}

/// Checks a host name a caller gives.
pub fn check_host_name(name: &str) -> Result<()> {
    let usable = !name.trim().is_empty()
        && name.len() <= 255
        && !name.contains('/')
        && !name.chars().any(char::is_control);
    if usable {
        Ok(())
    } else {
        Err(HostsError::InvalidName(name.to_string()))
    }
}

/// The id a bucket of host `old` takes under host `new`: the watchers'
/// `<watcher>_<host>` ids end in the new name; any other keeps its id.
pub fn renamed_id(bucket_id: &str, old: &str, new: &str) -> String {
    match bucket_id
        .strip_suffix(old)
        .and_then(|stem| stem.strip_suffix('_'))
    {
        Some(stem) => format!("{stem}_{new}"),
        None => bucket_id.to_string(),
    }
}

/// This device's buckets of `host` (pulled copies follow their origin).
fn buckets_of<'a>(buckets: &'a BTreeMap<String, Bucket>, host: &str) -> Vec<&'a Bucket> {
    buckets
        .values()
        .filter(|bucket| bucket.hostname == host && is_own_bucket(&bucket.id))
        .collect()
}

fn check_pair(from: &str, to: &str) -> Result<()> {
    check_host_name(from)?;
    check_host_name(to)?;
    if from == to {
        return Err(HostsError::SameHost(from.to_string()));
    }
    Ok(())
}

/// Every bucket of `old` renamed to host `new`; refused when `new` is a
/// host already or an id would collide.
pub fn plan_rename(buckets: &BTreeMap<String, Bucket>, old: &str, new: &str) -> Result<Plan> {
    check_pair(old, new)?;
    let moving = buckets_of(buckets, old);
    if moving.is_empty() {
        return Err(HostsError::UnknownHost(old.to_string()));
    }
    if !buckets_of(buckets, new).is_empty() {
        return Err(HostsError::HostExists(new.to_string()));
    }
    let mut steps = Vec::new();
    for bucket in moving {
        let to = renamed_id(&bucket.id, old, new);
        check_bucket_id(&to).map_err(|_| HostsError::InvalidName(new.to_string()))?;
        if let Some(taken) = buckets.get(&to).filter(|taken| taken.id != bucket.id) {
            return Err(HostsError::Collision {
                bucket: bucket.id.clone(),
                taken: to,
                kind: taken.kind.clone(),
            });
        }
        steps.push(Step {
            from: bucket.id.clone(),
            to,
            action: BucketAction::Rename,
        });
    }
    Ok(Plan {
        operation: Operation::Rename,
        from: old.to_string(),
        to: new.to_string(),
        steps,
    })
}

/// Every bucket of `from` into `into`'s bucket of the same type and
/// client (the one of the renamed id if there is one, else the oldest),
/// or renamed to `into` when it has none.
pub fn plan_merge(buckets: &BTreeMap<String, Bucket>, from: &str, into: &str) -> Result<Plan> {
    check_pair(from, into)?;
    let moving = buckets_of(buckets, from);
    if moving.is_empty() {
        return Err(HostsError::UnknownHost(from.to_string()));
    }
    let receiving = buckets_of(buckets, into);
    if receiving.is_empty() {
        return Err(HostsError::UnknownHost(into.to_string()));
    }
    let mut steps = Vec::new();
    let mut new_ids = BTreeSet::new();
    for bucket in moving {
        let to = renamed_id(&bucket.id, from, into);
        let same_kind =
            |other: &&&Bucket| other.kind == bucket.kind && other.client == bucket.client;
        let counterpart = receiving
            .iter()
            .filter(same_kind)
            .find(|other| other.id == to)
            .or_else(|| {
                receiving
                    .iter()
                    .filter(same_kind)
                    .min_by_key(|other| (other.created, other.id.clone()))
            });
        if let Some(counterpart) = counterpart {
            steps.push(Step {
                from: bucket.id.clone(),
                to: counterpart.id.clone(),
                action: BucketAction::Merge,
            });
            continue;
        }
        check_bucket_id(&to).map_err(|_| HostsError::InvalidName(into.to_string()))?;
        let taken = buckets.get(&to).filter(|taken| taken.id != bucket.id);
        if let Some(taken) = taken {
            return Err(HostsError::Collision {
                bucket: bucket.id.clone(),
                taken: to,
                kind: taken.kind.clone(),
            });
        }
        if !new_ids.insert(to.clone()) {
            return Err(HostsError::Collision {
                bucket: bucket.id.clone(),
                taken: to,
                kind: bucket.kind.clone(),
            });
        }
        steps.push(Step {
            from: bucket.id.clone(),
            to,
            action: BucketAction::Rename,
        });
    }
    Ok(Plan {
        operation: Operation::Merge,
        from: from.to_string(),
        to: into.to_string(),
        steps,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use aw_models::BucketMetadata;

    fn bucket(id: &str, kind: &str, host: &str) -> (String, Bucket) {
        (
            id.to_string(),
            Bucket {
                id: id.to_string(),
                kind: kind.to_string(),
                client: format!("client-{kind}"),
                hostname: host.to_string(),
                created: None,
                data: Default::default(),
                metadata: BucketMetadata::default(),
                events: None,
                last_updated: None,
            },
        )
    }

    fn ids(plan: &Plan) -> Vec<(&str, &str, BucketAction)> {
        plan.steps
            .iter()
            .map(|step| (step.from.as_str(), step.to.as_str(), step.action))
            .collect()
    }

    #[test]
    fn a_rename_follows_the_watchers_ids_and_keeps_others() {
        let buckets = BTreeMap::from([
            bucket("aw-watcher-window_mac.local", "currentwindow", "mac.local"),
            bucket("aw-watcher-web-firefox", "web.tab.current", "mac.local"),
            bucket("aw-watcher-window_other", "currentwindow", "other"),
            bucket(
                "aw-watcher-window_mac.local-synced-from-x",
                "currentwindow",
                "mac.local",
            ),
        ]);
        let plan = plan_rename(&buckets, "mac.local", "mac").unwrap();
        assert_eq!(
            ids(&plan),
            vec![
                (
                    "aw-watcher-web-firefox",
                    "aw-watcher-web-firefox",
                    BucketAction::Rename
                ),
                (
                    "aw-watcher-window_mac.local",
                    "aw-watcher-window_mac",
                    BucketAction::Rename
                ),
            ]
        );
        assert!(matches!(
            plan_rename(&buckets, "mac.local", "other"),
            Err(HostsError::HostExists(_))
        ));
        assert!(matches!(
            plan_rename(&buckets, "nope", "x"),
            Err(HostsError::UnknownHost(_))
        ));
        assert!(matches!(
            plan_rename(&buckets, "mac.local", "mac.local"),
            Err(HostsError::SameHost(_))
        ));
        assert!(matches!(
            plan_rename(&buckets, "mac.local", "a/b"),
            Err(HostsError::InvalidName(_))
        ));
        assert!(matches!(
            plan_rename(&buckets, "mac.local", " "),
            Err(HostsError::InvalidName(_))
        ));
    }

    #[test]
    fn a_rename_onto_a_taken_id_is_refused() {
        let buckets = BTreeMap::from([
            bucket("w_a", "currentwindow", "a"),
            bucket("w_b", "currentwindow", "stray"),
        ]);
        assert!(matches!(
            plan_rename(&buckets, "a", "b"),
            Err(HostsError::Collision { taken, .. }) if taken == "w_b"
        ));
    }

    #[test]
    fn a_merge_pairs_buckets_by_type_and_client() {
        let buckets = BTreeMap::from([
            bucket("aw-watcher-window_a", "currentwindow", "a"),
            bucket("aw-watcher-afk_a", "afkstatus", "a"),
            bucket("aw-watcher-input_a", "os.hid.input", "a"),
            bucket("aw-watcher-window_b", "currentwindow", "b"),
            bucket("aw-watcher-afk-2_b", "afkstatus", "b"),
        ]);
        let plan = plan_merge(&buckets, "a", "b").unwrap();
        assert_eq!(
            ids(&plan),
            vec![
                (
                    "aw-watcher-afk_a",
                    "aw-watcher-afk-2_b",
                    BucketAction::Merge
                ),
                (
                    "aw-watcher-input_a",
                    "aw-watcher-input_b",
                    BucketAction::Rename
                ),
                (
                    "aw-watcher-window_a",
                    "aw-watcher-window_b",
                    BucketAction::Merge
                ),
            ]
        );
        assert!(
            matches!(plan_merge(&buckets, "a", "c"), Err(HostsError::UnknownHost(h)) if h == "c")
        );
        assert!(matches!(
            plan_merge(&buckets, "a", "a"),
            Err(HostsError::SameHost(_))
        ));
    }

    #[test]
    fn a_merge_refuses_an_id_of_another_type() {
        let buckets = BTreeMap::from([
            bucket("w_a", "currentwindow", "a"),
            bucket("w_b", "afkstatus", "b"),
        ]);
        assert!(matches!(
            plan_merge(&buckets, "a", "b"),
            Err(HostsError::Collision { taken, kind, .. }) if taken == "w_b" && kind == "afkstatus"
        ));
    }
}
