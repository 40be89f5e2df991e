//! What each `/api/` request (and `/metrics`) needs (`docs/API.md` §9.4),
//! decided from its method and canonical path alone: the table of the
//! scope matrix, which `Access::refusal` reads.

use rocket::http::Method;

/// What a request needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Need {
    /// Nothing: `GET /api/0/info` and every preflight.
    Nothing,
    /// Any valid credential: `GET /api/0/access`.
    Identity,
    /// A read, or more.
    Read,
    /// Read or admin; for a write token the bucket listing, which the
    /// handler narrows to the token's hosts.
    BucketList,
    /// Read (or admin), or a write token whose hosts include the bucket's.
    ReadBucket(String),
    /// Admin, or a write token whose hosts include the bucket's.
    WriteBucket(String),
    /// Admin, or a write token: forwarding from a device, whose handlers
    /// check the buckets' hosts.
    Forward,
    /// Admin only.
    Admin,
    /// The people of a server that hosts several: the server
    /// administrator only (`[auth] api_key`).
    Users,
    /// `GET /metrics`: a read; on a server that hosts several people the
    /// server administrator's too (the server's own counters).
    Metrics,
}

impl Need {
    /// The need of `method` on the canonical `segments` of an `/api/`
    /// path (any case of `api`) or of `/metrics`.
    pub fn of(method: Method, segments: &[String]) -> Need {
        if method == Method::Options {
            return Need::Nothing;
        }
        let reading = matches!(method, Method::Get | Method::Head);
        let path: Vec<&str> = segments.iter().map(String::as_str).collect();
        match path.as_slice() {
            // Prometheus' scrapes: read tokens, not a watcher's write token.
            [metrics] if reading && metrics.eq_ignore_ascii_case("metrics") => Need::Metrics,
            [_, "0", "info"] if reading => Need::Nothing,
            [_, "0", "access"] if reading => Need::Identity,
            [_, "0", "tokens", ..] => Need::Admin,
            [_, "0", "users", ..] => Need::Users,
            [_, "0", "nodes"] if reading => Need::Users,
            [_, "0", "buckets"] if reading => Need::BucketList,
            [_, "0", "buckets", id]
            | [_, "0", "buckets", id, "events"]
            | [_, "0", "buckets", id, "events", _]
                if reading =>
            {
                Need::ReadBucket((*id).to_string())
            }
            [_, "0", "buckets", id] if method == Method::Post || method == Method::Put => {
                Need::WriteBucket((*id).to_string())
            }
            [_, "0", "buckets", id, "events" | "heartbeat"] if method == Method::Post => {
                Need::WriteBucket((*id).to_string())
            }
            [_, "0", "query"] if method == Method::Post => Need::Read,
            // A summary with categories being edited: a read.
            [_, "0", "summary"] if method == Method::Post => Need::Read,
            [_, "0", "forward", _] if reading || method == Method::Post => Need::Forward,
            [_, "0", "forward", _, _] if method == Method::Delete => Need::Forward,
            [_, "0", "forward", _, "rename"] if method == Method::Post => Need::Forward,
            _ if reading => Need::Read,
            _ => Need::Admin,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn need(method: Method, path: &str) -> Need {
        let segments: Vec<String> = path
            .split('/')
            .filter(|s| !s.is_empty())
            .map(String::from)
            .collect();
        Need::of(method, &segments)
    }

    #[test]
    fn the_paths_of_a_watcher_name_their_bucket() {
        let bucket = || "aw-watcher-window_a".to_string();
        assert_eq!(
            need(Method::Post, "/api/0/buckets/aw-watcher-window_a/heartbeat"),
            Need::WriteBucket(bucket())
        );
        assert_eq!(
            need(Method::Post, "/api/0/buckets/aw-watcher-window_a"),
            Need::WriteBucket(bucket())
        );
        assert_eq!(
            need(Method::Put, "/api/0/buckets/aw-watcher-window_a"),
            Need::WriteBucket(bucket())
        );
        assert_eq!(
            need(Method::Post, "/api/0/buckets/aw-watcher-window_a/events"),
            Need::WriteBucket(bucket())
        );
        for path in ["", "/events", "/events/count", "/events/7"] {
            assert_eq!(
                need(
                    Method::Get,
                    &format!("/api/0/buckets/aw-watcher-window_a{path}")
                ),
                Need::ReadBucket(bucket()),
                "{path}"
            );
        }
        assert_eq!(need(Method::Get, "/api/0/buckets"), Need::BucketList);
    }

    #[test]
    fn history_changes_and_tokens_are_admins() {
        for (method, path) in [
            (Method::Delete, "/api/0/buckets/b"),
            (Method::Delete, "/api/0/buckets/b/events/3"),
            (Method::Delete, "/api/0/buckets/b/events"),
            (Method::Post, "/api/0/import"),
            (Method::Post, "/api/0/settings/x"),
            (Method::Delete, "/api/0/settings/x"),
            (Method::Post, "/api/0/privacy/apply"),
            (Method::Post, "/api/0/vacuum"),
            (Method::Post, "/api/0/backup"),
            (Method::Post, "/api/0/sync"),
            (Method::Get, "/api/0/tokens"),
            (Method::Post, "/api/0/tokens"),
            (Method::Delete, "/api/0/tokens/x"),
            (Method::Get, "/api/0/buckets/b/export"),
        ] {
            let need = need(method, path);
            if method == Method::Get && path.ends_with("export") {
                assert_eq!(need, Need::Read, "{path}");
            } else {
                assert_eq!(need, Need::Admin, "{method} {path}");
            }
        }
        assert_eq!(need(Method::Post, "/api/0/query"), Need::Read);
        assert_eq!(need(Method::Post, "/api/0/summary"), Need::Read);
        assert_eq!(need(Method::Get, "/metrics"), Need::Metrics);
        assert_eq!(need(Method::Post, "/metrics"), Need::Admin);
        assert_eq!(need(Method::Get, "/api/0/export"), Need::Read);
        assert_eq!(need(Method::Get, "/api/0/info"), Need::Nothing);
        assert_eq!(need(Method::Post, "/api/0/info"), Need::Admin);
        assert_eq!(need(Method::Options, "/api/0/buckets"), Need::Nothing);
    }
}
