//! The proxy's side of a person's route: HAProxy's runtime API (its
//! stats socket: `set map`, `add map`, `show map`) changes the route of
//! the running proxy, and the map file (`person node` lines) keeps it
//! for the next start or reload.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::NodesError;

/// How long a command of the runtime API may take.
const TIMEOUT: Duration = Duration::from_secs(10);

/// Where HAProxy's runtime API listens: `stats socket` in its config, a
/// Unix socket's path or `host:port`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RuntimeApi {
    Unix(PathBuf),
    Tcp(String),
}

impl RuntimeApi {
    /// `/run/haproxy/admin.sock`, `unix:/path` or `tcp:127.0.0.1:9999`
    /// (a bare `host:port` too).
    pub fn parse(text: &str) -> RuntimeApi {
        if let Some(path) = text.strip_prefix("unix:") {
            return RuntimeApi::Unix(PathBuf::from(path));
        }
        if let Some(address) = text.strip_prefix("tcp:") {
            return RuntimeApi::Tcp(address.to_string());
        }
        if text.starts_with('/') || text.starts_with('.') {
            RuntimeApi::Unix(PathBuf::from(text))
        } else {
            RuntimeApi::Tcp(text.to_string())
        }
    }

    /// Sends one command; HAProxy's answer (it closes the connection
    /// after one command).
    pub fn command(&self, command: &str) -> Result<String, NodesError> {
        let failed = |error: std::io::Error| {
            NodesError::Proxy(format!("HAProxy's runtime API at {self}: {error}"))
        };
        let mut answer = String::new();
        match self {
            RuntimeApi::Unix(path) => {
                #[cfg(unix)]
                {
                    let mut stream =
                        std::os::unix::net::UnixStream::connect(path).map_err(failed)?;
                    stream.set_read_timeout(Some(TIMEOUT)).map_err(failed)?;
                    stream
                        .write_all(format!("{command}\n").as_bytes())
                        .map_err(failed)?;
                    stream.read_to_string(&mut answer).map_err(failed)?;
                }
                #[cfg(not(unix))]
                {
                    let _ = path;
                    return Err(NodesError::Proxy(
                        "a Unix socket needs a Unix system: give tcp:HOST:PORT".to_string(),
                    ));
                }
            }
            RuntimeApi::Tcp(address) => {
                let mut stream = std::net::TcpStream::connect(address).map_err(failed)?;
                stream.set_read_timeout(Some(TIMEOUT)).map_err(failed)?;
                stream
                    .write_all(format!("{command}\n").as_bytes())
                    .map_err(failed)?;
                stream.read_to_string(&mut answer).map_err(failed)?;
            }
        }
        Ok(answer)
    }

    /// Routes `key` to `value` in the running proxy's map `map` (its
    /// file's path as the config names it): the entry changed in place,
    /// or added when it has none, so no request finds no route between.
    pub fn set_route(&self, map: &str, key: &str, value: &str) -> Result<(), NodesError> {
        let answer = self.command(&format!("set map {map} {key} {value}"))?;
        let answer = answer.trim();
        if answer.is_empty() {
            return Ok(());
        }
        if !answer.to_ascii_lowercase().contains("not found") {
            return Err(NodesError::Proxy(format!(
                "HAProxy refused `set map {map} {key} {value}`: {answer}"
            )));
        }
        let answer = self.command(&format!("add map {map} {key} {value}"))?;
        match answer.trim() {
            "" => Ok(()),
            refused => Err(NodesError::Proxy(format!(
                "HAProxy refused `add map {map} {key} {value}`: {refused}"
            ))),
        }
    }

    /// The running proxy's route of `key` in `map`, if it has one.
    pub fn route(&self, map: &str, key: &str) -> Result<Option<String>, NodesError> {
        let answer = self.command(&format!("show map {map}"))?;
        if answer.to_ascii_lowercase().contains("unknown map") {
            return Err(NodesError::Proxy(format!(
                "HAProxy has no map {map}: {}",
                answer.trim()
            )));
        }
        // Lines are `<ref id> <key> <value>`.
        Ok(answer.lines().find_map(|line| {
            let mut words = line.split_whitespace();
            let (_, found, value) = (words.next()?, words.next()?, words.next()?);
            (found == key).then(|| value.to_string())
        }))
    }
}

impl std::fmt::Display for RuntimeApi {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RuntimeApi::Unix(path) => write!(f, "unix:{}", path.display()),
            RuntimeApi::Tcp(address) => write!(f, "tcp:{address}"),
        }
    }
}

/// The value of `key` in map file `path` (`key value` lines, `#`
/// comments).
pub fn read_route(path: &Path, key: &str) -> Result<Option<String>, NodesError> {
    let text = std::fs::read_to_string(path)
        .map_err(|error| NodesError::Proxy(format!("the map file {}: {error}", path.display())))?;
    Ok(text.lines().find_map(|line| {
        let mut words = line.split_whitespace();
        let found = words.next().filter(|word| !word.starts_with('#'))?;
        (found == key).then(|| words.next().unwrap_or_default().to_string())
    }))
}

/// Writes `key value` into map file `path` in place of `key`'s line (or
/// appended), keeping every other line; the file is replaced whole
/// (written beside it, then renamed), so a reload never reads half.
pub fn write_route(path: &Path, key: &str, value: &str) -> Result<(), NodesError> {
    let failed = |error: std::io::Error| {
        NodesError::Proxy(format!("the map file {}: {error}", path.display()))
    };
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(error) => return Err(failed(error)),
    };
    let mut written = false;
    let mut lines: Vec<String> = Vec::new();
    for line in text.lines() {
        let first = line.split_whitespace().next();
        if first == Some(key) {
            if !written {
                lines.push(format!("{key} {value}"));
                written = true;
            }
        } else {
            lines.push(line.to_string());
        }
    }
    if !written {
        lines.push(format!("{key} {value}"));
    }
    let mut beside = path.as_os_str().to_owned();
    beside.push(".new");
    let beside = PathBuf::from(beside);
    std::fs::write(&beside, lines.join("\n") + "\n").map_err(failed)?;
    std::fs::rename(&beside, path).map_err(failed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_route_is_changed_in_place_and_every_other_line_kept() {
        let folder = tempfile::tempdir().unwrap();
        let map = folder.path().join("people.map");
        std::fs::write(&map, "# person node\nalice node1\nbob node2\n").unwrap();
        write_route(&map, "alice", "node3").unwrap();
        write_route(&map, "carol", "node1").unwrap();
        assert_eq!(
            std::fs::read_to_string(&map).unwrap(),
            "# person node\nalice node3\nbob node2\ncarol node1\n"
        );
        assert_eq!(read_route(&map, "alice").unwrap().as_deref(), Some("node3"));
        assert_eq!(read_route(&map, "dave").unwrap(), None);
        assert_eq!(read_route(&map, "#").unwrap(), None);
    }

    #[test]
    fn the_runtime_api_is_named_as_the_config_names_it() {
        assert_eq!(
            RuntimeApi::parse("/run/haproxy/admin.sock"),
            RuntimeApi::Unix("/run/haproxy/admin.sock".into())
        );
        assert_eq!(
            RuntimeApi::parse("unix:./a.sock"),
            RuntimeApi::Unix("./a.sock".into())
        );
        assert_eq!(
            RuntimeApi::parse("127.0.0.1:9999"),
            RuntimeApi::Tcp("127.0.0.1:9999".into())
        );
        assert_eq!(
            RuntimeApi::parse("tcp:localhost:1"),
            RuntimeApi::Tcp("localhost:1".into())
        );
    }
}
