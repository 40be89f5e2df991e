//! Encryption at rest (`key.rs`). Without the `sqlcipher` feature a key is
//! refused before any file is made; with it (`cargo test -p aw-datastore
//! --features sqlcipher`, which `scripts/test` runs), a keyed database is
//! unreadable on disk and every way the key can fail to fit is an
//! explained error that changes nothing.

use aw_datastore::{DatabaseKey, Datastore, DatastoreError, ENCRYPTION_AVAILABLE};

fn encryption_error(result: Result<Datastore, DatastoreError>) -> String {
    match result {
        Err(DatastoreError::Encryption(message)) => message,
        Err(other) => panic!("not an encryption error: {other}"),
        Ok(_) => panic!("opened"),
    }
}

#[test]
fn an_empty_password_is_refused() {
    assert!(matches!(
        DatabaseKey::new(""),
        Err(DatastoreError::Encryption(_))
    ));
}

#[cfg(not(feature = "sqlcipher"))]
#[test]
fn without_the_feature_a_key_is_refused_and_no_file_is_made() {
    const { assert!(!ENCRYPTION_AVAILABLE) };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db.sqlite");
    let key = DatabaseKey::new("pw").unwrap();
    let message = encryption_error(Datastore::open_with_key(&path, Some(&key)));
    assert!(message.contains("sqlcipher"), "{message}");
    assert!(!path.exists(), "no plaintext database is created");
}

#[cfg(feature = "sqlcipher")]
mod with_sqlcipher {
    use std::path::Path;

    use aw_models::{Bucket, BucketMetadata, Data, Duration, Event, Timestamp};

    use super::*;

    fn bucket() -> Bucket {
        Bucket {
            id: "secret-bucket".into(),
            kind: "currentwindow".into(),
            client: "test".into(),
            hostname: "host".into(),
            created: None,
            data: Data::new(),
            metadata: BucketMetadata::default(),
            events: None,
            last_updated: None,
        }
    }

    fn event() -> Event {
        let mut data = Data::new();
        data.insert("title".into(), "a very private window title".into());
        Event {
            id: None,
            timestamp: Timestamp::parse("2024-01-01T10:00:00Z").unwrap(),
            duration: Duration::from_secs_f64(5.0).unwrap(),
            data,
        }
    }

    fn contains(haystack: &[u8], needle: &[u8]) -> bool {
        haystack
            .windows(needle.len())
            .any(|window| window == needle)
    }

    fn files(path: &Path) -> Vec<u8> {
        let mut all = std::fs::read(path).unwrap();
        if let Ok(wal) = std::fs::read(format!("{}-wal", path.display())) {
            all.extend(wal);
        }
        all
    }

    #[test]
    fn a_keyed_database_is_unreadable_on_disk_and_opens_only_with_its_key() {
        const { assert!(ENCRYPTION_AVAILABLE) };
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("secret.db");
        let key = DatabaseKey::new("correct horse").unwrap();
        {
            let store = Datastore::open_with_key(&path, Some(&key)).unwrap();
            store.create_bucket(bucket()).unwrap();
            store.insert_events("secret-bucket", vec![event()]).unwrap();
            // Sync refuses to push a plaintext copy of it unless told to.
            assert!(store.is_encrypted());
            // Readers (pooled and threads) use the key too.
            assert_eq!(store.buckets().wait().unwrap().len(), 1);
            store.close().unwrap();
        }
        let bytes = files(&path);
        assert!(!bytes.starts_with(b"SQLite format 3\0"));
        assert!(!contains(&bytes, b"very private"), "plaintext on disk");

        let before = std::fs::read(&path).unwrap();
        let message = encryption_error(Datastore::open(&path));
        assert!(message.contains("encrypted"), "{message}");
        let wrong = DatabaseKey::new("wrong horse").unwrap();
        let message = encryption_error(Datastore::open_with_key(&path, Some(&wrong)));
        assert!(message.contains("password is wrong"), "{message}");
        assert_eq!(
            std::fs::read(&path).unwrap(),
            before,
            "failed opens change nothing"
        );

        let store = Datastore::open_with_key(&path, Some(&key)).unwrap();
        let events = store
            .events("secret-bucket", Default::default())
            .wait()
            .unwrap();
        assert_eq!(events.len(), 1);
        assert_eq!(events[0].data["title"], "a very private window title");
        store.close().unwrap();
    }

    #[test]
    fn a_snapshot_of_a_keyed_database_is_keyed_the_same() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("secret.db");
        let key = DatabaseKey::new("correct horse").unwrap();
        let store = Datastore::open_with_key(&path, Some(&key)).unwrap();
        store.create_bucket(bucket()).unwrap();
        store.insert_events("secret-bucket", vec![event()]).unwrap();
        let copy = dir.path().join("snapshot.db");
        store.snapshot(&copy).unwrap();
        store.close().unwrap();
        let bytes = std::fs::read(&copy).unwrap();
        assert!(!bytes.starts_with(b"SQLite format 3\0"));
        assert!(
            !contains(&bytes, b"very private"),
            "plaintext in the snapshot"
        );
        let message = encryption_error(Datastore::open(&copy));
        assert!(message.contains("encrypted"), "{message}");
        let store = Datastore::open_with_key(&copy, Some(&key)).unwrap();
        let events = store
            .events("secret-bucket", Default::default())
            .wait()
            .unwrap();
        assert_eq!(events[0].data["title"], "a very private window title");
        store.close().unwrap();
    }

    #[test]
    fn a_keyed_snapshot_restores_with_its_key_only() {
        use aw_datastore::restore::{self, IssuedMarks};
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("secret.db");
        let key = DatabaseKey::new("correct horse").unwrap();
        let store = Datastore::open_with_key(&path, Some(&key)).unwrap();
        store.create_bucket(bucket()).unwrap();
        store.insert_events("secret-bucket", vec![event()]).unwrap();
        let copy = dir.path().join("snapshot.db");
        store.snapshot(&copy).unwrap();
        store.insert_events("secret-bucket", vec![event()]).unwrap();
        store.close().unwrap();
        let before = std::fs::read(&path).unwrap();

        // Another key, or none: an explained error, the database untouched.
        let other = DatabaseKey::new("battery staple").unwrap();
        for wrong in [Some(&other), None] {
            let error = restore::restore(&copy, &path, wrong, &IssuedMarks::default())
                .expect_err("restored with the wrong key");
            assert!(
                matches!(error, DatastoreError::Encryption(_)),
                "not an encryption error: {error}"
            );
            assert_eq!(std::fs::read(&path).unwrap(), before);
        }
        let restored = restore::restore(&copy, &path, Some(&key), &IssuedMarks::default()).unwrap();
        assert_eq!(restored.facts.events, 1);
        let store = Datastore::open_with_key(&path, Some(&key)).unwrap();
        let events = store
            .events("secret-bucket", Default::default())
            .wait()
            .unwrap();
        assert_eq!(events.len(), 1);
        // Ids go on above the two issued before the restore.
        let added = store.insert_events("secret-bucket", vec![event()]).unwrap();
        assert_eq!(added[0].id, Some(3));
        store.close().unwrap();
        assert!(!std::fs::read(&path)
            .unwrap()
            .starts_with(b"SQLite format 3\0"));
    }

    #[test]
    fn a_key_for_a_plain_database_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("plain.db");
        let store = Datastore::open(&path).unwrap();
        store.create_bucket(bucket()).unwrap();
        store.close().unwrap();
        let before = std::fs::read(&path).unwrap();
        let key = DatabaseKey::new("pw").unwrap();
        let message = encryption_error(Datastore::open_with_key(&path, Some(&key)));
        assert!(message.contains("not encrypted"), "{message}");
        assert_eq!(std::fs::read(&path).unwrap(), before);
        let store = Datastore::open(&path).unwrap();
        assert!(!store.is_encrypted());
        assert_eq!(store.buckets().wait().unwrap().len(), 1);
        store.close().unwrap();
    }
}
