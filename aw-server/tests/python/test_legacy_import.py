"""The first start imports a database written by the Python aw-server's own
storage (aw-core's peewee storage, as published on PyPI) event for event.

The server gets private XDG folders; the Python server's file is where
aw-core puts it in testing mode, under that data folder.
"""

import os
from datetime import datetime, timedelta, timezone
from pathlib import Path

from aw_client import ActivityWatchClient
from aw_core.models import Event
from aw_datastore.storages.peewee import PeeweeStorage

from conftest import Server

BUCKETS = {
    "aw-watcher-window_pyhost": ("currentwindow", "aw-watcher-window"),
    "aw-watcher-afk_pyhost": ("afkstatus", "aw-watcher-afk"),
}


def write_python_database(path: Path) -> PeeweeStorage:
    storage = PeeweeStorage(testing=True, filepath=str(path))
    start = datetime(2021, 5, 3, 9, 0, tzinfo=timezone.utc)
    for index, (bucket_id, (kind, client)) in enumerate(BUCKETS.items()):
        storage.create_bucket(bucket_id, kind, client, "pyhost", created=start.isoformat())
        storage.insert_many(
            bucket_id,
            [
                Event(
                    timestamp=start + timedelta(seconds=n * 3 + index, milliseconds=n % 997),
                    duration=timedelta(seconds=n % 11, microseconds=(n * 7919) % 1_000_000),
                    data={"app": f"app{n % 5}", "title": f"Fenêtre {n} — 🦀"} if index == 0 else {"status": "afk" if n % 4 else "not-afk"},
                )
                for n in range(2500)
            ],
        )
    return storage


def test_first_start_imports_the_python_servers_database(tmp_path):
    binary = os.environ["AW_SERVER_BIN"]
    for sub in ("config", "data", "cache", "home"):
        (tmp_path / sub).mkdir()
    legacy = tmp_path / "data" / "activitywatch" / "aw-server" / "peewee-sqlite-testing.v2.db"
    legacy.parent.mkdir(parents=True)
    storage = write_python_database(legacy)
    expected = {bucket_id: storage.get_events(bucket_id, limit=-1) for bucket_id in BUCKETS}
    storage.db.close()

    server = Server(binary, tmp_path, default_db=True)
    try:
        client = ActivityWatchClient("aw-test-client", testing=True, host="127.0.0.1", port=server.port)
        buckets = client.get_buckets()
        assert set(buckets) == set(BUCKETS)
        for bucket_id, (kind, watcher) in BUCKETS.items():
            assert buckets[bucket_id]["type"] == kind
            assert buckets[bucket_id]["client"] == watcher
            assert buckets[bucket_id]["hostname"] == "pyhost"
            got = client.get_events(bucket_id, limit=-1)
            assert len(got) == len(expected[bucket_id]) == 2500

            def key(event):
                return (event.timestamp, event.duration, sorted(event.data.items()))

            assert sorted(map(key, got)) == sorted(map(key, expected[bucket_id]))
    finally:
        assert server.stop() == 0
    log = (tmp_path / "server.log").read_text()
    assert "Imported" in log and "5000 stored" in log, log
