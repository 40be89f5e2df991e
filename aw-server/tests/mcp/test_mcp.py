"""`aw-server mcp` driven by a real MCP client (the official Python SDK):
initialize, list the tools, call each against seeded data, and the
failures a client must see as errors, not a crash: an unknown tool, wrong
argument types, a query2 program that fails, a server that went away. With
no server, the database file is read beside a server that starts meanwhile.

AW_SERVER_BIN names the binary (scripts/test-mcp builds it).
"""

import asyncio
import json
import os
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError

BINARY = os.environ.get("AW_SERVER_BIN", "")
API_KEY = "mcp-test-admin-key"
DAY = {"start": "2026-03-10", "end": "2026-03-11", "tz": "UTC"}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Server:
    """The binary serving `root/aw.db` in testing mode, with an API key."""

    def __init__(self, root: Path):
        self.root = root
        self.port = free_port()
        config = root / "config" / "activitywatch" / "aw-server-rust"
        config.mkdir(parents=True, exist_ok=True)
        (config / "config-testing.toml").write_text(f'[auth]\napi_key = "{API_KEY}"\n')
        self.env = dict(
            os.environ,
            XDG_CONFIG_HOME=str(root / "config"),
            XDG_DATA_HOME=str(root / "data"),
            XDG_CACHE_HOME=str(root / "cache"),
            HOME=str(root),
        )
        self.env.pop("AW_SERVER_TOKEN", None)
        self.process = subprocess.Popen(
            [BINARY, "--testing", "--port", str(self.port), "--dbpath", str(root / "aw.db")],
            env=self.env,
            stdout=subprocess.DEVNULL,
            stderr=open(root / "server.log", "ab"),
        )
        deadline = time.monotonic() + 60
        while True:
            try:
                self.request("GET", "/api/0/info")
                return
            except (urllib.error.URLError, ConnectionError):
                if self.process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("the server did not start")
                time.sleep(0.05)

    def request(self, method: str, path: str, body=None, token: str = API_KEY):
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            f"http://127.0.0.1:{self.port}{path}",
            data=data,
            method=method,
            headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            text = response.read()
            return json.loads(text) if text else None

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=30)


def seed(server: Server):
    """One host's day: 1 h in Code, 30 min on GitHub in Firefox, then 20
    minutes of Terminal while away (AFK): 5400 s active."""
    for bucket, kind in [("window_mcphost", "currentwindow"), ("afk_mcphost", "afkstatus")]:
        server.request("POST", f"/api/0/buckets/{bucket}", {"type": kind, "client": "test", "hostname": "mcphost"})
    event = lambda start, seconds, data: {"timestamp": start, "duration": seconds, "data": data}
    server.request("POST", "/api/0/buckets/window_mcphost/events", [
        event("2026-03-10T09:00:00Z", 3600, {"app": "Code", "title": "main.rs - Code"}),
        event("2026-03-10T10:00:00Z", 1800, {"app": "Firefox", "title": "GitHub - Mozilla Firefox"}),
        event("2026-03-10T10:30:00Z", 1200, {"app": "Terminal", "title": "bash"}),
    ])
    server.request("POST", "/api/0/buckets/afk_mcphost/events", [
        event("2026-03-10T09:00:00Z", 5400, {"status": "not-afk"}),
        event("2026-03-10T10:30:00Z", 1200, {"status": "afk"}),
    ])


@pytest.fixture(scope="module")
def root():
    if not BINARY:
        raise RuntimeError("AW_SERVER_BIN must name the aw-server binary")
    with tempfile.TemporaryDirectory() as folder:
        yield Path(folder)


def session(args, env):
    """An MCP session with `aw-server mcp ARGS`."""
    params = StdioServerParameters(command=BINARY, args=["mcp", *args], env=env)

    class Session:
        async def __aenter__(self):
            self.client = stdio_client(params)
            read, write = await self.client.__aenter__()
            self.session = ClientSession(read, write)
            await self.session.__aenter__()
            self.init = await self.session.initialize()
            return self.session

        async def __aexit__(self, *exc):
            await self.session.__aexit__(*exc)
            await self.client.__aexit__(*exc)

    return Session()


def text(result) -> str:
    return result.content[0].text


def answer(result):
    assert not result.is_error, text(result)
    return json.loads(text(result))


def test_each_tool_against_the_running_server_with_a_read_token(root):
    server = Server(root)
    try:
        seed(server)
        made = server.request("POST", "/api/0/tokens", {"name": "assistant", "scope": "read"})
        env = dict(server.env, AW_SERVER_TOKEN=made["token"])
        expected = server.request("GET", "/api/0/summary?start=2026-03-10&end=2026-03-11&tz=UTC&by=app,category,day")

        async def run():
            client = session(["--testing", "--port", str(server.port)], env)
            async with client as mcp:
                assert client.init.server_info.name == "aw-server"
                tools = {tool.name: tool for tool in (await mcp.list_tools()).tools}
                assert set(tools) == {"list_buckets", "summary", "search", "query"}
                for tool in tools.values():
                    assert len(tool.description) > 50, tool.name
                # Every argument has a default: without any, today.
                assert not tools["summary"].input_schema.get("required"), tools["summary"].input_schema
                today = answer(await mcp.call_tool("summary", {"tz": "UTC"}))
                expected_today = server.request("GET", "/api/0/summary?start=today&end=tomorrow&tz=UTC")
                assert (today["start"], today["end"]) == (expected_today["start"], expected_today["end"])
                yesterday = answer(await mcp.call_tool("summary", {"start": "yesterday", "tz": "UTC"}))
                assert yesterday["end"] == today["start"], yesterday

                buckets = answer(await mcp.call_tool("list_buckets", {}))
                assert {b["id"] for b in buckets} == {"window_mcphost", "afk_mcphost"}
                assert {b["hostname"] for b in buckets} == {"mcphost"}

                summary = answer(await mcp.call_tool("summary", {**DAY, "by": "app,category,day"}))
                assert summary == expected, "the tool gives the endpoint's answer"
                assert summary["duration"] == 5400
                assert [(r["key"], r["duration"]) for r in summary["app"]] == [("Code", 3600), ("Firefox", 1800)]
                assert summary["day"][0]["first"] == "2026-03-10T09:00:00Z"

                found = answer(await mcp.call_tool("search", {**DAY, "text": "github"}))
                assert [(m["kind"], m["key"], m["duration"]) for m in found["matches"]] == [
                    ("title", "GitHub - Mozilla Firefox", 1800)
                ]

                results = answer(await mcp.call_tool("query", {
                    "program": 'RETURN = sum_durations(query_bucket("window_mcphost"));',
                    "timeperiods": ["2026-03-10T00:00:00Z/2026-03-11T00:00:00Z"],
                }))
                assert results == [6600]

        asyncio.run(run())
    finally:
        server.stop()


def test_bad_calls_are_errors_the_client_sees(root):
    server = Server(root)
    env = dict(server.env, AW_SERVER_TOKEN=API_KEY)

    async def run():
        async with session(["--testing", "--port", str(server.port)], env) as mcp:
            with pytest.raises(MCPError, match="tool not found"):
                await mcp.call_tool("delete_everything", {})
            wrong = await mcp.call_tool("summary", {"start": 5, "end": ["x"]})
            assert wrong.is_error and "invalid type" in text(wrong), text(wrong)
            bad_zone = await mcp.call_tool("summary", {**DAY, "tz": "Mars/Olympus"})
            assert bad_zone.is_error and "tz: 'Mars/Olympus'" in text(bad_zone), text(bad_zone)
            program = await mcp.call_tool("query", {
                "program": "RETURN = nope;",
                "timeperiods": ["2026-03-10T00:00:00Z/2026-03-11T00:00:00Z"],
            })
            assert program.is_error and "line 1, column 10" in text(program), text(program)
            # The server goes away mid-session: a clear tool error.
            server.stop()
            down = await mcp.call_tool("summary", DAY)
            assert down.is_error and f"127.0.0.1:{server.port}" in text(down), text(down)
            # The session itself still answers.
            assert len((await mcp.list_tools()).tools) == 4

    try:
        asyncio.run(run())
    finally:
        if server.process.poll() is None:
            server.stop()


def test_without_a_server_the_file_is_read_beside_a_server_starting(root):
    env = dict(os.environ, HOME=str(root), XDG_CONFIG_HOME=str(root / "config"),
               XDG_DATA_HOME=str(root / "data"), XDG_CACHE_HOME=str(root / "cache"))
    env.pop("AW_SERVER_TOKEN", None)

    async def run():
        async with session(["--dbpath", str(root / "aw.db")], env) as mcp:
            before = answer(await mcp.call_tool("summary", DAY))
            assert before["duration"] == 5400
            # A server starts on the same file while the session reads it.
            server = Server(root)
            try:
                server.request("POST", "/api/0/buckets/window_mcphost/events", [
                    {"timestamp": "2026-03-10T08:00:00Z", "duration": 60, "data": {"app": "Code", "title": "x"}},
                ])
                after = answer(await mcp.call_tool("summary", {**DAY, "by": "app"}))
                assert after["duration"] == 5400, "outside the AFK watcher's not-afk time"
                results = answer(await mcp.call_tool("query", {
                    "program": 'RETURN = sum_durations(query_bucket("window_mcphost"));',
                    "timeperiods": ["2026-03-10T00:00:00Z/2026-03-11T00:00:00Z"],
                }))
                assert results == [6660], "the new event is read"
            finally:
                server.stop()

    asyncio.run(run())
