"""Scrapes /metrics of a running aw-server binary while heartbeats arrive,
and parses every scrape with Prometheus' own OpenMetrics parser
(prometheus_client.openmetrics.parser), which raises on any text that is
not valid OpenMetrics 1.0. Run by scripts/test-metrics:

    python check_scrapes.py AW_SERVER_BINARY

The server gets its own config, data and cache folders in a temporary
folder, an API key, and a free port; it is stopped at the end. Any failure
raises, and the exit status is 1.
"""

import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from datetime import datetime, timedelta, timezone
from pathlib import Path

from prometheus_client.openmetrics.parser import text_string_to_metric_families

KEY = "metrics-test-key"
BUCKETS = ["aw-watcher-window_scrape-host", "aw-watcher-afk_scrape-host"]
HEARTBEATS_PER_BUCKET = 150
SCRAPES = 8
CONTENT_TYPE = "application/openmetrics-text; version=1.0.0; charset=utf-8"

# Family name (counters without _total) -> (type, unit).
EXPECTED = {
    "aw_server_http_requests": ("counter", ""),
    "aw_server_http_request_duration_seconds": ("histogram", "seconds"),
    "aw_server_heartbeats": ("counter", ""),
    "aw_server_writer_queue_depth": ("gauge", ""),
    "aw_server_writer_commit_duration_seconds": ("histogram", "seconds"),
    "aw_server_database_size_bytes": ("gauge", "bytes"),
    "aw_server_database_wal_size_bytes": ("gauge", "bytes"),
    "aw_server_bucket_last_event_age_seconds": ("gauge", "seconds"),
}
HEARTBEAT_ROUTE = "/api/0/buckets/<bucket_id>/heartbeat"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Server:
    def __init__(self, binary: str, root: Path):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        config = root / "config" / "activitywatch" / "aw-server-rust"
        config.mkdir(parents=True)
        (config / "config-testing.toml").write_text(f'[auth]\napi_key = "{KEY}"\n')
        self.log_path = root / "server.log"
        self.log = open(self.log_path, "wb")
        env = dict(
            os.environ,
            XDG_CONFIG_HOME=str(root / "config"),
            XDG_DATA_HOME=str(root / "data"),
            XDG_CACHE_HOME=str(root / "cache"),
            HOME=str(root),
        )
        self.process = subprocess.Popen(
            [binary, "--testing", "--port", str(self.port), "--dbpath", str(root / "test.db")],
            env=env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + 30
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"server exited with {self.process.returncode}:\n{self.tail()}")
            try:
                with urllib.request.urlopen(f"{self.url}/api/0/info", timeout=1):
                    return
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"server did not answer within 30 s:\n{self.tail()}")
                time.sleep(0.05)

    def tail(self) -> str:
        self.log.flush()
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-30:])

    def request(self, method, path, body=None, token=KEY):
        """(status, headers, body text)."""
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(f"{self.url}{path}", data=data, method=method)
        if token is not None:
            request.add_header("Authorization", f"Bearer {token}")
        if data is not None:
            request.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(request, timeout=30) as reply:
                return reply.status, reply.headers, reply.read().decode()
        except urllib.error.HTTPError as error:
            return error.code, error.headers, error.read().decode()

    def stop(self) -> None:
        self.process.terminate()
        try:
            code = self.process.wait(timeout=30)
        finally:
            self.log.close()
        if code != 0:
            raise RuntimeError(f"server exited with {code} on SIGTERM")


def expect(condition: bool, message: str) -> None:
    if not condition:
        raise AssertionError(message)


def send_heartbeats(server: Server, token: str, indices: range, failures: list) -> None:
    """Heartbeats `indices` to every bucket, each a second after the last,
    the last about half a minute ago; a failure is recorded for the main
    thread."""
    start = datetime.now(timezone.utc) - timedelta(seconds=HEARTBEATS_PER_BUCKET + 30)
    try:
        for index in indices:
            at = (start + timedelta(seconds=index)).isoformat()
            for bucket in BUCKETS:
                event = {"timestamp": at, "duration": 0, "data": {"app": f"app{index % 3}"}}
                status, _, text = server.request(
                    "POST", f"/api/0/buckets/{bucket}/heartbeat?pulsetime=5", event, token
                )
                expect(status == 200, f"heartbeat answered {status}: {text}")
    except Exception as error:  # handed to the main thread, which raises it
        failures.append(error)


def scrape(server: Server, token: str) -> dict:
    """One scrape, parsed whole; its families by name."""
    status, headers, text = server.request("GET", "/metrics", token=token)
    expect(status == 200, f"/metrics answered {status}: {text}")
    expect(
        headers.get("Content-Type") == CONTENT_TYPE,
        f"content type {headers.get('Content-Type')!r}",
    )
    # The parser is lazy: taking every family reads (and checks) it all.
    families = {family.name: family for family in text_string_to_metric_families(text)}
    for name, (kind, unit) in EXPECTED.items():
        expect(name in families, f"no {name} in:\n{text}")
        expect(families[name].type == kind, f"{name} is a {families[name].type}, not a {kind}")
        expect(families[name].unit == unit, f"{name}'s unit is {families[name].unit!r}")
    return families


def value(family, sample_name: str, **labels) -> float:
    for sample in family.samples:
        if sample.name == sample_name and sample.labels == labels:
            return sample.value
    raise AssertionError(f"no {sample_name} {labels} in {family.samples}")


def main() -> None:
    binary = sys.argv[1]
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as root:
        server = Server(binary, Path(root))
        try:
            status, _, _ = server.request("GET", "/metrics", token=None)
            expect(status == 401, f"/metrics without a credential answered {status}")
            status, _, text = server.request(
                "POST", "/api/0/tokens", {"name": "prometheus", "scope": "read"}
            )
            expect(status == 201, f"making a read token answered {status}: {text}")
            read_token = json.loads(text)["token"]
            status, _, text = server.request(
                "POST",
                "/api/0/tokens",
                {"name": "watcher", "scope": "write", "hosts": ["scrape-host"]},
            )
            expect(status == 201, f"making a write token answered {status}: {text}")
            write_token = json.loads(text)["token"]
            status, _, _ = server.request("GET", "/metrics", token=write_token)
            expect(status == 403, f"/metrics with a write token answered {status}")
            for bucket in BUCKETS:
                status, _, text = server.request(
                    "POST",
                    f"/api/0/buckets/{bucket}",
                    {"type": "test", "client": "check_scrapes", "hostname": "scrape-host"},
                    write_token,
                )
                expect(status == 200, f"creating {bucket} answered {status}: {text}")
            # The first heartbeats before any scrape: a bucket has an age,
            # and the heartbeat counter a series, once it has an event.
            failures: list = []
            send_heartbeats(server, write_token, range(1), failures)
            if failures:
                raise failures[0]
            writer = threading.Thread(
                target=send_heartbeats,
                args=(server, write_token, range(1, HEARTBEATS_PER_BUCKET), failures),
            )
            writer.start()
            scraped = 0
            while writer.is_alive() or scraped < SCRAPES:
                scrape(server, read_token)
                scraped += 1
                time.sleep(0.05)
            writer.join()
            if failures:
                raise failures[0]

            status, _, text = server.request("POST", "/api/0/backup")
            expect(status == 200, f"a snapshot answered {status}: {text}")
            families = scrape(server, read_token)
            scraped += 1
            for bucket in BUCKETS:
                counted = value(
                    families["aw_server_heartbeats"], "aw_server_heartbeats_total", bucket=bucket
                )
                expect(counted == HEARTBEATS_PER_BUCKET, f"{bucket}: {counted} heartbeats")
                age = value(
                    families["aw_server_bucket_last_event_age_seconds"],
                    "aw_server_bucket_last_event_age_seconds",
                    bucket=bucket,
                )
                expect(0 < age < 600, f"{bucket}'s last event is {age} s old")
            answered = value(
                families["aw_server_http_requests"],
                "aw_server_http_requests_total",
                method="POST",
                route=HEARTBEAT_ROUTE,
                status="200",
            )
            expect(answered == HEARTBEATS_PER_BUCKET * len(BUCKETS), f"{answered} heartbeats")
            expect(
                value(families["aw_server_database_size_bytes"], "aw_server_database_size_bytes")
                > 0,
                "an empty database file",
            )
            expect("aw_server_backup_last_success" in families, "no backup series")
            expect(
                value(
                    families["aw_server_backup_last_success"], "aw_server_backup_last_success"
                )
                == 1,
                "the snapshot failed",
            )
            expect(
                "aw_server_sync_last_success" not in families
                and "aw_server_hub_last_success" not in families,
                "series of features that never ran",
            )
        except BaseException:
            print(f"--- server log (last 30 lines) ---\n{server.tail()}", file=sys.stderr)
            raise
        finally:
            server.stop()
    print(
        f"check_scrapes: {scraped} scrapes parsed as OpenMetrics while "
        f"{HEARTBEATS_PER_BUCKET * len(BUCKETS)} heartbeats arrived, "
        f"in {time.monotonic() - started:.1f} s"
    )


if __name__ == "__main__":
    main()
