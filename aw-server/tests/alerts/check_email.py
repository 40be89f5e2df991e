"""Alerts by e-mail, end to end, against aiosmtpd. Run by scripts/test-alerts:

    python check_email.py AW_SERVER_BINARY

An SMTP server on loopback offers STARTTLS with a self-signed certificate
(made with openssl) and requires it, and a login, before it takes mail.
The aw-server binary gets its own folders; days are seeded through the API
by a first start without [alerts], then [alerts] is written to its config
(smtp_url with a user, smtp_password_file, smtp_ca_file, a daily digest at
00:00 UTC) and it is started again. Checked:

1. the daily digest arrives by itself, once, as text and HTML parts that
   name yesterday's categories and durations and the goal's outcome;
2. `aw-server alerts digest --send --week` sends the last week's;
3. data arriving today crosses a limit: one message, within the check
   interval, with the numbers and without the window title;
4. a test message the SMTP server refuses once is reported as refused
   (the answer and the status), tried again, and arrives once;
5. with smtps:// a test message goes over TLS from the first byte.

Any failure raises; the exit status is then 1.
"""

import email
import email.policy
import json
import os
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
import logging
from datetime import date, datetime, timedelta, timezone
from pathlib import Path

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword

# aiosmtpd warns of an attribute it sets itself at every login.
logging.getLogger("mail.log").setLevel(logging.ERROR)

KEY = "alerts-test-key"
USER, PASSWORD = "aw", "a password"
PRIVATE = "my private thought"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def expect(condition: bool, message: str) -> None:
    if not condition:
        raise AssertionError(message)


class Mailbox:
    """The SMTP server's handler: keeps each message; refuses the next
    `refuse` ones."""

    def __init__(self):
        self.messages = []
        self.refused = 0
        self.refuse = 0
        self.lock = threading.Lock()

    async def handle_DATA(self, server, session, envelope):
        with self.lock:
            if self.refuse > 0:
                self.refuse -= 1
                self.refused += 1
                return "554 5.7.1 Refused by the test"
            self.messages.append(
                (envelope.mail_from, list(envelope.rcpt_tos), envelope.content, session.authenticated)
            )
        return "250 OK"

    def parsed(self):
        with self.lock:
            return [
                email.message_from_bytes(content, policy=email.policy.default)
                for (_, _, content, _) in self.messages
            ]

    def wait_for(self, count: int, what: str, seconds: float = 60):
        deadline = time.monotonic() + seconds
        while True:
            messages = self.parsed()
            if len(messages) >= count:
                return messages
            if time.monotonic() > deadline:
                raise AssertionError(f"waited for {what}; got {[m['Subject'] for m in messages]}")
            time.sleep(0.05)


def authenticate(server, session, envelope, mechanism, auth_data):
    if isinstance(auth_data, LoginPassword) and (
        auth_data.login.decode(),
        auth_data.password.decode(),
    ) == (USER, PASSWORD):
        return AuthResult(success=True)
    return AuthResult(success=False, handled=False)


class Server:
    def __init__(self, binary: str, root: Path, port: int):
        self.binary, self.root, self.port = binary, root, port
        self.url = f"http://127.0.0.1:{port}"
        self.env = dict(
            os.environ,
            XDG_CONFIG_HOME=str(root / "config"),
            XDG_DATA_HOME=str(root / "data"),
            XDG_CACHE_HOME=str(root / "cache"),
            HOME=str(root),
        )
        self.log_path = root / "server.log"
        self.log = open(self.log_path, "ab")
        self.process = subprocess.Popen(
            [binary, "--testing", "--port", str(port), "--dbpath", str(root / "test.db")],
            env=self.env,
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
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-40:])

    def request(self, method, path, body=None):
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(f"{self.url}{path}", data=data, method=method)
        request.add_header("Authorization", f"Bearer {KEY}")
        if data is not None:
            request.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(request, timeout=60) as reply:
                text = reply.read().decode()
                return reply.status, json.loads(text) if text else None
        except urllib.error.HTTPError as error:
            return error.code, error.read().decode()

    def ok(self, method, path, body=None):
        status, answer = self.request(method, path, body)
        expect(status in (200, 201), f"{method} {path}: {status} {answer}")
        return answer

    def command(self, *args):
        return subprocess.run(
            [self.binary, *args, "--testing", "--port", str(self.port)],
            env=dict(self.env, AW_SERVER_TOKEN=KEY),
            capture_output=True,
            text=True,
            timeout=120,
        )

    def stop(self) -> None:
        self.process.terminate()
        try:
            code = self.process.wait(timeout=30)
        finally:
            self.log.close()
        expect(code == 0, f"server exited with {code} on SIGTERM")


def stamp(at: datetime) -> str:
    return at.astimezone(timezone.utc).isoformat()


def seed_day(server: Server, start: datetime, minutes: float, app: str, title: str) -> None:
    for bucket, data in [
        ("aw-watcher-window_mailhost", {"app": app, "title": title}),
        ("aw-watcher-afk_mailhost", {"status": "not-afk"}),
    ]:
        server.ok(
            "POST",
            f"/api/0/buckets/{bucket}/events",
            [{"timestamp": stamp(start), "duration": minutes * 60, "data": data}],
        )


def parts(message) -> tuple:
    expect(message.get_content_type() == "multipart/alternative", message.get_content_type())
    text = message.get_body(preferencelist=("plain",)).get_content()
    html = message.get_body(preferencelist=("html",)).get_content()
    return text, html


def main() -> None:
    binary = sys.argv[1]
    root = Path(tempfile.mkdtemp(prefix="aw-alerts-"))
    cert, key = root / "smtp.pem", root / "smtp.key"
    subprocess.run(
        [
            "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
            "-subj", "/CN=127.0.0.1", "-keyout", str(key), "-out", str(cert),
            "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
            "-addext", "basicConstraints=critical,CA:FALSE",
        ],
        check=True,
        capture_output=True,
    )
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    mailbox = Mailbox()
    smtp_port = free_port()
    controller = Controller(
        mailbox,
        hostname="127.0.0.1",
        port=smtp_port,
        tls_context=context,
        require_starttls=True,
        authenticator=authenticate,
        auth_require_tls=True,
        auth_required=True,
    )
    controller.start()
    config_dir = root / "config" / "activitywatch" / "aw-server-rust"
    config_dir.mkdir(parents=True)
    config = config_dir / "config-testing.toml"
    config.write_text(f'[auth]\napi_key = "{KEY}"\n')
    port = free_port()

    # 1. The days, seeded before alerts are on.
    server = Server(binary, root, port)
    for bucket, kind in [
        ("aw-watcher-window_mailhost", "currentwindow"),
        ("aw-watcher-afk_mailhost", "afkstatus"),
    ]:
        server.ok("POST", f"/api/0/buckets/{bucket}", {"type": kind, "client": "test", "hostname": "mailhost"})
    server.ok(
        "POST",
        "/api/0/settings/classes",
        [
            {"name": ["Work", "Programming"], "rule": {"type": "regex", "regex": "Code"}},
            {"name": ["Media", "Social Media"], "rule": {"type": "regex", "regex": "Twitter"}},
        ],
    )
    server.ok("POST", "/api/0/settings/startOfDay", "00:00")
    server.ok(
        "POST",
        "/api/0/settings/aw-notify",
        {
            "alerts": [
                {"category": "Work", "label": "Deep work", "thresholds_minutes": [60], "positive": True},
                {"category": "Media > Social Media", "label": "Social media",
                 "thresholds_minutes": [60], "positive": False},
            ],
            "hourly_checkins": False,
        },
    )
    now = datetime.now(timezone.utc)
    today = now.date()
    midnight = lambda day: datetime(day.year, day.month, day.day, tzinfo=timezone.utc)
    yesterday = today - timedelta(days=1)
    last_monday = today - timedelta(days=today.weekday() + 7)
    seeded = {}  # date -> {category: minutes}
    def seed(day: date, hour: int, minutes: float, app: str, title: str, category: str):
        seed_day(server, midnight(day) + timedelta(hours=hour), minutes, app, title)
        seeded.setdefault(day, {}).setdefault(category, 0)
        seeded[day][category] += minutes
    seed(yesterday, 10, 90, "Code", "main.rs - Code", "Work > Programming")
    seed(yesterday, 14, 20, "Firefox", f"Twitter: {PRIVATE}", "Media > Social Media")
    if last_monday != yesterday:
        seed(last_monday, 9, 60, "Code", "lib.rs - Code", "Work > Programming")
    last_wednesday = last_monday + timedelta(days=2)
    if last_wednesday != yesterday:
        seed(last_wednesday, 12, 45, "Firefox", f"Twitter: {PRIVATE}", "Media > Social Media")
    server.stop()

    # 2. [alerts] from the config, and a start: yesterday's digest is due.
    password_file = root / "smtp-password"
    password_file.write_text(PASSWORD + "\n")
    config.write_text(
        f'[auth]\napi_key = "{KEY}"\n\n[alerts]\n'
        f'smtp_url = "smtp://{USER}@127.0.0.1:{smtp_port}"\n'
        f'smtp_password_file = "{password_file}"\nsmtp_ca_file = "{cert}"\n'
        f'email_from = "aw-server <aw@example.org>"\nemail_to = ["me@example.org"]\n'
        f'check_interval = 1\ntz = "UTC"\ndigest = "daily"\ndigest_time = "00:00"\n'
        # The seeded watchers' host is not this machine's.
        'hosts = "all"\n'
    )
    server = Server(binary, root, port)
    try:
        daily = mailbox.wait_for(1, "the daily digest")[0]
        with mailbox.lock:
            sender, recipients, _, authenticated = mailbox.messages[0]
        expect(sender == "aw@example.org" and recipients == ["me@example.org"], (sender, recipients))
        expect(authenticated, "the server logged in")
        expect(
            daily["Subject"] == f"Activity digest for {yesterday}: 1h 50m active",
            daily["Subject"],
        )
        text, html = parts(daily)
        for needle in ["Work > Programming", "1:30:00", "Media > Social Media", "0:20:00", "Code",
                       "Deep work: reached (at least 1h, 1h 30m)",
                       "Social media: kept (under 1h, 20m)"]:
            expect(needle in text, f"{needle!r} not in the text part:\n{text}")
        for needle in ["Work &gt; Programming", "1:30:00", "<table", "Deep work: reached"]:
            expect(needle in html, f"{needle!r} not in the HTML part:\n{html}")
        expect(PRIVATE not in text and PRIVATE not in html, "a window title in the digest")
        status = server.ok("GET", "/api/0/alerts/status")
        expect(status["digest"]["last_sent"] == str(yesterday), status["digest"])
        expect(status["digest"]["next"].startswith(str(today + timedelta(days=1))), status["digest"])
        print(f"daily digest: {daily['Subject']!r}, text {len(text)} and HTML {len(html)} characters")

        # 3. The weekly one, asked for.
        done = server.command("alerts", "digest", "--send", "--week")
        expect(done.returncode == 0, f"alerts digest: {done.returncode}\n{done.stdout}\n{done.stderr}")
        expect("Sent by email" in done.stderr, done.stderr)
        weekly = mailbox.wait_for(2, "the weekly digest")[1]
        week_days = [last_monday + timedelta(days=n) for n in range(7)]
        work = sum(seeded.get(day, {}).get("Work > Programming", 0) for day in week_days)
        social = sum(seeded.get(day, {}).get("Media > Social Media", 0) for day in week_days)
        expect(weekly["Subject"].startswith(f"Activity digest for the week of {last_monday}:"), weekly["Subject"])
        text, html = parts(weekly)
        hms = lambda minutes: f"{int(minutes // 60)}:{int(minutes % 60):02d}:00"
        for needle in ["Work > Programming", hms(work), "Media > Social Media", hms(social), "By day",
                       str(last_wednesday), "Deep work: reached on"]:
            expect(needle in text, f"{needle!r} not in the weekly text part:\n{text}")
        expect(hms(work) in html and "Media &gt; Social Media" in html, html)
        expect(done.stdout.startswith(weekly["Subject"]), done.stdout[:200])
        print(f"weekly digest: {weekly['Subject']!r} (work {hms(work)}, social {hms(social)})")

        # 4. A limit crossed by data arriving now: one message, in time.
        # A day that began two to three hours ago: the last 71 minutes are
        # all today's and yesterday's seeded afternoon (which ends at 14:20)
        # is not, whatever the time of the run (a day that began twelve
        # hours ago took in yesterday's 20 minutes of Twitter at 00:25).
        began = (datetime.now(timezone.utc) - timedelta(hours=2)).hour
        server.ok("POST", "/api/0/settings/startOfDay", f"{began:02d}:00")
        now = datetime.now(timezone.utc)
        seed_day(server, now - timedelta(minutes=71), 70, "Firefox", f"Twitter: {PRIVATE}")
        arrived = time.monotonic()
        limit = mailbox.wait_for(3, "the limit's message", seconds=30)[2]
        took = time.monotonic() - arrived
        expect(limit["Subject"] == "Time spent: Social media", limit["Subject"])
        body = limit.get_content()
        expect(body.startswith("Social media: 1h  (1h 10m today)"), body)
        expect(PRIVATE not in body and "Twitter" not in body, body)
        print(f"limit told after {took:.1f} s: {limit['Subject']!r}: {body.strip()!r}")

        # 5. A refusal: said, retried, delivered once.
        mailbox.refuse = 1
        status, answer = server.request("POST", "/api/0/alerts/test")
        expect(status == 200, f"{status} {answer}")
        email_outcome = answer["channels"][0]
        expect(email_outcome["channel"] == "email" and not email_outcome["delivered"], answer)
        expect("554" in email_outcome["error"], email_outcome["error"])
        failures = server.ok("GET", "/api/0/alerts/status")["failures"]
        expect(failures and "554" in failures[0]["error"], failures)
        tested = mailbox.wait_for(4, "the test message, tried again", seconds=30)[3]
        expect(tested["Subject"] == "aw-server: a test message", tested["Subject"])
        time.sleep(3)
        subjects = [m["Subject"] for m in mailbox.parsed()]
        expect(len(subjects) == 4, f"each message once: {subjects}")
        expect(mailbox.refused == 1, mailbox.refused)
        status = server.ok("GET", "/api/0/alerts/status")
        expect(status["pending"] == [], status["pending"])
        print(f"refused once ({failures[0]['error']!r}), then delivered; {len(subjects)} messages in all")
    except BaseException:
        print(server.tail(), file=sys.stderr)
        raise
    finally:
        server.stop()
        controller.stop()

    # 6. smtps://: TLS from the first byte, to a server that speaks nothing else.
    tls_box = Mailbox()
    tls_port = free_port()
    implicit = Controller(tls_box, hostname="127.0.0.1", port=tls_port, ssl_context=context)
    implicit.start()
    config.write_text(
        f'[auth]\napi_key = "{KEY}"\n\n[alerts]\n'
        f'smtp_url = "smtps://127.0.0.1:{tls_port}"\nsmtp_ca_file = "{cert}"\n'
        f'email_from = "aw@example.org"\nemail_to = "me@example.org"\n'
    )
    server = Server(binary, root, port)
    try:
        status, answer = server.request("POST", "/api/0/alerts/test")
        expect(status == 200 and answer["channels"][0]["delivered"], f"{status} {answer}")
        tested = tls_box.wait_for(1, "the test message over smtps")[0]
        expect(tested["Subject"] == "aw-server: a test message", tested["Subject"])
        print("smtps: the test message arrived over TLS from the first byte")
    except BaseException:
        print(server.tail(), file=sys.stderr)
        raise
    finally:
        server.stop()
        implicit.stop()


if __name__ == "__main__":
    main()
