"""Starts the aw-server binary on a free port for the aw-client tests.

The binary comes from AW_SERVER_BIN (the test command builds it). The server
gets its own config, data and cache directories, so nothing of the user's is
read or written.
"""

import os
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest
import requests
from aw_client import ActivityWatchClient


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Server:
    """The server on `root/test.db`, or with `default_db`, on the default
    database of its (private) data folder, as a first start would."""

    def __init__(self, binary: str, root: Path, default_db: bool = False):
        self.port = _free_port()
        self.root = root
        self.db = root / "test.db"
        self.log = open(root / "server.log", "wb")
        self.env = dict(
            os.environ,
            XDG_CONFIG_HOME=str(root / "config"),
            XDG_DATA_HOME=str(root / "data"),
            XDG_CACHE_HOME=str(root / "cache"),
            HOME=str(root / "home"),
        )
        db_flags = [] if default_db else ["--dbpath", str(self.db)]
        self.process = subprocess.Popen(
            [binary, "--testing", "--port", str(self.port), *db_flags],
            env=self.env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )
        self._wait_until_up()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _wait_until_up(self) -> None:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"server exited with {self.process.returncode}")
            try:
                requests.get(f"{self.url}/api/0/info", timeout=1).raise_for_status()
                return
            except requests.RequestException:
                time.sleep(0.05)
        raise RuntimeError("server did not answer within 30 s")

    def stop(self) -> int:
        self.process.terminate()
        try:
            return self.process.wait(timeout=30)
        finally:
            self.log.close()


@pytest.fixture(scope="session")
def server():
    binary = os.environ.get("AW_SERVER_BIN")
    if not binary:
        raise RuntimeError("AW_SERVER_BIN must name the aw-server binary to test")
    with tempfile.TemporaryDirectory() as root:
        root = Path(root)
        for sub in ("config", "data", "cache", "home"):
            (root / sub).mkdir()
        srv = Server(binary, root)
        yield srv
        assert srv.stop() == 0, "server did not exit cleanly on SIGTERM"


@pytest.fixture
def client(server):
    # aw-client keeps its queue and lock files under HOME/XDG dirs; point them
    # at the test's directories too.
    os.environ["XDG_DATA_HOME"] = server.env["XDG_DATA_HOME"]
    os.environ["XDG_CONFIG_HOME"] = server.env["XDG_CONFIG_HOME"]
    os.environ["HOME"] = server.env["HOME"]
    awc = ActivityWatchClient("aw-test-client", testing=True, host="127.0.0.1", port=server.port)
    yield awc
