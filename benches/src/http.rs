//! The benchmark's HTTP client: blocking, keep-alive, no TLS.

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
