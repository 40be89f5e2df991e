//! A server binary under test: started on a free port and a fresh database,
//! measured through `/proc`, stopped with SIGTERM.

use std::collections::HashMap;
use std::fs;
use std::io;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use tempfile::TempDir;

/// A running server and the private directories it writes to.
#[derive(Debug)]
pub struct ServerProcess {
    /// A name for reports (the binary's label).
    pub label: String,
    binary: PathBuf,
    port: u16,
    root: TempDir,
    child: Option<Child>,
}

impl ServerProcess {
    /// Starts `binary` in testing mode on a free port with an empty database
    /// in a temporary directory; returns once `/api/0/buckets/` answers.
    pub fn start(label: &str, binary: &Path) -> io::Result<ServerProcess> {
        let root = tempfile::Builder::new().prefix("aw-bench-").tempdir()?;
        let mut server = ServerProcess {
            label: label.to_string(),
            binary: binary.to_path_buf(),
            port: free_port()?,
            root,
            child: None,
        };
        server.launch()?;
        Ok(server)
    }

    /// Stops the server (SIGTERM) and starts it again on the same database;
    /// returns the time until `/api/0/buckets/` answered.
    pub fn restart(&mut self) -> io::Result<Duration> {
        self.stop()?;
        self.launch()
    }

    fn launch(&mut self) -> io::Result<Duration> {
        let started = Instant::now();
        let dirs = ["config", "data", "cache"].map(|name| self.root.path().join(name));
        for dir in &dirs {
            fs::create_dir_all(dir)?;
        }
        // Appended: what a killed server said stays beside what it says
        // after its restart.
        let log = fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.log_path())?;
        let child = Command::new(&self.binary)
            .args(["--testing", "--port", &self.port.to_string(), "--dbpath"])
            .arg(self.root.path().join("bench.db"))
            .env("XDG_CONFIG_HOME", &dirs[0])
            .env("XDG_DATA_HOME", &dirs[1])
            .env("XDG_CACHE_HOME", &dirs[2])
            .env_remove("RUST_LOG")
            // Warnings only: the reference logs every request in testing
            // mode otherwise (at about half its heartbeat throughput), while
            // this server logs requests only with `--verbose`. Like for like.
            .env("LOG_LEVEL", "warn")
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log)
            .spawn()?;
        self.child = Some(child);
        let agent = crate::http::agent();
        let url = format!("{}/api/0/buckets/", self.url());
        let deadline = started + Duration::from_secs(60);
        while Instant::now() < deadline {
            if let Ok(response) = agent.get(&url).call() {
                // 401: a server with an API key, answering.
                if response.status() == 200 || response.status() == 401 {
                    return Ok(started.elapsed());
                }
            }
            if let Some(status) = self
                .child
                .as_mut()
                .and_then(|c| c.try_wait().ok().flatten())
            {
                return Err(io::Error::other(format!(
                    "{} exited during startup ({status}); see {}",
                    self.label,
                    self.log_path().display()
                )));
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        Err(io::Error::other(format!(
            "{} did not answer within 60 s",
            self.label
        )))
    }

    /// What the server logs (warnings and errors), over all its starts.
    pub fn log_path(&self) -> PathBuf {
        self.root.path().join("server.log")
    }

    /// The database file the server runs on.
    pub fn db_path(&self) -> PathBuf {
        self.root.path().join("bench.db")
    }

    /// The config file the server reads at its next start (testing mode).
    pub fn config_file(&self) -> PathBuf {
        self.root
            .path()
            .join("config")
            .join("activitywatch")
            .join("aw-server-rust")
            .join("config-testing.toml")
    }

    /// `http://127.0.0.1:<port>`.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// CPU time (user + system) the server has used so far.
    pub fn cpu_time(&self) -> Duration {
        let Some(stat) = self
            .pid()
            .and_then(|pid| fs::read_to_string(format!("/proc/{pid}/stat")).ok())
        else {
            return Duration::ZERO;
        };
        // Fields after the parenthesised command name; utime and stime are
        // the 14th and 15th fields of the whole line, in clock ticks.
        let fields: Vec<&str> = stat
            .rsplit_once(')')
            .map(|(_, rest)| rest.split_whitespace().collect())
            .unwrap_or_default();
        let ticks: u64 = [11, 12]
            .iter()
            .filter_map(|&index| fields.get(index)?.parse::<u64>().ok())
            .sum();
        // Linux reports these in USER_HZ, which is 100 on every platform it runs on.
        Duration::from_millis(ticks * 10)
    }

    /// Context switches (voluntary and involuntary) of each of the
    /// server's threads so far, by thread id (`/proc/<pid>/task/*/status`).
    pub fn thread_switches(&self) -> HashMap<u32, u64> {
        let Some(pid) = self.pid() else {
            return HashMap::new();
        };
        let Ok(tasks) = fs::read_dir(format!("/proc/{pid}/task")) else {
            return HashMap::new();
        };
        tasks
            .filter_map(|task| {
                let task = task.ok()?;
                let tid = task.file_name().to_str()?.parse::<u32>().ok()?;
                let status = fs::read_to_string(task.path().join("status")).ok()?;
                let switches = status
                    .lines()
                    .filter(|line| line.contains("ctxt_switches:"))
                    .filter_map(|line| line.split_whitespace().nth(1)?.parse::<u64>().ok())
                    .sum();
                Some((tid, switches))
            })
            .collect()
    }

    /// Makes the kernel's record of the server's peak resident memory
    /// (`VmHWM`) its current size, so that [`ServerProcess::memory`] then gives
    /// the peak since this call (Linux 4.0 and later; elsewhere, or if
    /// refused, the peak stays the one since start).
    pub fn reset_peak_memory(&self) {
        if let Some(pid) = self.pid() {
            let _ = fs::write(format!("/proc/{pid}/clear_refs"), "5");
        }
    }

    /// Resident memory now and its peak since start (or since
    /// [`ServerProcess::reset_peak_memory`]), in bytes.
    pub fn memory(&self) -> (u64, u64) {
        let status = self
            .pid()
            .and_then(|pid| fs::read_to_string(format!("/proc/{pid}/status")).ok())
            .unwrap_or_default();
        let field = |name: &str| {
            status
                .lines()
                .find_map(|line| line.strip_prefix(name))
                .and_then(|rest| rest.split_whitespace().next()?.parse::<u64>().ok())
                .map_or(0, |kib| kib * 1024)
        };
        (field("VmRSS:"), field("VmHWM:"))
    }

    /// Stops the server and puts a copy of `source` (with its WAL, if that
    /// has content) in place of its database, with no fingerprint of a
    /// clean close: the next [`ServerProcess::restart`] serves it as a
    /// file it meets for the first time.
    pub fn replace_database(&mut self, source: &Path) -> io::Result<()> {
        self.stop()?;
        let db = self.db_path();
        for suffix in ["", "-wal", "-shm", ".lock"] {
            let _ = fs::remove_file(with_suffix(&db, suffix));
        }
        fs::copy(source, &db)?;
        let wal = with_suffix(source, "-wal");
        if fs::metadata(&wal).is_ok_and(|meta| meta.len() > 0) {
            fs::copy(&wal, with_suffix(&db, "-wal"))?;
        }
        Ok(())
    }

    /// Kills the server (SIGKILL: no clean close, as a power cut) and
    /// starts it again on the same database; returns the time until
    /// `/api/0/buckets/` answered.
    pub fn crash_and_restart(&mut self) -> io::Result<Duration> {
        self.crash()?;
        self.launch()
    }

    /// Kills the server (SIGKILL) and leaves it down.
    pub fn crash(&mut self) -> io::Result<()> {
        if let Some(mut child) = self.child.take() {
            child.kill()?;
            child.wait()?;
        }
        Ok(())
    }

    /// Starts a server that is down (crashed or stopped) again on the
    /// same port and database; returns the time until it answered.
    pub fn start_again(&mut self) -> io::Result<Duration> {
        self.launch()
    }

    /// Sends SIGTERM and waits for the exit.
    pub fn stop(&mut self) -> io::Result<()> {
        if let Some(mut child) = self.child.take() {
            Command::new("kill")
                .args(["-TERM", &child.id().to_string()])
                .status()?;
            let deadline = Instant::now() + Duration::from_secs(30);
            while child.try_wait()?.is_none() {
                if Instant::now() > deadline {
                    child.kill()?;
                    break;
                }
                std::thread::sleep(Duration::from_millis(5));
            }
            child.wait()?;
        }
        Ok(())
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Makes a token on `server` (`POST /api/0/tokens` with `body`), with
/// `admin` as the credential if given; answers its secret. Panics on any
/// answer but 201.
pub fn make_token(server: &ServerProcess, admin: Option<&str>, body: serde_json::Value) -> String {
    let mut connection = crate::http::Connection::new(&server.url());
    if let Some(secret) = admin {
        connection = connection.with_header("Authorization", &format!("Bearer {secret}"));
    }
    let reply = connection
        .post_json("/api/0/tokens", body.to_string().as_bytes())
        .expect("token");
    assert_eq!(
        reply.status,
        201,
        "{}",
        String::from_utf8_lossy(&reply.body)
    );
    let made: serde_json::Value = serde_json::from_slice(&reply.body).expect("JSON");
    made["token"].as_str().expect("a token").to_string()
}

/// A port nothing listens on now.
pub fn free_port() -> io::Result<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

/// `path` with `suffix` added to its name.
pub fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

/// Counts a server's wake-ups over a stretch of time: the context
/// switches (voluntary and involuntary) of all its threads, each a thread
/// put to sleep or preempted. Threads come and go (Rocket's blocking pool
/// ends idle ones), so each thread's count is followed by its id: a thread
/// that ended since the last [`Switches::sample`] takes its switches since
/// then along, which sampling every second keeps small.
#[derive(Debug, Default)]
pub struct Switches {
    first: HashMap<u32, u64>,
    last: HashMap<u32, u64>,
    ended: u64,
}

impl Switches {
    /// Starts counting now.
    pub fn start(server: &ServerProcess) -> Switches {
        let first = server.thread_switches();
        Switches {
            last: first.clone(),
            first,
            ended: 0,
        }
    }

    /// Looks at the threads again.
    pub fn sample(&mut self, server: &ServerProcess) {
        let now = server.thread_switches();
        for (tid, last) in &self.last {
            if !now.contains_key(tid) {
                self.ended += last - self.first.get(tid).copied().unwrap_or(0);
            }
        }
        self.last = now;
    }

    /// The switches since [`Switches::start`], up to the last sample.
    pub fn count(&self) -> u64 {
        self.ended
            + self
                .last
                .iter()
                .map(|(tid, last)| last.saturating_sub(self.first.get(tid).copied().unwrap_or(0)))
                .sum::<u64>()
    }
}
