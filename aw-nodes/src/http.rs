//! A node reached over its HTTP API with the server administrator's key
//! (`/api/0/users…`, `docs/API.md` §3.17 and §3.18).

use std::io::{Read, Write};
use std::path::Path;
use std::time::Duration;

use ureq::Agent;

use crate::{Node, NodesError};

/// How long connecting may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a step without a file may take.
const STEP_TIMEOUT: Duration = Duration::from_secs(120);
/// Bytes between two progress reports.
const PROGRESS_STEP: u64 = 4 << 20;

/// A node at `base` (`http://host:port`), with the server
/// administrator's key.
#[derive(Debug, Clone)]
pub struct HttpNode {
    base: String,
    key: String,
    agent: Agent,
}

impl HttpNode {
    pub fn new(base: &str, key: &str) -> HttpNode {
        let agent = Agent::config_builder()
            .timeout_connect(Some(CONNECT_TIMEOUT))
            .http_status_as_error(false)
            .build()
            .into();
        HttpNode {
            base: base.trim_end_matches('/').to_string(),
            key: key.to_string(),
            agent,
        }
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    fn bearer(&self) -> String {
        format!("Bearer {}", self.key)
    }

    fn unreachable(&self, error: impl std::fmt::Display) -> NodesError {
        NodesError::Unreachable {
            node: self.base.clone(),
            message: error.to_string(),
        }
    }

    /// The body of a success, else the node's refusal.
    fn answer(
        &self,
        result: Result<ureq::http::Response<ureq::Body>, ureq::Error>,
    ) -> Result<ureq::http::Response<ureq::Body>, NodesError> {
        let response = result.map_err(|error| self.unreachable(error))?;
        let status = response.status().as_u16();
        if (200..300).contains(&status) {
            return Ok(response);
        }
        let text = response.into_body().read_to_string().unwrap_or_default();
        let message = serde_json::from_str::<serde_json::Value>(&text)
            .ok()
            .and_then(|value| value["message"].as_str().map(str::to_string))
            .unwrap_or(text);
        Err(NodesError::Refused {
            node: self.base.clone(),
            status,
            message,
        })
    }

    fn json(
        &self,
        result: Result<ureq::http::Response<ureq::Body>, ureq::Error>,
    ) -> Result<serde_json::Value, NodesError> {
        let text = self
            .answer(result)?
            .into_body()
            .read_to_string()
            .map_err(|error| self.unreachable(error))?;
        serde_json::from_str(&text).map_err(|error| self.unreachable(error))
    }

    fn post(&self, path: &str) -> Result<serde_json::Value, NodesError> {
        let sent = self
            .agent
            .post(self.url(path))
            .config()
            .timeout_global(Some(STEP_TIMEOUT))
            .build()
            .header("Authorization", self.bearer())
            .header("Content-Type", "application/json")
            .send("{}");
        self.json(sent)
    }
}

impl HttpNode {
    /// The node's people as `GET /api/0/users` lists them, within
    /// `timeout` (a status page must not hang on a node that is down).
    pub fn people(&self, timeout: Duration) -> Result<serde_json::Value, NodesError> {
        let got = self
            .get("/api/0/users", timeout)
            .header("Authorization", self.bearer())
            .call();
        self.json(got)
    }

    /// A GET of `path` that gives up after `timeout`.
    fn get(
        &self,
        path: &str,
        timeout: Duration,
    ) -> ureq::RequestBuilder<ureq::typestate::WithoutBody> {
        self.agent
            .get(self.url(path))
            .config()
            .timeout_global(Some(timeout))
            .build()
    }
}

impl Node for HttpNode {
    fn name(&self) -> String {
        self.base.clone()
    }

    fn is_up(&self) -> Result<(), NodesError> {
        let got = self.get("/api/0/info", STEP_TIMEOUT).call();
        self.json(got).map(|_| ())
    }

    fn holds(&self, person: &str) -> Result<bool, NodesError> {
        let listed = self.people(STEP_TIMEOUT)?;
        Ok(listed
            .as_array()
            .is_some_and(|users| users.iter().any(|user| user["name"] == person)))
    }

    fn freeze(&self, person: &str) -> Result<u64, NodesError> {
        let frozen = self.post(&format!("/api/0/users/{person}/freeze"))?;
        Ok(frozen["bytes"].as_u64().unwrap_or(0))
    }

    fn thaw(&self, person: &str) -> Result<(), NodesError> {
        self.post(&format!("/api/0/users/{person}/thaw"))
            .map(|_| ())
    }

    fn download(
        &self,
        person: &str,
        to: &Path,
        progress: &mut dyn FnMut(u64),
    ) -> Result<u64, NodesError> {
        let got = self
            .agent
            .get(self.url(&format!("/api/0/users/{person}/file")))
            .header("Authorization", self.bearer())
            .call();
        let mut body = self.answer(got)?.into_body();
        let mut reader = body.with_config().limit(u64::MAX).reader();
        let mut file = std::fs::File::create(to)?;
        let mut buffer = vec![0u8; 1 << 16];
        let (mut done, mut told) = (0u64, 0u64);
        loop {
            let read = reader
                .read(&mut buffer)
                .map_err(|error| self.unreachable(error))?;
            if read == 0 {
                break;
            }
            file.write_all(&buffer[..read])?;
            done += read as u64;
            if done - told >= PROGRESS_STEP {
                progress(done);
                told = done;
            }
        }
        file.sync_all()?;
        progress(done);
        Ok(done)
    }

    fn upload(
        &self,
        person: &str,
        from: &Path,
        progress: &mut dyn FnMut(u64),
    ) -> Result<(), NodesError> {
        let file = std::fs::File::open(from)?;
        let length = file.metadata()?.len();
        let mut counted = Counted {
            inner: file,
            done: 0,
            told: 0,
            progress,
        };
        let sent = self
            .agent
            .put(self.url(&format!("/api/0/users/{person}/file")))
            .header("Authorization", self.bearer())
            .header("Content-Type", "application/vnd.sqlite3")
            .header("Content-Length", length.to_string())
            .send(ureq::SendBody::from_reader(&mut counted));
        self.json(sent).map(|_| ())
    }

    fn release(&self, person: &str) -> Result<Option<String>, NodesError> {
        let sent = self
            .agent
            .delete(self.url(&format!("/api/0/users/{person}")))
            .config()
            .timeout_global(Some(STEP_TIMEOUT))
            .build()
            .header("Authorization", self.bearer())
            .call();
        let removed = self.json(sent)?;
        Ok(removed["moved_to"].as_str().map(str::to_string))
    }
}

/// A reader that tells how much was read.
struct Counted<'p, R> {
    inner: R,
    done: u64,
    told: u64,
    progress: &'p mut dyn FnMut(u64),
}

impl<R: Read> Read for Counted<'_, R> {
    fn read(&mut self, buffer: &mut [u8]) -> std::io::Result<usize> {
        let read = self.inner.read(buffer)?;
        self.done += read as u64;
        if read == 0 || self.done - self.told >= PROGRESS_STEP {
            (self.progress)(self.done);
            self.told = self.done;
        }
        Ok(read)
    }
}
