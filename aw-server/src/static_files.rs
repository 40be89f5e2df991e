//! The web UI and custom static folders (`docs/API.md` §3.8).
//!
//! `/` serves one web UI, the first of: a built aw-webui folder given at
//! run time (`--webpath DIR`), aw-webui embedded at build time
//! (`AW_WEBUI_DIR`), the built-in dashboard (`aw-server/ui/`). Its
//! `index.html` answers `/`, and its `css/`, `js/`, `fonts/`, `static/`,
//! `assets/` folders and the files `favicon.ico`, `logo.png`,
//! `manifest.json`, `dark.css` are served; custom folders at
//! `/pages/<name>/`. Nothing else is: an embedded UI is a fixed map of
//! paths, and a folder's file is resolved to its canonical path (symlinks
//! followed by the OS) and must still lie inside the canonical folder it
//! was asked from, so `..`, encoded separators and symlinks leading out
//! are all refused with 404.
//!
//! Every file is answered through `assets.rs` (content type, ETag and
//! 304, caching, gzip). The security gate (`security.rs`) has already
//! refused dot segments and decoded the path; this module does not trust
//! that and checks again.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rocket::http::uri::{fmt::Path as UriPath, Origin, Segments};
use rocket::request::Request;
use rocket::response::{self, Redirect, Responder};
use rocket::{get, State};

use crate::assets::{self, Asset, AssetReply, AssetSet, Body};
use crate::error::ApiError;
use crate::ServerState;

/// Folders of a web UI served with their contents (`assets/` is where a
/// Vite build of aw-webui puts them).
const WEBUI_FOLDERS: [&str; 5] = ["css", "js", "fonts", "static", "assets"];
/// Single files at the root of aw-webui.
const WEBUI_FILES: [&str; 4] = ["favicon.ico", "logo.png", "manifest.json", "dark.css"];
/// Longest static path served, in bytes: no UI file comes close, and
/// longer ones are refused before touching the disk.
const MAX_PATH: usize = 1024;

/// Which web UI `/` serves.
#[derive(Debug, Clone)]
pub enum Ui {
    /// A built aw-webui read from this folder on each request
    /// (`--webpath`).
    Folder(PathBuf),
    /// aw-webui embedded at build time from the folder named.
    Embedded {
        /// `AW_WEBUI_DIR` at build time.
        dir: String,
        /// Its files.
        files: Arc<AssetSet>,
    },
    /// The built-in dashboard.
    Builtin,
}

impl Ui {
    /// The UI for a configuration: `--webpath`, else the embedded
    /// aw-webui, else the built-in dashboard.
    pub fn choose(webpath: Option<&Path>, embedded: Option<(&str, Arc<AssetSet>)>) -> Ui {
        match (webpath, embedded) {
            (Some(folder), _) => Ui::Folder(folder.to_path_buf()),
            (None, Some((dir, files))) => Ui::Embedded {
                dir: dir.to_string(),
                files,
            },
            (None, None) => Ui::Builtin,
        }
    }

    /// Its name in `/api/0/info` (`webui`).
    pub fn kind(&self) -> &'static str {
        match self {
            Ui::Folder(_) => "aw-webui-folder",
            Ui::Embedded { .. } => "aw-webui-embedded",
            Ui::Builtin => "builtin",
        }
    }

    /// A sentence for the startup log.
    pub fn describe(&self) -> String {
        match self {
            Ui::Folder(folder) => format!("the web UI in {} (--webpath)", folder.display()),
            Ui::Embedded { dir, .. } => {
                format!("aw-webui embedded at build time (AW_WEBUI_DIR={dir})")
            }
            Ui::Builtin => "the built-in dashboard".to_string(),
        }
    }

    /// The file at `relative` (`/`-separated, plain names), if it exists.
    async fn file(&self, relative: &[&str]) -> Option<Arc<Asset>> {
        match self {
            // A file of a folder must stay inside that folder (`css/`,
            // `js/`...), not merely inside the UI.
            Ui::Folder(folder) => match relative {
                [sub, rest @ ..] if !rest.is_empty() => read(&folder.join(sub), sub, rest).await,
                _ => read(folder, "", relative).await,
            },
            Ui::Embedded { files, .. } => files.get(&relative.join("/")),
            Ui::Builtin => assets::builtin().get(&relative.join("/")),
        }
    }
}

/// What the built-in dashboard may load: only this server's files and API
/// (and `blob:` for exports it saves), never a script, style, font or
/// frame from elsewhere.
const BUILTIN_POLICY: &str = "default-src 'self'; img-src 'self' data: blob:; \
     object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'none'";

/// The two answers the built-in dashboard's first view waits for before
/// it can ask for its summary (`app.js`), named for the browser to fetch with
/// the page's scripts instead of once they have run. Only when the API
/// needs no key: a preload cannot carry one (`app.js` then asks itself).
const BUILTIN_PRELOAD: &str = "</api/0/settings>; rel=preload; as=fetch; crossorigin, \
     </api/0/buckets/>; rel=preload; as=fetch; crossorigin";

/// `GET /`: the web UI's `index.html`.
#[get("/")]
pub async fn index(state: &State<ServerState>) -> Result<Index, ApiError> {
    let asset = state.ui.file(&["index.html"]).await.ok_or_else(not_found)?;
    let builtin = matches!(state.ui, Ui::Builtin);
    Ok(Index {
        reply: AssetReply(asset),
        policy: builtin.then_some(BUILTIN_POLICY),
        preload: (builtin && !state.auth.required()).then_some(BUILTIN_PRELOAD),
    })
}

/// A request guard that passes requests outside `/api/` on and forwards
/// the rest, so that a `GET` of an API path no route takes reaches the
/// catcher (404, or 405 when the path takes other methods) instead of
/// being looked up as a file.
#[derive(Debug)]
pub struct NotApi;

#[rocket::async_trait]
impl<'r> rocket::request::FromRequest<'r> for NotApi {
    type Error = ();

    async fn from_request(
        request: &'r rocket::Request<'_>,
    ) -> rocket::request::Outcome<NotApi, ()> {
        let api = request
            .uri()
            .path()
            .segments()
            .find(|segment| !segment.is_empty())
            .is_some_and(|first| first.eq_ignore_ascii_case("api"));
        if api {
            rocket::request::Outcome::Forward(rocket::http::Status::NotFound)
        } else {
            rocket::request::Outcome::Success(NotApi)
        }
    }
}

/// The answer of `/`: the UI's `index.html`, with a content security
/// policy for the built-in dashboard (aw-webui sets its own in a meta tag)
/// and its preloads.
#[derive(Debug)]
pub struct Index {
    reply: AssetReply,
    policy: Option<&'static str>,
    preload: Option<&'static str>,
}

impl<'r> Responder<'r, 'static> for Index {
    fn respond_to(self, request: &'r Request<'_>) -> response::Result<'static> {
        let mut response = self.reply.respond_to(request)?;
        if let Some(policy) = self.policy {
            response.set_raw_header("Content-Security-Policy", policy);
        }
        if let Some(preload) = self.preload {
            response.set_raw_header("Link", preload);
        }
        Ok(response)
    }
}

/// What a static path answers.
#[derive(Debug, rocket::Responder)]
pub enum StaticFile {
    /// The file.
    File(AssetReply),
    /// A folder asked for without its trailing slash: redirected, so the
    /// relative links of its `index.html` resolve inside it.
    Folder(Box<Redirect>),
}

/// Every other `GET` path that no API route took: web UI files and custom
/// static folders, else 404.
#[get("/<path..>", rank = 20)]
pub async fn file(
    _not_api: NotApi,
    path: Segments<'_, UriPath>,
    uri: &Origin<'_>,
    state: &State<ServerState>,
) -> Result<StaticFile, ApiError> {
    if uri.path().len() > MAX_PATH {
        return Err(ApiError::NotFound("Not found: path too long".to_string()));
    }
    let segments: Vec<&str> = path.collect();
    if !segments.iter().all(|segment| is_plain_name(segment)) {
        return Err(not_found());
    }
    if !uri.path().ends_with('/') && is_custom_folder(&segments, state) {
        let target = format!("{}/", uri.path());
        return Ok(StaticFile::Folder(Box::new(Redirect::to(target))));
    }
    let asset = serve(&segments, state).await.ok_or_else(not_found)?;
    Ok(StaticFile::File(AssetReply(asset)))
}

fn not_found() -> ApiError {
    ApiError::NotFound("Not found".to_string())
}

/// Whether a `/pages/<name>/...` path names a folder.
fn is_custom_folder(segments: &[&str], state: &ServerState) -> bool {
    let ["pages", name, rest @ ..] = segments else {
        return false;
    };
    let Some(root) = state.custom_static.get(*name) else {
        return false;
    };
    let mut path = root.clone();
    path.extend(rest);
    path.is_dir()
}

/// The file a static path names, if it may be served.
async fn serve(segments: &[&str], state: &ServerState) -> Option<Arc<Asset>> {
    match segments {
        ["pages", name, rest @ ..] => read(state.custom_static.get(*name)?, "", rest).await,
        [folder, rest @ ..] if WEBUI_FOLDERS.contains(folder) && !rest.is_empty() => {
            state.ui.file(segments).await
        }
        [name] if WEBUI_FILES.contains(name) => state.ui.file(segments).await,
        _ => None,
    }
}

/// Reads `root/segments...`, refusing anything that resolves outside
/// `root`; a folder means its `index.html`. `prefix` is the folder `root`
/// was asked as (`js`), for the caching policy.
async fn read(root: &Path, prefix: &str, segments: &[&str]) -> Option<Arc<Asset>> {
    let path = resolve(root, segments)?;
    let bytes = rocket::tokio::fs::read(&path).await.ok()?;
    let name = path.file_name()?.to_str()?;
    // The caching policy looks at the path as asked (`js/app.<hash>.js`),
    // with the file's real name for a folder's `index.html`.
    let mut relative = String::new();
    for part in std::iter::once(prefix)
        .chain(segments[..segments.len().saturating_sub(1)].iter().copied())
        .filter(|part| !part.is_empty())
    {
        relative.push_str(part);
        relative.push('/');
    }
    relative.push_str(name);
    Some(Arc::new(Asset::new(&relative, Body::Shared(bytes.into()))))
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
