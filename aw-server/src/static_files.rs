//! The web UI and custom static folders (`docs/API.md` §3.8).
//!
//! A built aw-webui (`--webpath DIR`) is served at `/` (its `index.html`)
//! and from its `css/`, `js/`, `fonts/`, `static/` folders and the files
//! `favicon.ico`, `logo.png`, `manifest.json`, `dark.css`; custom folders
//! at `/pages/<name>/`. Nothing outside those is served: a requested file
//! is resolved to its canonical path (symlinks followed by the OS) and must
//! still lie inside the canonical folder it was asked from, so `..`,
//! encoded separators and symlinks leading out are all refused with 404.
//! Without a web UI, `/` is a small status page.
//!
//! The security gate (`security.rs`) has already refused dot segments and
//! decoded the path; this module does not trust that and checks again.

use std::path::{Path, PathBuf};

use rocket::fs::NamedFile;
use rocket::http::uri::{fmt::Path as UriPath, Origin, Segments};
use rocket::response::content::RawHtml;
use rocket::response::Redirect;
use rocket::{get, State};

use crate::error::ApiError;
use crate::ServerState;

/// Folders of aw-webui served with their contents.
const WEBUI_FOLDERS: [&str; 4] = ["css", "js", "fonts", "static"];
/// Single files at the root of aw-webui.
const WEBUI_FILES: [&str; 4] = ["favicon.ico", "logo.png", "manifest.json", "dark.css"];

/// What `/` answers.
#[derive(Debug, rocket::Responder)]
pub enum Index {
    /// The web UI's `index.html`.
    File(NamedFile),
    /// The status page shown without a web UI.
    Status(RawHtml<String>),
}

/// `GET /`: the web UI, or a page saying the server runs.
#[get("/")]
pub async fn index(state: &State<ServerState>) -> Result<Index, ApiError> {
    match &state.webpath {
        Some(webpath) => Ok(Index::File(open(webpath, &["index.html"]).await?)),
        None => Ok(Index::Status(RawHtml(status_page(state)))),
    }
}

/// What a static path answers.
#[derive(Debug, rocket::Responder)]
pub enum StaticFile {
    /// The file.
    File(NamedFile),
    /// A folder asked for without its trailing slash: redirected, so the
    /// relative links of its `index.html` resolve inside it.
    Folder(Redirect),
}

/// Every other `GET` path that no API route took: web UI files and custom
/// static folders, else 404.
#[get("/<path..>", rank = 20)]
pub async fn file(
    path: Segments<'_, UriPath>,
    uri: &Origin<'_>,
    state: &State<ServerState>,
) -> Result<StaticFile, ApiError> {
    let segments: Vec<&str> = path.collect();
    if !uri.path().ends_with('/') && is_custom_folder(&segments, state) {
        let target = format!("{}/", uri.path());
        return Ok(StaticFile::Folder(Redirect::to(target)));
    }
    serve(&segments, state).await.map(StaticFile::File)
}

/// Whether a `/pages/<name>/...` path names a folder.
fn is_custom_folder(segments: &[&str], state: &ServerState) -> bool {
    let ["pages", name, rest @ ..] = segments else {
        return false;
    };
    let Some(root) = state.custom_static.get(*name) else {
        return false;
    };
    if !rest.iter().all(|segment| is_plain_name(segment)) {
        return false;
    }
    let mut path = root.clone();
    path.extend(rest);
    path.is_dir()
}

/// The file a static path names, if it may be served.
async fn serve(segments: &[&str], state: &ServerState) -> Result<NamedFile, ApiError> {
    let not_found = || ApiError::NotFound("Not found".to_string());
    match segments {
        ["pages", name, rest @ ..] => {
            let root = state.custom_static.get(*name).ok_or_else(not_found)?;
            open(root, rest).await
        }
        [folder, rest @ ..] if WEBUI_FOLDERS.contains(folder) && !rest.is_empty() => {
            let webpath = state.webpath.as_ref().ok_or_else(not_found)?;
            open(&webpath.join(folder), rest).await
        }
        [name] if WEBUI_FILES.contains(name) => {
            let webpath = state.webpath.as_ref().ok_or_else(not_found)?;
            open(webpath, &[name]).await
        }
        _ => Err(not_found()),
    }
}

/// Opens `root/segments...`, refusing anything that resolves outside
/// `root`; a folder means its `index.html`.
async fn open(root: &Path, segments: &[&str]) -> Result<NamedFile, ApiError> {
    let path =
        resolve(root, segments).ok_or_else(|| ApiError::NotFound("Not found".to_string()))?;
    NamedFile::open(&path)
        .await
        .map_err(|_| ApiError::NotFound("Not found".to_string()))
}

/// The canonical file for `segments` under `root`, if it is a regular file
/// inside `root`.
pub fn resolve(root: &Path, segments: &[&str]) -> Option<PathBuf> {
    if !segments.iter().all(|segment| is_plain_name(segment)) {
        return None;
    }
    let root = root.canonicalize().ok()?;
    let mut path = root.clone();
    path.extend(segments);
    let mut path = path.canonicalize().ok()?;
    if path.is_dir() {
        path = path.join("index.html").canonicalize().ok()?;
    }
    (path.starts_with(&root) && path.is_file()).then_some(path)
}

/// A file or folder name that cannot climb, hide or be read as a
/// separator or drive on any platform.
fn is_plain_name(segment: &str) -> bool {
    !segment.is_empty() && !segment.starts_with('.') && !segment.contains(['/', '\\', '\0', ':'])
}

fn status_page(state: &ServerState) -> String {
    let escape = |text: &str| {
        text.replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
            .replace('"', "&quot;")
    };
    format!(
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>aw-server</title></head>\n\
         <body><h1>aw-server is running</h1>\n\
         <p>Version {version}{testing}. Database: <code>{db}</code>.</p>\n\
         <p>No web UI is configured (start with <code>--webpath DIR</code> to serve one).</p>\n\
         <ul><li><a href=\"/api/0/info\">/api/0/info</a></li>\n\
         <li><a href=\"/api/0/buckets/\">/api/0/buckets/</a></li></ul>\n\
         </body></html>\n",
        version = escape(&state.info.version),
        testing = if state.info.testing {
            " (testing mode)"
        } else {
            ""
        },
        db = escape(&state.db_path),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn resolve_stays_inside_the_root() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("web");
        fs::create_dir_all(root.join("css")).unwrap();
        fs::write(root.join("css").join("a.css"), "a").unwrap();
        fs::write(root.join("index.html"), "i").unwrap();
        fs::write(dir.path().join("secret.txt"), "s").unwrap();
        assert!(resolve(&root, &["css", "a.css"]).is_some());
        assert!(resolve(&root, &[]).is_some(), "folder means index.html");
        for bad in [
            &["..", "secret.txt"][..],
            &["css", "..", "..", "secret.txt"],
            &["..\\secret.txt"],
            &["css/../../secret.txt"],
            &[".hidden"],
            &["missing.css"],
            &["css", ""],
        ] {
            assert_eq!(resolve(&root, bad), None, "{bad:?}");
        }
    }

    #[cfg(unix)]
    #[test]
    fn symlinks_out_of_the_root_are_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("web");
        fs::create_dir_all(&root).unwrap();
        fs::write(dir.path().join("secret.txt"), "s").unwrap();
        fs::write(root.join("inside.txt"), "i").unwrap();
        std::os::unix::fs::symlink(dir.path().join("secret.txt"), root.join("out.txt")).unwrap();
        std::os::unix::fs::symlink(dir.path(), root.join("up")).unwrap();
        std::os::unix::fs::symlink(root.join("inside.txt"), root.join("in.txt")).unwrap();
        assert_eq!(resolve(&root, &["out.txt"]), None);
        assert_eq!(resolve(&root, &["up", "secret.txt"]), None);
        assert!(resolve(&root, &["in.txt"]).is_some());
    }
}
