//! Forwarding to a hub, both sides in one process: a device's
//! datastore and a hub's, each on a temp file, joined by a link that
//! calls the hub's side directly (the server's link is HTTP). The hub
//! ends equal to the device event for event after new events, heartbeats,
//! deletes, range deletes, redactions, insert-with-id replacements, a
//! deleted and a re-made bucket; repeated chunks and passes cut short
//! between chunks change nothing; another device's bucket of the same id
//! gets the folder-sync name.

#[path = "../../aw-datastore/tests/common/mod.rs"]
mod common;

use std::cell::Cell;

use aw_datastore::{Datastore, PRIVACY_FILTERS_KEY};
use aw_folder_sync::forward::{self, ForwardReport, HubLink};
use aw_folder_sync::{FolderSyncError, SyncFilter};
use aw_models::{Duration, Event, ForwardChunk, ForwardState};
use common::{bucket, event, TempDb};
use serde_json::json;

const WINDOW: &str = "aw-watcher-window_laptop";

/// The hub's side called in process; `repeat` sends every chunk twice,
/// `fail_after` fails every chunk after that many, `hosts` are those the
/// device's token may write (`None`: any), refused as the hub refuses a
/// bucket.
struct Direct<'h> {
    hub: &'h Datastore,
    device: &'static str,
    repeat: bool,
    fail_after: Option<usize>,
    sent: Cell<usize>,
    hosts: Option<Vec<&'static str>>,
    /// Whether the hub renames in place (an older one does not).
    renames: bool,
}

impl<'h> Direct<'h> {
    fn new(hub: &'h Datastore, device: &'static str) -> Direct<'h> {
        Direct {
            hub,
            device,
            repeat: false,
            fail_after: None,
            sent: Cell::new(0),
            hosts: None,
            renames: true,
        }
    }

    /// Refuses a bucket of a host the token does not have, as the hub's
    /// endpoint does.
    fn may_write(&self, host: &str) -> aw_folder_sync::Result<()> {
        match &self.hosts {
            Some(hosts) if !hosts.contains(&host) => Err(FolderSyncError::HubRefusedBucket {
                message: format!("This token may not write buckets of host '{host}'"),
            }),
            _ => Ok(()),
        }
    }
}

impl HubLink for Direct<'_> {
    fn states(&self) -> aw_folder_sync::Result<Vec<ForwardState>> {
        forward::states(self.hub, self.device)
    }

    fn send(&self, chunk: &ForwardChunk) -> aw_folder_sync::Result<ForwardState> {
        if self
            .fail_after
            .is_some_and(|after| self.sent.get() >= after)
        {
            return Err(FolderSyncError::Hub {
                status: None,
                message: "the hub is down".to_string(),
            });
        }
        self.may_write(&chunk.bucket.hostname)?;
        let (into, _) = forward::state_for(self.hub, self.device, &chunk.bucket)?;
        if let Ok(there) = self.hub.bucket(&into.target).wait() {
            self.may_write(&there.hostname)?;
        }
        self.sent.set(self.sent.get() + 1);
        let state = forward::receive(self.hub, self.device, chunk.clone())?;
        if self.repeat {
            let again = forward::receive(self.hub, self.device, chunk.clone())?;
            let unstamped = |state: &ForwardState| ForwardState {
                received: None,
                ..state.clone()
            };
            assert_eq!(
                unstamped(&again),
                unstamped(&state),
                "a repeated chunk changes nothing but when it came"
            );
        }
        Ok(state)
    }

    fn forget(&self, bucket_id: &str) -> aw_folder_sync::Result<()> {
        if let Some(state) = forward::state(self.hub, self.device, bucket_id)? {
            if let Ok(there) = self.hub.bucket(&state.target).wait() {
                self.may_write(&there.hostname)?;
            }
        }
        forward::forget(self.hub, self.device, bucket_id)?;
        Ok(())
    }

    fn rename(
        &self,
        from: &str,
        bucket: &aw_models::Bucket,
    ) -> aw_folder_sync::Result<Option<ForwardState>> {
        if !self.renames {
            return Ok(None);
        }
        forward::rename(self.hub, self.device, from, bucket)
    }
}

fn pass(device: &Datastore, link: &Direct<'_>) -> ForwardReport {
    pass_as(device, link, "laptop")
}

/// A pass of a device whose host is `own_host`.
fn pass_as(device: &Datastore, link: &Direct<'_>, own_host: &str) -> ForwardReport {
    forward::forward(device, link, &SyncFilter::default(), own_host, &mut |_| {}).unwrap()
}

fn laptop_bucket() -> aw_models::Bucket {
    let mut bucket = bucket(WINDOW);
    bucket.hostname = "laptop".to_string();
    bucket
}

fn window(start: i64, duration: i64, title: &str) -> Event {
    event(start, duration, json!({"app": "firefox", "title": title}))
}

/// Every event of the bucket as (start ns, end ns, data), sorted (events
/// of equal starts by end and data: ids differ between the two).
fn history(store: &Datastore, bucket_id: &str) -> Vec<(i64, i64, String)> {
    let mut events: Vec<(i64, i64, String)> = common::oldest_first(store, bucket_id)
        .iter()
        .map(|e| {
            (
                e.timestamp.nanos(),
                e.end().nanos(),
                serde_json::to_string(&e.data).unwrap(),
            )
        })
        .collect();
    events.sort();
    events
}

fn assert_equal(device: &Datastore, hub: &Datastore, bucket_id: &str, target: &str) {
    let (there, here) = (history(hub, target), history(device, bucket_id));
    if there != here {
        let at = there
            .iter()
            .zip(&here)
            .position(|(a, b)| a != b)
            .unwrap_or(there.len().min(here.len()));
        panic!(
            "the hub has {} events, the device {}; first difference at {at}: hub {:?}, device {:?}",
            there.len(),
            here.len(),
            there.get(at),
            here.get(at)
        );
    }
}

#[test]
fn the_hub_ends_equal_to_the_device_through_every_kind_of_change() {
    let (device_db, hub_db) = (TempDb::new(), TempDb::new());
    let (device, hub) = (device_db.open(), hub_db.open());
    device.create_bucket(laptop_bucket()).unwrap();
    let mut link = Direct::new(&hub, "dev-a");
    link.repeat = true;
    // A backlog of several chunks, then heartbeats that extend the newest.
    let backlog: Vec<Event> = (0..4_500)
        .map(|i| match i {
            2_500 => window(i * 10, 5, "my banking"),
            _ => window(i * 10, 5, &format!("title {}", i % 37)),
        })
        .collect();
    device.insert_events(WINDOW, backlog).unwrap();
    let report = pass(&device, &link);
    assert_eq!(report.sent, 4_500);
    assert_equal(&device, &hub, WINDOW, WINDOW);
    let pulse = Duration::from_secs(60);
    for i in 0..5 {
        device
            .heartbeat(WINDOW, window(50_000 + i, 0, "writing"), pulse)
            .unwrap();
        pass(&device, &link);
    }
    assert_equal(&device, &hub, WINDOW, WINDOW);
    // The hub keeps the count with the cursor, so an idle bucket is not
    // walked by id again.
    let state = &forward::states(&hub, "dev-a").unwrap()[0];
    assert_eq!(
        state.count,
        Some(device.count_events(WINDOW, None, None).wait().unwrap())
    );
    // Nothing new: a pass sends nothing.
    let before = link.sent.get();
    let idle = pass(&device, &link);
    assert_eq!((idle.sent, idle.chunks, link.sent.get()), (0, 0, before));

    // Deletes, range deletes, redactions, a replacement by id.
    let stored = common::oldest_first(&device, WINDOW);
    device.delete_event(WINDOW, stored[10].id.unwrap()).unwrap();
    device
        .delete_range(WINDOW, common::at(1_002), common::at(2_003), &mut |_| {})
        .unwrap();
    device
        .set_setting(
            PRIVACY_FILTERS_KEY,
            json!([{"enabled": true, "bucket_prefix": "aw-watcher-window", "field": "title",
                    "pattern": "(?i).*banking.*", "action": "redact", "replacement": "REDACTED"}]),
        )
        .unwrap();
    device.apply_privacy_rules(&mut |_| {}).unwrap();
    let mut longer = stored[4_000].clone();
    longer.duration = Duration::from_secs(7);
    longer.data.insert("title".to_string(), json!("edited"));
    device.insert_events(WINDOW, vec![longer]).unwrap();
    let report = pass(&device, &link);
    assert!(report.compared > 0);
    assert!(
        report.compared < 4_000,
        "only the changed spans are compared: {report:?}"
    );
    assert_equal(&device, &hub, WINDOW, WINDOW);

    // An event moved from the start of the history to its end: one span
    // over nearly all of it, compared in several pages.
    let mut moved = common::oldest_first(&device, WINDOW)[0].clone();
    moved.timestamp = common::at(44_990);
    device.insert_events(WINDOW, vec![moved]).unwrap();
    let report = pass(&device, &link);
    assert!(report.compared > 4_000, "{report:?}");
    assert_equal(&device, &hub, WINDOW, WINDOW);

    // Retention on the device.
    device.expire(common::at(30_000), &mut |_| {}).unwrap();
    pass(&device, &link);
    assert_equal(&device, &hub, WINDOW, WINDOW);

    // The bucket deleted and made again: compared whole.
    device.delete_bucket(WINDOW).unwrap();
    let report = pass(&device, &link);
    assert_eq!(report.forgotten, 1);
    assert!(hub.bucket(WINDOW).wait().is_err());
    device.create_bucket(laptop_bucket()).unwrap();
    device
        .insert_events(WINDOW, vec![window(90_000, 5, "again")])
        .unwrap();
    pass(&device, &link);
    assert_equal(&device, &hub, WINDOW, WINDOW);
}

#[test]
fn a_pass_cut_short_between_chunks_is_finished_by_the_next() {
    let (device_db, hub_db) = (TempDb::new(), TempDb::new());
    let (device, hub) = (device_db.open(), hub_db.open());
    device.create_bucket(laptop_bucket()).unwrap();
    let backlog: Vec<Event> = (0..9_000)
        .map(|i| window(i * 10, 5, &format!("t{}", i % 11)))
        .collect();
    device.insert_events(WINDOW, backlog).unwrap();
    let mut link = Direct::new(&hub, "dev-a");
    link.fail_after = Some(2);
    let failed = forward::forward(
        &device,
        &link,
        &SyncFilter::default(),
        "laptop",
        &mut |_| {},
    );
    assert!(matches!(failed, Err(FolderSyncError::Hub { .. })));
    assert!(hub.count_events(WINDOW, None, None).wait().unwrap() > 0);
    // History changes while the hub is away.
    device
        .delete_range(WINDOW, common::at(100), common::at(60_000), &mut |_| {})
        .unwrap();
    let link = Direct::new(&hub, "dev-a");
    pass(&device, &link);
    assert_equal(&device, &hub, WINDOW, WINDOW);
}

#[test]
fn another_devices_bucket_of_the_same_id_gets_the_folder_sync_name() {
    let (a_db, b_db, hub_db) = (TempDb::new(), TempDb::new(), TempDb::new());
    let (a, b, hub) = (a_db.open(), b_db.open(), hub_db.open());
    for store in [&a, &b] {
        store.create_bucket(laptop_bucket()).unwrap();
    }
    a.insert_events(WINDOW, vec![window(0, 5, "a")]).unwrap();
    b.insert_events(WINDOW, vec![window(10, 5, "b")]).unwrap();
    pass(&a, &Direct::new(&hub, "dev-a"));
    pass(&b, &Direct::new(&hub, "dev-b"));
    assert_equal(&a, &hub, WINDOW, WINDOW);
    let renamed = format!("{WINDOW}-synced-from-laptop");
    assert_equal(&b, &hub, WINDOW, &renamed);
    // Each device's state is its own.
    assert_eq!(forward::states(&hub, "dev-b").unwrap()[0].target, renamed);
}

#[test]
fn forwarded_events_pass_the_hubs_privacy_rules_and_windows_keep_them() {
    let (device_db, hub_db) = (TempDb::new(), TempDb::new());
    let (device, hub) = (device_db.open(), hub_db.open());
    hub.set_setting(
        PRIVACY_FILTERS_KEY,
        json!([
            {"enabled": true, "bucket_prefix": "aw-watcher-window", "field": "title",
             "pattern": "(?i).*bank.*", "action": "redact", "replacement": "[private]"},
            {"enabled": true, "bucket_prefix": "aw-watcher-window", "field": "title",
             "pattern": "secret", "action": "drop"}
        ]),
    )
    .unwrap();
    device.create_bucket(laptop_bucket()).unwrap();
    device
        .insert_events(
            WINDOW,
            vec![
                window(0, 5, "my bank"),
                window(10, 5, "secret plans"),
                window(20, 5, "notes"),
            ],
        )
        .unwrap();
    let link = Direct::new(&hub, "dev-a");
    pass(&device, &link);
    let titles = |store: &Datastore| -> Vec<String> {
        common::oldest_first(store, WINDOW)
            .iter()
            .map(|e| e.data["title"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(titles(&hub), ["[private]", "notes"]);
    // A change on the device over the whole span: the window compares
    // what the rules make of the device's events with what the hub keeps.
    let first = common::oldest_first(&device, WINDOW)[0].clone();
    device.delete_event(WINDOW, first.id.unwrap()).unwrap();
    let mut moved = common::oldest_first(&device, WINDOW)[1].clone();
    moved.duration = Duration::from_secs(6);
    device.insert_events(WINDOW, vec![moved]).unwrap();
    pass(&device, &link);
    assert_eq!(titles(&hub), ["notes"]);
    assert_eq!(titles(&device), ["secret plans", "notes"]);
    assert_eq!(
        common::oldest_first(&hub, WINDOW)[0].duration,
        Duration::from_secs(6)
    );
}

const BROWSER: &str = "aw-watcher-web-chrome";

/// A browser bucket without a host of its own, as aw-watcher-web made
/// them before it sent `!local`.
fn hostless_browser() -> aw_models::Bucket {
    let mut bucket = bucket(BROWSER);
    bucket.kind = "web.tab.current".to_string();
    bucket.hostname = "unknown".to_string();
    bucket
}

fn tab(start: i64, url: &str) -> Event {
    event(start, 5, json!({"url": url, "title": url}))
}

#[test]
fn a_bucket_without_a_host_goes_as_its_devices_and_stays_apart_from_others() {
    let (a_db, b_db, hub_db) = (TempDb::new(), TempDb::new(), TempDb::new());
    let (a, b, hub) = (a_db.open(), b_db.open(), hub_db.open());
    for (store, url) in [(&a, "https://a.example/"), (&b, "https://b.example/")] {
        store.create_bucket(hostless_browser()).unwrap();
        store
            .insert_events(BROWSER, vec![tab(0, url), tab(10, url)])
            .unwrap();
    }
    // Each token covers its device's host only: both buckets go through.
    let mut to_a = Direct::new(&hub, "dev-a");
    to_a.hosts = Some(vec!["laptop"]);
    let mut to_b = Direct::new(&hub, "dev-b");
    to_b.hosts = Some(vec!["desktop"]);
    assert!(pass_as(&a, &to_a, "laptop").skipped.is_empty());
    assert!(pass_as(&b, &to_b, "desktop").skipped.is_empty());
    let of_b = format!("{BROWSER}-synced-from-desktop");
    assert_equal(&a, &hub, BROWSER, BROWSER);
    assert_equal(&b, &hub, BROWSER, &of_b);
    assert_eq!(hub.bucket(BROWSER).wait().unwrap().hostname, "laptop");
    assert_eq!(hub.bucket(&of_b).wait().unwrap().hostname, "desktop");
    // Two devices, told apart on the hub by the device that sent each.
    let device = |id: &str| hub.bucket(id).wait().unwrap().data["device_id"].clone();
    assert_eq!(
        (device(BROWSER), device(&of_b)),
        ("dev-a".into(), "dev-b".into())
    );
    // New events keep their place.
    b.insert_events(BROWSER, vec![tab(20, "https://b.example/more")])
        .unwrap();
    pass_as(&b, &to_b, "desktop");
    assert_equal(&b, &hub, BROWSER, &of_b);
    assert_equal(&a, &hub, BROWSER, BROWSER);
}

#[test]
fn a_hub_bucket_kept_without_a_host_is_left_for_one_of_each_device() {
    let (a_db, b_db, c_db, hub_db) = (TempDb::new(), TempDb::new(), TempDb::new(), TempDb::new());
    let (a, b, c, hub) = (a_db.open(), b_db.open(), c_db.open(), hub_db.open());
    let devices = [
        (&a, "dev-a", "laptop"),
        (&b, "dev-b", "desktop"),
        (&c, "dev-c", "tablet"),
    ];
    for (store, name, _) in devices {
        store.create_bucket(hostless_browser()).unwrap();
        let url = format!("https://{name}.example/");
        store
            .insert_events(BROWSER, vec![tab(0, &url), tab(10, &url)])
            .unwrap();
    }
    // As devices forwarded before: hostless, so the second and third
    // devices' events share one bucket on the hub.
    for (store, name, _) in devices {
        pass_as(store, &Direct::new(&hub, name), "unknown");
    }
    let shared = format!("{BROWSER}-synced-from-unknown");
    assert_eq!(hub.count_events(&shared, None, None).wait().unwrap(), 4);
    // Now each names its host: each device's history goes whole into a
    // bucket of its own; the old buckets stay as they were.
    for (store, name, host) in devices {
        let mut link = Direct::new(&hub, name);
        link.hosts = Some(vec![host, "unknown"]);
        let report = pass_as(store, &link, host);
        assert!(report.skipped.is_empty(), "{report:?}");
        assert_equal(
            store,
            &hub,
            BROWSER,
            &format!("{BROWSER}-synced-from-{host}"),
        );
        // A second pass sends nothing.
        let before = link.sent.get();
        pass_as(store, &link, host);
        assert_eq!(link.sent.get(), before);
    }
    assert_eq!(hub.count_events(&shared, None, None).wait().unwrap(), 4);
    assert_eq!(hub.bucket(BROWSER).wait().unwrap().hostname, "unknown");
}

#[test]
fn a_bucket_the_token_may_not_write_is_skipped_and_the_rest_goes_on() {
    let (device_db, hub_db) = (TempDb::new(), TempDb::new());
    let (device, hub) = (device_db.open(), hub_db.open());
    device.create_bucket(laptop_bucket()).unwrap();
    let mut other = bucket("aw-watcher-window_vm");
    other.hostname = "vm".to_string();
    device.create_bucket(other).unwrap();
    device
        .insert_events(WINDOW, vec![window(0, 5, "a")])
        .unwrap();
    device
        .insert_events("aw-watcher-window_vm", vec![window(0, 5, "vm")])
        .unwrap();
    let mut link = Direct::new(&hub, "dev-a");
    link.hosts = Some(vec!["laptop"]);
    let report = pass(&device, &link);
    assert_eq!(report.buckets, 1);
    assert_eq!(report.skipped.len(), 1, "{report:?}");
    assert_eq!(report.skipped[0].bucket, "aw-watcher-window_vm");
    assert_eq!(report.skipped[0].host, "vm");
    assert!(
        report.skipped[0].reason.contains("--host vm"),
        "{}",
        report.skipped[0].reason
    );
    assert!(report.skipped[0].reason.contains("[hub] buckets"));
    assert_equal(&device, &hub, WINDOW, WINDOW);
    assert!(hub.bucket("aw-watcher-window_vm").wait().is_err());
    // Later events and a delete still reach the hub.
    device
        .insert_events(WINDOW, vec![window(10, 5, "b")])
        .unwrap();
    let report = pass(&device, &link);
    assert_eq!(report.skipped.len(), 1);
    assert_equal(&device, &hub, WINDOW, WINDOW);
    device.delete_bucket(WINDOW).unwrap();
    let report = pass(&device, &link);
    assert_eq!(report.forgotten, 1);
    assert!(hub.bucket(WINDOW).wait().is_err());
}

#[test]
fn the_hub_lists_the_devices_that_forward_to_it() {
    let (a_db, b_db, hub_db) = (TempDb::new(), TempDb::new(), TempDb::new());
    let (a, b, hub) = (a_db.open(), b_db.open(), hub_db.open());
    a.create_bucket(laptop_bucket()).unwrap();
    a.insert_events(WINDOW, vec![window(0, 5, "a")]).unwrap();
    b.create_bucket(hostless_browser()).unwrap();
    b.insert_events(BROWSER, vec![tab(0, "https://b.example/")])
        .unwrap();
    assert!(forward::devices(&hub).unwrap().is_empty());
    let before = aw_models::Timestamp::now();
    pass_as(&a, &Direct::new(&hub, "dev-a"), "laptop");
    pass_as(&b, &Direct::new(&hub, "dev-b"), "desktop");
    let devices = forward::devices(&hub).unwrap();
    let names: Vec<&str> = devices.iter().map(|d| d.device.as_str()).collect();
    assert_eq!(names, ["dev-a", "dev-b"]);
    assert_eq!(devices[0].hosts, ["laptop"]);
    assert_eq!(devices[1].hosts, ["desktop"]);
    assert_eq!(devices[0].buckets[0].target, WINDOW);
    assert!(devices
        .iter()
        .all(|d| d.received.is_some_and(|at| at >= before)));
}

/// Renames the device's host `laptop` to `laptop2` as `aw-hosts` does.
fn rename_host(device: &Datastore) {
    device
        .change_hosts(aw_datastore::HostChange {
            renames: vec![aw_datastore::BucketRename {
                from: WINDOW.into(),
                to: "aw-watcher-window_laptop2".into(),
                hostname: "laptop2".into(),
            }],
            alias: Some(("laptop".into(), "laptop2".into())),
            ..Default::default()
        })
        .unwrap();
}

#[test]
fn a_rename_is_renamed_on_the_hub_in_place_and_an_older_hub_gets_the_bucket_whole() {
    for renames in [true, false] {
        let (device_db, hub_db) = (TempDb::new(), TempDb::new());
        let (device, hub) = (device_db.open(), hub_db.open());
        device.create_bucket(laptop_bucket()).unwrap();
        let history_of: Vec<Event> = (0..5_000).map(|i| window(i * 60, 30, "doc")).collect();
        device.insert_events(WINDOW, history_of).unwrap();
        let mut link = Direct::new(&hub, "dev");
        link.renames = renames;
        link.hosts = Some(vec!["laptop"]);
        pass(&device, &link);
        assert_equal(&device, &hub, WINDOW, WINDOW);
        // Renamed while the hub was away, then a heartbeat as the old name.
        rename_host(&device);
        device
            .heartbeat(
                WINDOW,
                window(5_000 * 60, 0, "doc"),
                aw_models::Duration::from_secs(120),
            )
            .unwrap();
        let new_id = "aw-watcher-window_laptop2";
        if renames {
            // This link checks hosts literally; a server's token covers the
            // alias the rename made (hub.rs).
            link.hosts = Some(vec!["laptop", "laptop2"]);
        } else {
            link.hosts = None;
        }
        let report = pass(&device, &link);
        assert_equal(&device, &hub, new_id, new_id);
        assert!(
            hub.bucket(WINDOW).wait().is_err() || renames,
            "the old copy is gone"
        );
        let ids: Vec<String> = hub.buckets().wait().unwrap().into_keys().collect();
        assert_eq!(ids, vec![new_id.to_string()], "renames={renames}");
        assert_eq!(hub.bucket(new_id).wait().unwrap().hostname, "laptop2");
        if renames {
            assert_eq!((report.renamed, report.forgotten), (1, 0), "{report:?}");
            assert!(report.sent <= 2, "not sent again: {report:?}");
            assert_eq!(hub.host_aliases().unwrap()["laptop"], "laptop2");
        } else {
            assert_eq!((report.renamed, report.forgotten), (0, 1), "{report:?}");
            assert!(report.sent >= 5_000, "sent whole: {report:?}");
        }
        // Later passes carry on from the state that moved.
        device
            .insert_events(new_id, vec![window(6_000 * 60, 30, "more")])
            .unwrap();
        let later = pass(&device, &link);
        assert_eq!(later.sent, 1, "{later:?}");
        assert_equal(&device, &hub, new_id, new_id);
    }
}

#[test]
fn a_hub_refuses_a_rename_onto_another_devices_host() {
    let (device_db, other_db, hub_db) = (TempDb::new(), TempDb::new(), TempDb::new());
    let (device, other, hub) = (device_db.open(), other_db.open(), hub_db.open());
    device.create_bucket(laptop_bucket()).unwrap();
    device
        .insert_events(WINDOW, vec![window(0, 30, "a")])
        .unwrap();
    let mut theirs = bucket("aw-watcher-window_laptop2");
    theirs.hostname = "laptop2".into();
    other.create_bucket(theirs).unwrap();
    other
        .insert_events("aw-watcher-window_laptop2", vec![window(0, 30, "b")])
        .unwrap();
    pass(&device, &Direct::new(&hub, "dev"));
    pass_as(&other, &Direct::new(&hub, "other"), "laptop2");
    rename_host(&device);
    let renamed = device.bucket("aw-watcher-window_laptop2").wait().unwrap();
    let refused = forward::rename(&hub, "dev", WINDOW, &renamed);
    assert!(matches!(refused, Err(FolderSyncError::Refused(m)) if m.contains("another device")));
    assert!(
        hub.host_aliases().unwrap().is_empty(),
        "no alias onto another's host"
    );
}
