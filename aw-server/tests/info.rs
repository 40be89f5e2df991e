//! `GET /api/0/info` (`docs/API.md` §3.1).

mod common;

use common::TestServer;

#[test]
fn info_reports_host_version_testing_and_device() {
    let server = TestServer::start_with(|config| config.testing = true);
    let reply = server.client().get("/api/0/info");
    assert_eq!(reply.status, 200);
    assert!(reply
        .header("Content-Type")
        .unwrap()
        .starts_with("application/json"));
    assert_eq!(
        reply.json(),
        serde_json::json!({
            "hostname": "testhost",
            "version": aw_server::version(),
            "testing": true,
            "device_id": "test-device-id",
        })
    );
    assert!(aw_server::version().ends_with(" (rust)"));
    // The trailing slash is the same resource.
    assert_eq!(server.client().get("/api/0/info/").json()["testing"], true);
}
