//! The benchmark's HTTP client: blocking, keep-alive, no TLS.

use std::io::{BufRead, Write};
use std::time::Duration;

/// A client that keeps its connection open between requests and reports
/// every status as a response rather than an error.
pub fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(300)))
        .max_idle_connections_per_host(16)
        .build()
        .into()
}

/// What one request returned.
#[derive(Debug)]
pub struct Reply {
    /// HTTP status.
    pub status: u16,
    /// The whole body.
    pub body: Vec<u8>,
}

/// The JSON body of a 200 answer (`null` if it has none); panics with
/// `what` and the body on any other status.
pub fn check(reply: Reply, what: &str) -> serde_json::Value {
    assert_eq!(
        reply.status,
        200,
        "{what}: {}",
        String::from_utf8_lossy(&reply.body)
    );
    serde_json::from_slice(&reply.body).unwrap_or(serde_json::Value::Null)
}

/// `GET url`.
pub fn get(agent: &ureq::Agent, url: &str) -> Result<Reply, ureq::Error> {
    let mut response = agent.get(url).call()?;
    read(&mut response)
}

/// `POST url` with a JSON body.
pub fn post_json(agent: &ureq::Agent, url: &str, body: &[u8]) -> Result<Reply, ureq::Error> {
    let mut response = agent
        .post(url)
        .header("Content-Type", "application/json")
        .send(body)?;
    read(&mut response)
}

fn read(response: &mut ureq::http::Response<ureq::Body>) -> Result<Reply, ureq::Error> {
    let status = response.status().as_u16();
    let body = response
        .body_mut()
        .with_config()
        .limit(u64::MAX)
        .read_to_vec()?;
    Ok(Reply { status, body })
}

/// A lean HTTP/1.1 client on one kept-alive connection, for the
/// sequential heartbeat rows. ureq spends ~70 us of client CPU on a round
/// trip here (`GET /api/0/info` runs at ~7k/s with it and at 13-20k/s
/// with this), which would cap those rows below their target whatever the
/// server did; this writes each request in one `write` and reads the
/// answer by its `Content-Length` (or chunks).
#[derive(Debug)]
pub struct Connection {
    address: String,
    /// Header lines sent with every request (`Name: value\r\n` each).
    headers: String,
    stream: Option<std::io::BufReader<std::net::TcpStream>>,
}

impl Connection {
    /// A client of the server at `url` (`http://host:port`); it connects
    /// on the first request and again after the server closed.
    pub fn new(url: &str) -> Connection {
        let address = url.trim_start_matches("http://").trim_end_matches('/');
        Connection {
            address: address.to_string(),
            headers: String::new(),
            stream: None,
        }
    }

    /// The same client sending `name: value` with every request (an
    /// `Authorization` header, say).
    pub fn with_header(mut self, name: &str, value: &str) -> Connection {
        self.headers.push_str(&format!("{name}: {value}\r\n"));
        self
    }

    /// `POST path` (`/api/...`) with a JSON body.
    pub fn post_json(&mut self, path: &str, body: &[u8]) -> std::io::Result<Reply> {
        let mut request = format!(
            "POST {path} HTTP/1.1\r\nHost: {}\r\n{}Content-Type: application/json\r\n\
             Content-Length: {}\r\n\r\n",
            self.address,
            self.headers,
            body.len()
        )
        .into_bytes();
        request.extend_from_slice(body);
        self.round_trip(&request)
    }

    /// `DELETE path`.
    pub fn delete(&mut self, path: &str) -> std::io::Result<Reply> {
        let request = format!(
            "DELETE {path} HTTP/1.1\r\nHost: {}\r\n{}Content-Length: 0\r\n\r\n",
            self.address, self.headers
        );
        self.round_trip(request.as_bytes())
    }

    /// `GET path`.
    pub fn get(&mut self, path: &str) -> std::io::Result<Reply> {
        let request = format!(
            "GET {path} HTTP/1.1\r\nHost: {}\r\n{}\r\n",
            self.address, self.headers
        );
        self.round_trip(request.as_bytes())
    }

    fn round_trip(&mut self, request: &[u8]) -> std::io::Result<Reply> {
        let stream = match &mut self.stream {
            Some(stream) => stream,
            None => {
                let stream = std::net::TcpStream::connect(&self.address)?;
                stream.set_nodelay(true)?;
                stream.set_read_timeout(Some(Duration::from_secs(300)))?;
                self.stream.insert(std::io::BufReader::new(stream))
            }
        };
        let answer = stream
            .get_mut()
            .write_all(request)
            .and_then(|()| read_response(stream));
        match answer {
            Ok((reply, keep_alive)) => {
                if !keep_alive {
                    self.stream = None;
                }
                Ok(reply)
            }
            Err(error) => {
                self.stream = None;
                Err(error)
            }
        }
    }
}

/// One response: the reply and whether the connection stays open.
fn read_response(stream: &mut impl BufRead) -> std::io::Result<(Reply, bool)> {
    let bad = |what: &str| std::io::Error::new(std::io::ErrorKind::InvalidData, what.to_string());
    let mut line = String::new();
    stream.read_line(&mut line)?;
    let status = line
        .split(' ')
        .nth(1)
        .and_then(|code| code.parse::<u16>().ok())
        .ok_or_else(|| bad("no status line"))?;
    let mut length = None;
    let mut chunked = false;
    let mut keep_alive = true;
    loop {
        line.clear();
        if stream.read_line(&mut line)? == 0 {
            return Err(bad("headers cut short"));
        }
        let header = line.trim_end();
        if header.is_empty() {
            break;
        }
        let Some((name, value)) = header.split_once(':') else {
            return Err(bad("malformed header"));
        };
        let value = value.trim();
        if name.eq_ignore_ascii_case("content-length") {
            length = Some(value.parse::<usize>().map_err(|_| bad("bad length"))?);
        } else if name.eq_ignore_ascii_case("transfer-encoding") {
            chunked = value.eq_ignore_ascii_case("chunked");
        } else if name.eq_ignore_ascii_case("connection") {
            keep_alive = !value.eq_ignore_ascii_case("close");
        }
    }
    let mut body = Vec::new();
    if chunked {
        loop {
            line.clear();
            stream.read_line(&mut line)?;
            let size = usize::from_str_radix(line.trim_end().split(';').next().unwrap_or(""), 16)
                .map_err(|_| bad("bad chunk size"))?;
            let start = body.len();
            body.resize(start + size, 0);
            stream.read_exact(&mut body[start..])?;
            line.clear();
            stream.read_line(&mut line)?;
            if size == 0 {
                break;
            }
        }
    } else if let Some(length) = length {
        body.resize(length, 0);
        stream.read_exact(&mut body)?;
    } else {
        keep_alive = false;
        stream.read_to_end(&mut body)?;
    }
    Ok((Reply { status, body }, keep_alive))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn responses_are_read_by_length_and_by_chunks() {
        let plain = b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nhelloHTTP/1.1 404 Not Found\r\n\
                      Transfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2;x=y\r\nde\r\n0\r\n\r\n";
        let mut input = &plain[..];
        let (first, open) = read_response(&mut input).unwrap();
        assert_eq!(
            (first.status, &first.body[..], open),
            (200, &b"hello"[..], true)
        );
        let (second, open) = read_response(&mut input).unwrap();
        assert_eq!(
            (second.status, &second.body[..], open),
            (404, &b"abcde"[..], true)
        );
        assert!(input.is_empty());
        let mut closing = &b"HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\nbye"[..];
        let (last, open) = read_response(&mut closing).unwrap();
        assert_eq!(
            (last.status, &last.body[..], open),
            (400, &b"bye"[..], false)
        );
        assert!(read_response(&mut &b"garbage\r\n\r\n"[..]).is_err());
    }
}
