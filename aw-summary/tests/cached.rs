//! Summaries with the cache of finished periods equal summaries without
//! it, through random interleavings of writes, setting changes and
//! summaries over random periods, time zones and groupings.

use std::sync::Arc;

use aw_cache::{Cache, CacheConfig};
use aw_datastore::Datastore;
use aw_models::summary::Params;
use aw_models::{Bucket, Duration, Event, Timestamp, UpdateBucket};
use aw_summary::Served;
use proptest::prelude::*;

const HOUR: i64 = 3600;
const DAYS: i64 = 6;
/// 2023-11-14, long finished.
const ORIGIN: i64 = 1_700_000_000;
const WINDOW: &str = "aw-watcher-window_laptop";
const AFK: &str = "aw-watcher-afk_laptop";
const WEB: &str = "aw-watcher-web-chrome_laptop";

fn at(secs: i64) -> Timestamp {
    Timestamp::from_nanos((ORIGIN + secs) * 1_000_000_000)
}

fn event(start: i64, length: i64, data: serde_json::Value) -> Event {
    Event::new(
        at(start),
        Duration::from_secs(length),
        serde_json::from_value(data).unwrap(),
    )
}

fn bucket(id: &str, kind: &str) -> Bucket {
    serde_json::from_value(serde_json::json!({
        "id": id, "type": kind, "client": "test", "hostname": "laptop",
    }))
    .unwrap()
}

#[derive(Debug, Clone)]
enum Op {
    Window {
        start: i64,
        length: i64,
        app: u8,
        title: u8,
        heartbeat: bool,
    },
    Web {
        start: i64,
        length: i64,
        site: u8,
    },
    Afk {
        start: i64,
        length: i64,
        away: bool,
    },
    DeleteRange {
        start: i64,
        length: i64,
    },
    Categories {
        variant: u8,
    },
    StartOfDay {
        hour: u8,
    },
    Rename {
        to: u8,
    },
    Summary {
        first: i64,
        days: i64,
        zone: u8,
        by: u8,
    },
}

const APPS: [&str; 3] = ["editor", "chrome", "terminal"];
const SITES: [&str; 3] = [
    "https://example.org/a",
    "https://docs.rs/x",
    "https://example.org/b",
];
const ZONES: [&str; 3] = ["UTC", "Europe/Berlin", "America/New_York"];
const BY: [&str; 3] = [
    "app,title,category,domain,url,day",
    "app,category,host",
    "hour,events,app",
];

fn op() -> impl Strategy<Value = Op> {
    let span = DAYS * 24 * HOUR;
    prop_oneof![
        5 => (0..span, 1..2 * HOUR, 0..3u8, 0..4u8, any::<bool>()).prop_map(
            |(start, length, app, title, heartbeat)| Op::Window { start, length, app, title, heartbeat }
        ),
        2 => (0..span, 1..HOUR, 0..3u8).prop_map(|(start, length, site)| Op::Web { start, length, site }),
        2 => (0..span, 1..4 * HOUR, any::<bool>())
            .prop_map(|(start, length, away)| Op::Afk { start, length, away }),
        1 => (0..span, 1..6 * HOUR).prop_map(|(start, length)| Op::DeleteRange { start, length }),
        1 => (0..3u8).prop_map(|variant| Op::Categories { variant }),
        1 => (0..6u8).prop_map(|hour| Op::StartOfDay { hour }),
        1 => (0..2u8).prop_map(|to| Op::Rename { to }),
        6 => (-1..DAYS, 1..4i64, 0..3u8, 0..3u8)
            .prop_map(|(first, days, zone, by)| Op::Summary { first, days, zone, by }),
    ]
}

fn apply(store: &Datastore, op: &Op) {
    match *op {
        Op::Window {
            start,
            length,
            app,
            title,
            heartbeat,
        } => {
            let data = serde_json::json!({
                "app": APPS[app as usize],
                "title": format!("{} {title}", APPS[app as usize]),
            });
            let event = event(start, length, data);
            if heartbeat {
                let _ = store.heartbeat(WINDOW, event, Duration::from_secs(HOUR));
            } else {
                store.insert_events(WINDOW, vec![event]).unwrap();
            }
        }
        Op::Web {
            start,
            length,
            site,
        } => {
            let data =
                serde_json::json!({"url": SITES[site as usize], "title": "tab", "audible": false});
            store
                .insert_events(WEB, vec![event(start, length, data)])
                .unwrap();
        }
        Op::Afk {
            start,
            length,
            away,
        } => {
            let status = if away { "afk" } else { "not-afk" };
            let data = serde_json::json!({ "status": status });
            store
                .insert_events(AFK, vec![event(start, length, data)])
                .unwrap();
        }
        Op::DeleteRange { start, length } => {
            for id in [WINDOW, AFK, WEB] {
                store
                    .delete_range(id, at(start), at(start + length), &mut |_| {})
                    .unwrap();
            }
        }
        Op::Categories { variant } => {
            let rule = ["editor|terminal", "chrome", "nothing at all"][variant as usize];
            let classes = serde_json::json!([
                {"name": ["Work"], "rule": {"type": "regex", "regex": rule}},
                {"name": ["Work", "Docs"], "rule": {"type": "regex", "regex": "docs|1"}},
            ]);
            store.set_setting("classes", classes).unwrap();
        }
        Op::StartOfDay { hour } => {
            store
                .set_setting("startOfDay", format!("{hour:02}:00").into())
                .unwrap();
        }
        Op::Rename { to } => {
            // The window bucket leaves the host, or comes back to it.
            let host = ["laptop", "desktop"][to as usize];
            let update: UpdateBucket =
                serde_json::from_value(serde_json::json!({ "hostname": host })).unwrap();
            store.update_bucket(WINDOW, update).unwrap();
        }
        Op::Summary { .. } => {}
    }
}

fn date(day: i64) -> String {
    at(day * 24 * HOUR).to_string()[..10].to_string()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn every_summary_equals_the_uncached_one(ops in prop::collection::vec(op(), 1..50)) {
        let folder = tempfile::tempdir().unwrap();
        let store = Datastore::open(folder.path().join("test.db")).unwrap();
        let cache = Arc::new(Cache::new(CacheConfig {
            max_bytes: 1 << 20,
            margin: Duration::from_secs(600),
            prewarm: false,
        }));
        cache.keep_summaries_as(aw_summary::kept_day);
        store.watch_writes(cache.watcher());
        store.create_bucket(bucket(WINDOW, "currentwindow")).unwrap();
        store.create_bucket(bucket(AFK, "afkstatus")).unwrap();
        store.create_bucket(bucket(WEB, "web.tab.current")).unwrap();
        // Active all along, so that the window events count; the ops add
        // away time and delete stretches of it.
        store
            .insert_events(AFK, vec![event(0, DAYS * 24 * HOUR, serde_json::json!({"status": "not-afk"}))])
            .unwrap();
        let cached = Served {
            datastore: store.clone(),
            own_host: "laptop".into(),
            cache: Some(Arc::clone(&cache)),
        };
        let fresh = Served { cache: None, ..cached.clone() };
        let mut asked = 0;
        for op in &ops {
            apply(&store, op);
            if let Op::Summary { first, days, zone, by } = *op {
                let params = Params {
                    start: Some(date(first)),
                    end: Some(date(first + days)),
                    by: Some(BY[by as usize].into()),
                    host: None,
                    tz: Some(ZONES[zone as usize].into()),
                    limit: Some(50),
                    categories: None,
                };
                let expected = aw_summary::summarize(&fresh, &params).map_err(|e| e.to_string());
                // Twice: the second from the cache where the first was kept.
                for _ in 0..2 {
                    let answer = aw_summary::summarize(&cached, &params).map_err(|e| e.to_string());
                    prop_assert_eq!(&answer, &expected, "after {:?}", op);
                }
                asked += 1;
            }
        }
        prop_assert!(asked == 0 || cache.stats().hits > 0, "{:?}", cache.stats());
        prop_assert!(cache.stats().bytes <= 1 << 20);
    }
}
