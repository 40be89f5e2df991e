//! The web UI (built-in, embedded aw-webui, `--webpath` folder), custom
//! static folders, caching headers, gzip and traversal attempts (`docs/API.md` §3.8).

mod common;

use std::fs;
use std::io::Read;
use std::path::Path;
use std::sync::Arc;

use aw_server::AssetSet;
use common::TestServer;
use tempfile::TempDir;

/// A tiny web UI next to a secret file that must never be served.
fn web_root() -> TempDir {
    let dir = tempfile::tempdir().unwrap();
    let web = dir.path().join("web");
    for folder in ["css", "js", "fonts", "static"] {
        fs::create_dir_all(web.join(folder)).unwrap();
        fs::write(web.join(folder).join("file.txt"), folder).unwrap();
    }
    fs::write(web.join("index.html"), "<html>webui</html>").unwrap();
    fs::write(web.join("css").join("app.css"), "body{}").unwrap();
    fs::write(web.join("js").join("app.js"), "let a;").unwrap();
    for name in ["favicon.ico", "logo.png", "manifest.json", "dark.css"] {
        fs::write(web.join(name), name).unwrap();
    }
    fs::write(web.join("other.txt"), "not a web UI file").unwrap();
    fs::write(web.join(".env"), "hidden").unwrap();
    fs::write(dir.path().join("secret.txt"), "SECRET").unwrap();
    let page = dir.path().join("page");
    fs::create_dir_all(&page).unwrap();
    fs::write(page.join("index.html"), "custom page").unwrap();
    fs::write(page.join("style.css"), "p{}").unwrap();
    #[cfg(unix)]
    {
        let link = |target: &Path, name: &Path| std::os::unix::fs::symlink(target, name).unwrap();
        link(
            &dir.path().join("secret.txt"),
            &web.join("css").join("leak.css"),
        );
        link(dir.path(), &web.join("static").join("up"));
        link(
            &web.join("css").join("app.css"),
            &web.join("css").join("alias.css"),
        );
    }
    dir
}

fn serve(root: &TempDir) -> TestServer {
    let web = root.path().join("web");
    let page = root.path().join("page");
    TestServer::start_with(move |config| {
        config.webpath = Some(web);
        config.custom_static.insert("my-page".to_string(), page);
    })
}

#[test]
fn web_ui_files_are_served_with_content_types() {
    let root = web_root();
    let server = serve(&root);
    let client = server.client();
    let index = client.get("/");
    assert_eq!(index.status, 200);
    assert_eq!(index.text(), "<html>webui</html>");
    assert!(index
        .header("Content-Type")
        .unwrap()
        .starts_with("text/html"));
    let css = client.get("/css/app.css");
    assert_eq!(css.text(), "body{}");
    assert!(css.header("Content-Type").unwrap().starts_with("text/css"));
    assert!(client
        .get("/js/app.js")
        .header("Content-Type")
        .unwrap()
        .contains("javascript"));
    for folder in ["css", "js", "fonts", "static"] {
        assert_eq!(client.get(&format!("/{folder}/file.txt")).text(), folder);
    }
    for name in ["favicon.ico", "logo.png", "manifest.json", "dark.css"] {
        assert_eq!(client.get(&format!("/{name}")).text(), name);
    }
    assert_eq!(client.get("/pages/my-page/").text(), "custom page");
    // Without the slash, relative links would resolve outside the folder.
    let redirect = client.get("/pages/my-page");
    assert_eq!(redirect.status, 303);
    assert_eq!(redirect.header("Location"), Some("/pages/my-page/"));
    assert_eq!(client.get("/pages/my-page/style.css").text(), "p{}");
    #[cfg(unix)]
    assert_eq!(client.get("/css/alias.css").text(), "body{}");
}

#[test]
fn nothing_outside_the_served_folders_is_served() {
    let root = web_root();
    let server = serve(&root);
    let client = server.client();
    let attempts = [
        "/other.txt",
        "/index.html",
        "/.env",
        "/css/",
        "/css/missing.css",
        "/css/../other.txt",
        "/css/../../secret.txt",
        "/css/%2e%2e/%2e%2e/secret.txt",
        "/css/%2E%2E/other.txt",
        "/css/..%2f..%2fsecret.txt",
        "/css/..%2F..%2Fsecret.txt",
        "/css/..%5c..%5csecret.txt",
        "/css/%5c..%5c..%5csecret.txt",
        "/static/..%252f..%252fsecret.txt",
        "/css/%00app.css",
        "/css/app.css%00",
        "/%2e%2e/secret.txt",
        "/pages/my-page/../../secret.txt",
        "/pages/my-page/%2e%2e/secret.txt",
        "/pages/my-page/..%2fsecret.txt",
        "/pages/other/index.html",
        "/pages/%2e%2e/secret.txt",
        "/css/leak.css",
        "/static/up/secret.txt",
        "/static/up/web/index.html",
        "/nonexistent",
    ];
    for path in attempts {
        let reply = client.get(path);
        assert!(
            matches!(reply.status, 400 | 404),
            "{path}: {} {}",
            reply.status,
            reply.text()
        );
        assert!(!reply.text().contains("SECRET"), "{path}");
        assert!(!reply.text().contains("not a web UI file"), "{path}");
        assert!(reply.json()["message"].is_string(), "{path}");
    }
}

#[test]
fn without_web_ui_the_root_is_the_builtin_dashboard() {
    let server = TestServer::start();
    let client = server.client();
    let reply = client.get("/");
    assert_eq!(reply.status, 200);
    assert!(reply
        .header("Content-Type")
        .unwrap()
        .starts_with("text/html"));
    let page = reply.text();
    assert!(page.contains("css/app.css"), "{page}");
    assert_eq!(reply.header("Cache-Control"), Some("no-cache"));
    // Nothing but this server's own files and API.
    let policy = reply.header("Content-Security-Policy").unwrap();
    assert!(policy.starts_with("default-src 'self';"), "{policy}");
    // The first view's two API answers are preloaded with the page.
    let preload = reply.header("Link").unwrap();
    assert!(
        preload.contains("</api/0/settings>; rel=preload; as=fetch; crossorigin"),
        "{preload}"
    );
    assert!(
        preload.contains("</api/0/buckets/>; rel=preload"),
        "{preload}"
    );
    let revalidated = client
        .clone()
        .with_header("If-None-Match", reply.header("ETag").unwrap())
        .get("/");
    assert_eq!(revalidated.status, 304);
    assert_eq!(revalidated.header("Link"), Some(preload));
    // The page loads one script: the scripts its source lists, joined in
    // that order (src/ui_scripts.rs).
    let scripts: Vec<&str> = page
        .lines()
        .filter(|line| line.contains("<script"))
        .collect();
    assert_eq!(
        scripts,
        ["<script defer src=\"js/dashboard.js\"></script>"],
        "{page}"
    );
    let dashboard = client.get("/js/dashboard.js");
    assert!(dashboard
        .header("Content-Type")
        .unwrap()
        .contains("javascript"));
    let joined = dashboard.text();
    let order = [
        "js/dom.js",
        "js/api.js",
        "js/views/activity.js",
        "js/app.js",
    ]
    .map(|script| {
        joined
            .find(&format!("\n// {script}\n"))
            .unwrap_or_else(|| panic!("{script} is not in dashboard.js"))
    });
    assert!(order.is_sorted(), "{order:?}");
    assert!(client
        .get("/js/views/activity.js")
        .header("Content-Type")
        .unwrap()
        .contains("javascript"));
    assert!(client
        .get("/css/app.css")
        .header("Content-Type")
        .unwrap()
        .starts_with("text/css"));
    assert!(client
        .get("/static/icon.svg")
        .header("Content-Type")
        .unwrap()
        .starts_with("image/svg+xml"));
    assert_eq!(client.get("/api/0/info").json()["webui"], "builtin");
    client.get("/css/missing.css").assert_error(404);
    client.get("/index.html").assert_error(404);
}

#[test]
fn with_an_api_key_the_dashboard_preloads_nothing() {
    // A preload cannot carry the key: it would only fetch a 401.
    let server = TestServer::start_with(|config| config.api_key = Some("k".to_string()));
    let reply = server.client().get("/");
    assert_eq!(reply.status, 200);
    assert!(reply.header("Content-Security-Policy").is_some());
    assert_eq!(reply.header("Link"), None);
}

/// A stand-in for a built aw-webui: an `index.html`, vue-cli's hashed
/// assets and a file that is not part of the UI, next to a secret.
fn stand_in_webui() -> TempDir {
    let dir = tempfile::tempdir().unwrap();
    let web = dir.path().join("dist");
    fs::create_dir_all(web.join("js")).unwrap();
    fs::create_dir_all(web.join("css")).unwrap();
    fs::create_dir_all(web.join("fonts")).unwrap();
    fs::write(
        web.join("index.html"),
        format!("<html>stand-in webui{}</html>", " ".repeat(600)),
    )
    .unwrap();
    fs::write(web.join("js").join("app.1a2b3c4d.js"), APP_JS.repeat(50)).unwrap();
    fs::write(
        web.join("css").join("app.0badf00d.css"),
        "body { margin: 0 }\n".repeat(100),
    )
    .unwrap();
    fs::write(
        web.join("fonts").join("icons.deadbeef.woff2"),
        [0u8, 1, 2, 3],
    )
    .unwrap();
    fs::write(web.join("favicon.ico"), [0u8; 64]).unwrap();
    fs::write(web.join("other.txt"), "not a web UI file").unwrap();
    fs::write(web.join(".env"), "hidden").unwrap();
    fs::write(dir.path().join("secret.txt"), "SECRET").unwrap();
    dir
}

const APP_JS: &str = "console.log('stand-in');\n";

/// A server serving `dist` as if it had been embedded at build time.
fn embedded(root: &TempDir, configure: impl FnOnce(&mut aw_server::ServerConfig)) -> TestServer {
    let files = AssetSet::load_dir(&root.path().join("dist")).unwrap();
    let found = aw_server::Found {
        embedded_webui: Some(("/stand-in/dist", Arc::new(files))),
        salvage: None,
    };
    let (folder, datastore) = common::datastore();
    TestServer::start_found(Some(folder), datastore, found, configure, |rocket| rocket)
}

#[test]
fn embedded_webui_is_served_without_a_flag() {
    let root = stand_in_webui();
    let server = embedded(&root, |_| {});
    let client = server.client();
    let index = client.get("/");
    assert_eq!(index.status, 200);
    assert!(index.text().starts_with("<html>stand-in webui"));
    assert_eq!(
        index.header("Content-Security-Policy"),
        None,
        "aw-webui sets its own"
    );
    assert_eq!(
        index.header("Link"),
        None,
        "aw-webui makes its own requests"
    );
    assert!(index
        .header("Content-Type")
        .unwrap()
        .starts_with("text/html"));
    assert_eq!(
        client.get("/api/0/info").json()["webui"],
        "aw-webui-embedded"
    );
    let script = client.get("/js/app.1a2b3c4d.js");
    assert_eq!(script.text(), APP_JS.repeat(50));
    assert!(script
        .header("Content-Type")
        .unwrap()
        .contains("javascript"));
    let font = client.get("/fonts/icons.deadbeef.woff2");
    assert_eq!(font.body, [0u8, 1, 2, 3]);
    assert_eq!(font.header("Content-Type"), Some("font/woff2"));
    assert_eq!(client.get("/favicon.ico").body, [0u8; 64]);
}

#[test]
fn webpath_overrides_the_embedded_webui() {
    let root = stand_in_webui();
    let other = web_root();
    let folder = other.path().join("web");
    let server = embedded(&root, move |config| config.webpath = Some(folder));
    let client = server.client();
    assert_eq!(client.get("/").text(), "<html>webui</html>");
    assert_eq!(client.get("/css/app.css").text(), "body{}");
    client.get("/js/app.1a2b3c4d.js").assert_error(404);
    assert_eq!(client.get("/api/0/info").json()["webui"], "aw-webui-folder");
}

#[test]
fn hashed_assets_are_cached_for_good_and_index_is_revalidated() {
    let root = stand_in_webui();
    let server = embedded(&root, |_| {});
    let client = server.client();
    for path in [
        "/js/app.1a2b3c4d.js",
        "/css/app.0badf00d.css",
        "/fonts/icons.deadbeef.woff2",
    ] {
        assert_eq!(
            client.get(path).header("Cache-Control"),
            Some("public, max-age=31536000, immutable"),
            "{path}"
        );
    }
    let index = client.get("/");
    assert_eq!(index.header("Cache-Control"), Some("no-cache"));
    let etag = index.header("ETag").unwrap().to_string();
    assert!(etag.starts_with('"') && etag.ends_with('"'), "{etag}");
    assert_eq!(
        client.get("/").header("ETag"),
        Some(etag.as_str()),
        "stable"
    );

    let revalidated = client.request("GET", "/", &[("If-None-Match", &etag)], None);
    assert_eq!(revalidated.status, 304);
    assert!(revalidated.body.is_empty());
    assert_eq!(revalidated.header("ETag"), Some(etag.as_str()));
    assert_eq!(revalidated.header("Cache-Control"), Some("no-cache"));
    let weak = format!("W/{etag}");
    let list = format!("\"other\", {etag}");
    for header in [weak.as_str(), list.as_str(), "*"] {
        let reply = client.request("GET", "/", &[("If-None-Match", header)], None);
        assert_eq!(reply.status, 304, "{header}");
    }
    let changed = client.request("GET", "/", &[("If-None-Match", "\"other\"")], None);
    assert_eq!(changed.status, 200);
    assert!(changed.text().starts_with("<html>stand-in webui"));

    // The same for a folder (--webpath) and for the built-in dashboard.
    let folder = TestServer::start_with({
        let web = root.path().join("dist");
        move |config| config.webpath = Some(web)
    });
    let hashed = folder.client().get("/js/app.1a2b3c4d.js");
    assert_eq!(
        hashed.header("Cache-Control"),
        Some("public, max-age=31536000, immutable")
    );
    let etag = hashed.header("ETag").unwrap().to_string();
    let again = folder.client().request(
        "GET",
        "/js/app.1a2b3c4d.js",
        &[("If-None-Match", &etag)],
        None,
    );
    assert_eq!(again.status, 304);
    let builtin = TestServer::start();
    let app = builtin.client().get("/js/dashboard.js");
    assert_eq!(app.header("Cache-Control"), Some("no-cache"));
    let etag = app.header("ETag").unwrap().to_string();
    let again =
        builtin
            .client()
            .request("GET", "/js/dashboard.js", &[("If-None-Match", &etag)], None);
    assert_eq!(again.status, 304);
}

#[test]
fn responses_are_gzipped_when_the_client_accepts_it() {
    let root = stand_in_webui();
    let server = embedded(&root, |_| {});
    let client = server.client();
    let plain = client.get("/js/app.1a2b3c4d.js");
    assert_eq!(plain.header("Content-Encoding"), None);
    assert_eq!(plain.header("Vary"), Some("Accept-Encoding"));
    for accept in ["gzip", "gzip, deflate, br", "br;q=1.0, gzip;q=0.8", "*"] {
        let reply = client.request(
            "GET",
            "/js/app.1a2b3c4d.js",
            &[("Accept-Encoding", accept)],
            None,
        );
        assert_eq!(reply.header("Content-Encoding"), Some("gzip"), "{accept}");
        assert!(reply.body.len() < plain.body.len());
        let mut text = String::new();
        flate2::read::GzDecoder::new(&reply.body[..])
            .read_to_string(&mut text)
            .unwrap();
        assert_eq!(text, APP_JS.repeat(50));
        // Another representation, another ETag; it revalidates too.
        let etag = reply.header("ETag").unwrap();
        assert_ne!(Some(etag), plain.header("ETag"));
        let again = client.request(
            "GET",
            "/js/app.1a2b3c4d.js",
            &[("Accept-Encoding", accept), ("If-None-Match", etag)],
            None,
        );
        assert_eq!(again.status, 304);
    }
    for accept in ["gzip;q=0", "br", "identity"] {
        let reply = client.request("GET", "/", &[("Accept-Encoding", accept)], None);
        assert_eq!(reply.header("Content-Encoding"), None, "{accept}");
    }
    // Binary files and tiny ones go out as they are.
    let font = client.request(
        "GET",
        "/fonts/icons.deadbeef.woff2",
        &[("Accept-Encoding", "gzip")],
        None,
    );
    assert_eq!(font.header("Content-Encoding"), None);
    // The built-in dashboard and folders are compressed the same way.
    let builtin = TestServer::start();
    let css = builtin
        .client()
        .request("GET", "/css/app.css", &[("Accept-Encoding", "gzip")], None);
    assert_eq!(css.header("Content-Encoding"), Some("gzip"));
}

#[test]
fn nothing_outside_the_embedded_set_is_served() {
    let root = stand_in_webui();
    let server = embedded(&root, |_| {});
    let client = server.client();
    let attempts = [
        "/other.txt",
        "/index.html",
        "/.env",
        "/js/",
        "/js/../other.txt",
        "/js/../../secret.txt",
        "/js/%2e%2e/%2e%2e/secret.txt",
        "/js/..%2f..%2fsecret.txt",
        "/js/..%5c..%5csecret.txt",
        "/js/app.1a2b3c4d.js%00",
        "/js/app.1a2b3c4d.js%2f",
        "/JS/app.1a2b3c4d.js",
        "/%2e%2e/secret.txt",
        "/static/..%252f..%252fsecret.txt",
        "/secret.txt",
    ];
    for path in attempts {
        let reply = client.get(path);
        assert!(
            matches!(reply.status, 400 | 404),
            "{path}: {}",
            reply.status
        );
        assert!(!reply.text().contains("SECRET"), "{path}");
        assert!(!reply.text().contains("not a web UI file"), "{path}");
        assert!(reply.json()["message"].is_string(), "{path}");
    }
}

#[test]
fn huge_and_oddly_encoded_static_paths_are_refused() {
    let root = web_root();
    let server = serve(&root);
    let client = server.client();
    let long_name = format!("/css/{}.css", "a".repeat(5_000));
    let deep = format!("/static{}", "/up".repeat(2_000));
    let climbing = format!("/css{}/secret.txt", "/%2e%2e".repeat(500));
    for path in [
        long_name.as_str(),
        deep.as_str(),
        climbing.as_str(),
        "/css/%c0%ae%c0%ae/secret.txt",
        "/css/%ff%fe.css",
        "/css/%e0%80%ae.css",
        "/css/app.css%",
        "/css/%zz.css",
        "/css/%u002e%u002e/secret.txt",
        "/pages/my-page/%2e%2e%2fsecret.txt",
    ] {
        let reply = client.get(path);
        assert!(
            (400..500).contains(&reply.status),
            "{}...: {}",
            &path[..40.min(path.len())],
            reply.status
        );
        assert!(!reply.text().contains("SECRET"));
    }
    // Longer than hyper reads a request line: refused before routing.
    let huge = format!("/css/{}", "a".repeat(100_000));
    let reply = client.raw(format!("GET {huge} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").as_bytes());
    assert_eq!(reply.status, 414);
}
