"""The published Python aw-client, used as watchers and scripts use it."""

import json
import subprocess
import sys
import time
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
import requests
from aw_core.models import Event

T0 = datetime(2024, 3, 4, 9, 0, 0, tzinfo=timezone.utc)


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def ev(offset_s: float, duration_s: float, **data) -> Event:
    return Event(timestamp=T0 + timedelta(seconds=offset_s), duration=duration_s, data=data)


def wait_for(predicate, timeout=20.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError("condition not met in time")


def test_info(client):
    info = client.get_info()
    assert info["testing"] is True
    assert info["hostname"]
    assert info["version"]
    assert info["device_id"]


def test_bucket_create_and_delete(client):
    bid = unique("aw-test-bucket")
    client.create_bucket(bid, "test.type")
    # A second create answers 304, which the client treats as success.
    client.create_bucket(bid, "test.type")
    buckets = client.get_buckets()
    assert buckets[bid]["type"] == "test.type"
    assert buckets[bid]["client"] == "aw-test-client"
    client.delete_bucket(bid, force=True)
    assert bid not in client.get_buckets()


def test_direct_heartbeats_merge(client):
    bid = unique("aw-test-hb")
    client.create_bucket(bid, "currentwindow")
    for second in range(5):
        client.heartbeat(bid, ev(second, 0, app="vim", title="a.rs"), pulsetime=2)
    client.heartbeat(bid, ev(5, 0, app="firefox", title="docs"), pulsetime=2)
    events = client.get_events(bid)
    assert len(events) == 2
    assert events[0].data == {"app": "firefox", "title": "docs"}
    assert events[1].data == {"app": "vim", "title": "a.rs"}
    assert events[1].duration == timedelta(seconds=4)
    assert events[1].timestamp == T0


def test_queued_heartbeats_arrive(client):
    bid = unique("aw-test-queued")
    client.create_bucket(bid, "currentwindow", queued=True)
    client.connect()
    try:
        for second in range(10):
            client.heartbeat(bid, ev(second, 0, app="vim"), pulsetime=2, queued=True, commit_interval=3)
        client.heartbeat(bid, ev(10, 0, app="other"), pulsetime=2, queued=True, commit_interval=3)
        events = wait_for(lambda: [e for e in client.get_events(bid) if e.data.get("app") == "vim" and e.duration >= timedelta(seconds=9)] or None)
        assert events[0].timestamp == T0
    finally:
        client.disconnect()


def test_insert_get_delete_events(client):
    bid = unique("aw-test-events")
    client.create_bucket(bid, "test")
    client.insert_events(bid, [ev(0, 10, n=1), ev(20, 5, n=2), ev(40, 1, n=3)])
    client.insert_event(bid, ev(60, 2, n=4))
    events = client.get_events(bid)
    assert [e.data["n"] for e in events] == [4, 3, 2, 1]
    assert client.get_events(bid, limit=2)[1].data["n"] == 3
    window = client.get_events(bid, start=T0 + timedelta(seconds=5), end=T0 + timedelta(seconds=22))
    assert [(e.data["n"], e.duration) for e in window] == [(2, timedelta(seconds=2)), (1, timedelta(seconds=5))]

    one = client.get_event(bid, events[0].id)
    assert one.data == {"n": 4}
    client.delete_event(bid, events[0].id)
    with pytest.raises(requests.HTTPError) as missing:
        client.get_event(bid, events[0].id)
    assert missing.value.response.status_code == 404
    assert [e.data["n"] for e in client.get_events(bid)] == [3, 2, 1]


def test_event_count(client):
    bid = unique("aw-test-count")
    client.create_bucket(bid, "test")
    client.insert_events(bid, [ev(i * 10, 5, i=i) for i in range(7)])
    assert client.get_eventcount(bid) == 7
    assert client.get_eventcount(bid, start=T0 + timedelta(seconds=12), end=T0 + timedelta(seconds=31)) == 3


def test_query(client):
    bid = unique("aw-test-query")
    client.create_bucket(bid, "currentwindow")
    client.insert_events(bid, [ev(0, 30, app="vim"), ev(30, 10, app="firefox"), ev(40, 20, app="vim")])
    program = "\n".join([
        f'events = query_bucket("{bid}");',
        'events = merge_events_by_keys(events, ["app"]);',
        "events = sort_by_duration(events);",
        'RETURN = {"events": events, "total": sum_durations(events)};',
    ])
    periods = [(T0, T0 + timedelta(hours=1)), (T0 + timedelta(seconds=35), T0 + timedelta(seconds=45))]
    first, second = client.query(program, periods)
    assert [(e["data"]["app"], e["duration"]) for e in first["events"]] == [("vim", 50.0), ("firefox", 10.0)]
    assert first["total"] == 60.0
    assert second["total"] == 10.0


def test_query_error_raises(client):
    with pytest.raises(requests.HTTPError) as failure:
        client.query("RETURN = no_such_function();", [(T0, T0 + timedelta(hours=1))])
    assert failure.value.response.status_code == 400
    assert "no_such_function" in failure.value.response.json()["message"]


def test_export_import_round_trip(client):
    bid = unique("aw-test-export")
    client.create_bucket(bid, "test")
    client.insert_events(bid, [ev(0, 1.5, a="x"), ev(10, 2.25, a="y", nested={"k": [1, 2]})])
    exported = client.export_bucket(bid)["buckets"][bid]
    assert len(exported["events"]) == 2
    everything = client.export_all()
    assert bid in everything["buckets"]

    client.delete_bucket(bid, force=True)
    client.import_bucket(exported)
    again = client.export_bucket(bid)["buckets"][bid]
    for key in ("id", "type", "client", "hostname", "created", "data"):
        assert again[key] == exported[key], key
    strip = lambda events: sorted((e["timestamp"], e["duration"], json.dumps(e["data"], sort_keys=True)) for e in events)
    assert strip(again["events"]) == strip(exported["events"])

    # Importing the same document again adds nothing.
    client.import_bucket(exported)
    assert client.get_eventcount(bid) == 2


def test_settings(client):
    key = unique("aw-test-setting")
    assert client.get_setting(key) is None
    client.set_setting(key, {"theme": "dark", "n": [1, 2]})
    assert client.get_setting(key) == {"theme": "dark", "n": [1, 2]}
    assert client.get_setting()[key] == {"theme": "dark", "n": [1, 2]}


def run_cli(server, *args):
    command = [str(Path(sys.executable).parent / "aw-client"), "--testing", "--host", "127.0.0.1", "--port", str(server.port), *args]
    result = subprocess.run(command, env=server.env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_cli_buckets_events_heartbeat(server, client):
    bid = unique("aw-test-cli")
    client.create_bucket(bid, "test")
    run_cli(server, "heartbeat", bid, '{"label": "from-cli"}')
    assert bid in run_cli(server, "buckets")
    assert "from-cli" in run_cli(server, "events", bid)


def test_cli_canonical(server, client):
    host = unique("clihost")
    window, afk = f"aw-watcher-window_{host}", f"aw-watcher-afk_{host}"
    now = datetime.now(timezone.utc).replace(microsecond=0) - timedelta(hours=2)
    client.create_bucket(window, "currentwindow")
    client.create_bucket(afk, "afkstatus")
    client.insert_events(afk, [Event(timestamp=now, duration=3600, data={"status": "not-afk"})])
    client.insert_events(window, [
        Event(timestamp=now + timedelta(minutes=i), duration=60, data={"app": "vim" if i % 2 else "Firefox", "title": f"t{i}"})
        for i in range(30)
    ])
    out = run_cli(server, "canonical", host)
    assert "Showing last 10 out of" in out
    assert "[vim]" in out
