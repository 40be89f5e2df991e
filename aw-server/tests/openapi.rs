//! The OpenAPI document served at `/api/0/openapi.json` describes exactly
//! the server's `/api/` routes and `/metrics`: none missing, none extra.

mod common;

use std::collections::BTreeSet;

use common::TestServer;
use serde_json::Value;

/// `(METHOD, /path/{param})` of every operation the document describes.
fn described(document: &Value) -> BTreeSet<(String, String)> {
    let mut found = BTreeSet::new();
    for (path, item) in document["paths"].as_object().expect("paths") {
        for (method, _) in item.as_object().expect("a path item") {
            if ["get", "put", "post", "delete", "patch", "head", "options"]
                .contains(&method.as_str())
            {
                found.insert((method.to_uppercase(), path.clone()));
            }
        }
    }
    found
}

/// `(METHOD, /path/{param})` of every `/api/` route of the server, and
/// `/metrics`.
fn routed() -> BTreeSet<(String, String)> {
    aw_server::endpoints::routes()
        .iter()
        .filter_map(|route| {
            let path = route.uri.path().to_string();
            let path = path.trim_end_matches('/');
            if !path.starts_with("/api/") && path != "/metrics" {
                return None;
            }
            let path: Vec<String> = path
                .split('/')
                .map(|segment| match segment.strip_prefix('<') {
                    Some(name) => {
                        format!("{{{}}}", name.trim_end_matches('>').trim_end_matches(".."))
                    }
                    None => segment.to_string(),
                })
                .collect();
            Some((route.method.as_str().to_string(), path.join("/")))
        })
        .collect()
}

#[test]
fn the_document_describes_every_api_route_and_no_other() {
    let document: Value = serde_json::from_str(aw_server::endpoints::openapi::DOCUMENT)
        .expect("the document is JSON");
    assert_eq!(document["openapi"], "3.1.0");
    let described = described(&document);
    let routed = routed();
    let missing: Vec<_> = routed.difference(&described).collect();
    let extra: Vec<_> = described.difference(&routed).collect();
    assert!(
        missing.is_empty(),
        "routes the document does not describe: {missing:?}"
    );
    assert!(extra.is_empty(), "operations no route answers: {extra:?}");
    assert!(routed.len() >= 20, "{routed:?}");
}

#[test]
fn the_document_is_served_as_json() {
    let server = TestServer::start();
    let reply = server.client().get("/api/0/openapi.json");
    assert_eq!(reply.status, 200);
    assert!(reply
        .header("Content-Type")
        .unwrap()
        .starts_with("application/json"));
    let served: Value = serde_json::from_slice(&reply.body).unwrap();
    let embedded: Value = serde_json::from_str(aw_server::endpoints::openapi::DOCUMENT).unwrap();
    assert_eq!(served, embedded);
}
