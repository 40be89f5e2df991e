//! The web UI, custom static folders and traversal attempts (`docs/API.md` §3.8).

mod common;

use std::fs;
use std::path::Path;

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
fn without_web_ui_the_root_is_a_status_page() {
    let server = TestServer::start();
    let client = server.client();
    let reply = client.get("/");
    assert_eq!(reply.status, 200);
    assert!(reply
        .header("Content-Type")
        .unwrap()
        .starts_with("text/html"));
    let page = reply.text();
    assert!(page.contains(&aw_server::version()), "{page}");
    assert!(page.contains(common::DB_FILE), "{page}");
    assert!(page.contains("href=\"/api/0/info\""));
    assert!(page.contains("href=\"/api/0/buckets/\""));
    client.get("/css/app.css").assert_error(404);
}
