//! The hosts as `GET /api/0/hosts` lists them, and the names a token's
//! hosts cover.

use std::collections::{BTreeMap, BTreeSet};

use aw_datastore::Datastore;
use aw_models::{is_own_bucket, HostInfo};

use crate::{check_host_name, HostsError, Result};

/// Makes `alias` a name of `host`, whose buckets it then reaches; refused
/// when `host` has no buckets or `alias` has its own (merge those).
pub fn set_alias(store: &Datastore, alias: &str, host: &str) -> Result<()> {
    check_host_name(alias)?;
    check_host_name(host)?;
    if alias == host {
        return Err(HostsError::SameHost(alias.to_string()));
    }
    let buckets = store.buckets().wait()?;
    let has = |name: &str| {
        buckets
            .values()
            .any(|bucket| bucket.hostname == name && is_own_bucket(&bucket.id))
    };
    if has(alias) {
        return Err(HostsError::HasBuckets(alias.to_string()));
    }
    if !has(host) {
        return Err(HostsError::UnknownHost(host.to_string()));
    }
    Ok(store.set_host_alias(alias, Some(host))?)
}

/// Ends the alias `alias`.
pub fn unset_alias(store: &Datastore, alias: &str) -> Result<()> {
    if !store.host_aliases()?.contains_key(alias) {
        return Err(HostsError::UnknownAlias(alias.to_string()));
    }
    Ok(store.set_host_alias(alias, None)?)
}

/// Every host of this device's buckets, with its aliases.
pub fn hosts(store: &Datastore) -> Result<Vec<HostInfo>> {
    let buckets = store.buckets().wait()?;
    let aliases = store.host_aliases()?;
    let mut hosts: BTreeMap<String, HostInfo> = BTreeMap::new();
    for bucket in buckets.values().filter(|bucket| is_own_bucket(&bucket.id)) {
        let host = hosts
            .entry(bucket.hostname.clone())
            .or_insert_with(|| HostInfo {
                host: bucket.hostname.clone(),
                ..HostInfo::default()
            });
        host.buckets.push(bucket.id.clone());
        host.events += store.count_events(&bucket.id, None, None).wait()?;
        if let Some(start) = bucket.metadata.start {
            host.first = Some(host.first.map_or(start, |first| first.min(start)));
        }
        if let Some(end) = bucket.metadata.end {
            host.last = Some(host.last.map_or(end, |last| last.max(end)));
        }
        if let Some(device) = bucket.data.get("device_id").and_then(|id| id.as_str()) {
            if !host.device_ids.iter().any(|known| known == device) {
                host.device_ids.push(device.to_string());
            }
        }
    }
    for (alias, host) in aliases {
        if let Some(host) = hosts.get_mut(&host) {
            host.aliases.push(alias);
        }
    }
    Ok(hosts.into_values().collect())
}

/// Every name `hosts` cover: each host, the host it is an alias of, and
/// that host's other aliases (a token made for a name before a rename
/// keeps reaching the renamed buckets).
pub fn covered_hosts(hosts: &[String], aliases: &BTreeMap<String, String>) -> Vec<String> {
    let canonical = |name: &str| {
        aliases
            .get(name)
            .cloned()
            .unwrap_or_else(|| name.to_string())
    };
    let targets: BTreeSet<String> = hosts.iter().map(|host| canonical(host)).collect();
    let mut covered: BTreeSet<String> = hosts.iter().cloned().collect();
    covered.extend(targets.iter().cloned());
    covered.extend(
        aliases
            .iter()
            .filter(|(_, host)| targets.contains(*host))
            .map(|(alias, _)| alias.clone()),
    );
    covered.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_host_covers_its_aliases_and_an_alias_its_host() {
        let aliases = BTreeMap::from([
            ("mac.local".to_string(), "mac".to_string()),
            ("mac.fritz.box".to_string(), "mac".to_string()),
        ]);
        let all = vec!["mac", "mac.fritz.box", "mac.local"];
        assert_eq!(covered_hosts(&["mac".into()], &aliases), all);
        assert_eq!(covered_hosts(&["mac.local".into()], &aliases), all);
        assert_eq!(covered_hosts(&["pc".into()], &aliases), vec!["pc"]);
    }
}
