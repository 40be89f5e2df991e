//! Web UI files held in memory and how each is answered: content type,
//! ETag, caching policy and gzip.
//!
//! An [`AssetSet`] is one UI: the built-in dashboard (`aw-server/ui/`,
//! always embedded), aw-webui embedded at build time (`AW_WEBUI_DIR`, see
//! `build.rs`) or, for tests, a folder read once with
//! [`AssetSet::load_dir`] through the same file list the build uses. A
//! `--webpath` folder is read per request instead (its files may change
//! while the server runs) and answered through [`Asset`] all the same, so
//! every UI gets the same headers. Which URL names which file, and path
//! safety, are `static_files.rs`'s business.

use std::collections::HashMap;
use std::io::{self, Cursor, Write};
use std::path::Path;
use std::sync::{Arc, OnceLock};

use flate2::write::GzEncoder;
use flate2::Compression;
use rocket::http::{ContentType, Header, Status};
use rocket::request::Request;
use rocket::response::{self, Responder, Response};

mod embedded {
    include!(concat!(env!("OUT_DIR"), "/embedded_ui.rs"));
}

/// Bodies smaller than this go out as they are: gzip would save a few
/// bytes at best.
const MIN_GZIP_SIZE: usize = 512;

/// A year, the longest lifetime caches honour: a hashed file never changes
/// under its name.
const IMMUTABLE: &str = "public, max-age=31536000, immutable";
/// Everything else is revalidated on each use (a 304 when unchanged).
const REVALIDATE: &str = "no-cache";

/// The built-in dashboard.
pub fn builtin() -> &'static Arc<AssetSet> {
    static SET: OnceLock<Arc<AssetSet>> = OnceLock::new();
    SET.get_or_init(|| Arc::new(AssetSet::from_static(embedded::BUILTIN_UI)))
}

/// aw-webui as embedded at build time, with the folder it came from.
pub fn embedded_webui() -> Option<(&'static str, &'static Arc<AssetSet>)> {
    static SET: OnceLock<Arc<AssetSet>> = OnceLock::new();
    let (dir, files) = embedded::EMBEDDED_WEBUI?;
    Some((
        dir,
        SET.get_or_init(|| Arc::new(AssetSet::from_static(files))),
    ))
}

/// The files of one web UI by `/`-separated path (`index.html`,
/// `js/app.1a2b3c4d.js`).
#[derive(Debug)]
pub struct AssetSet {
    files: HashMap<String, Arc<Asset>>,
}

impl AssetSet {
    fn from_static(files: embedded::Files) -> AssetSet {
        AssetSet {
            files: files
                .iter()
                .map(|(path, bytes)| {
                    let asset = Asset::new(path, Body::Static(bytes));
                    (path.to_string(), Arc::new(asset))
                })
                .collect(),
        }
    }

    /// The files of `root` that a build with `AW_WEBUI_DIR=root` would
    /// embed, read now.
    pub fn load_dir(root: &Path) -> io::Result<AssetSet> {
        let mut files = HashMap::new();
        for (relative, path) in crate::asset_files::list_files(root)? {
            let bytes = std::fs::read(&path)?;
            let asset = Asset::new(&relative, Body::Shared(bytes.into()));
            files.insert(relative, Arc::new(asset));
        }
        Ok(AssetSet { files })
    }

    /// The file at `path`, if the set has it.
    pub fn get(&self, path: &str) -> Option<Arc<Asset>> {
        self.files.get(path).cloned()
    }
}

/// Bytes of a file: embedded in the binary or read at run time.
#[derive(Debug, Clone)]
pub enum Body {
    /// Embedded.
    Static(&'static [u8]),
    /// Read from disk.
    Shared(Arc<[u8]>),
}

impl AsRef<[u8]> for Body {
    fn as_ref(&self) -> &[u8] {
        match self {
            Body::Static(bytes) => bytes,
            Body::Shared(bytes) => bytes,
        }
    }
}

/// One file and what its answers need, computed on first use.
#[derive(Debug)]
pub struct Asset {
    body: Body,
    content_type: ContentType,
    cache_control: &'static str,
    /// A hash of the content, quoted: the same bytes give the same ETag in
    /// every process, so browsers revalidate across restarts.
    etag: OnceLock<String>,
    /// The gzip body, or `None` when not worth it.
    gzip: OnceLock<Option<Arc<[u8]>>>,
}

impl Asset {
    /// The file `path` (relative, `/`-separated) with these bytes.
    pub fn new(path: &str, body: Body) -> Asset {
        let name = path.rsplit('/').next().unwrap_or(path);
        let content_type = name
            .rsplit_once('.')
            .and_then(|(_, extension)| ContentType::from_extension(extension))
            .unwrap_or(ContentType::Binary);
        let cache_control = if is_hashed(path) {
            IMMUTABLE
        } else {
            REVALIDATE
        };
        Asset {
            body,
            content_type,
            cache_control,
            etag: OnceLock::new(),
            gzip: OnceLock::new(),
        }
    }

    fn etag(&self) -> &str {
        self.etag
            .get_or_init(|| format!("\"{:016x}\"", fnv1a(self.body.as_ref())))
    }

    fn compressible(&self) -> bool {
        let content_type = &self.content_type;
        content_type.top() == "text"
            || [
                ContentType::JavaScript,
                ContentType::JSON,
                ContentType::SVG,
                ContentType::Icon,
            ]
            .contains(content_type)
            || content_type.sub() == "manifest+json"
    }

    fn gzip(&self) -> Option<Arc<[u8]>> {
        self.gzip
            .get_or_init(|| {
                let body = self.body.as_ref();
                if body.len() < MIN_GZIP_SIZE || !self.compressible() {
                    return None;
                }
                // An embedded file is compressed once per process: take the
                // smallest output. A folder's file is read and compressed
                // per request: take the quick level.
                let level = match self.body {
                    Body::Static(_) => Compression::best(),
                    Body::Shared(_) => Compression::fast(),
                };
                let mut encoder = GzEncoder::new(Vec::new(), level);
                // Writing to a Vec cannot fail.
                encoder.write_all(body).ok()?;
                let compressed = encoder.finish().ok()?;
                (compressed.len() < body.len()).then(|| compressed.into())
            })
            .clone()
    }
}

/// The answer to a request for a file: 200 with the body (gzip if the
/// client takes it), or 304 when the client's copy is current.
#[derive(Debug)]
pub struct AssetReply(pub Arc<Asset>);

impl<'r> Responder<'r, 'static> for AssetReply {
    fn respond_to(self, request: &'r Request<'_>) -> response::Result<'static> {
        let asset = &self.0;
        let gzip = if accepts_gzip(request) {
            asset.gzip()
        } else {
            None
        };
        // Each encoding is its own representation with its own ETag, so a
        // cache never answers one with the other's bytes.
        let etag = match gzip {
            Some(_) => format!("{}-gz\"", asset.etag().trim_end_matches('"')),
            None => asset.etag().to_string(),
        };
        let mut response = Response::build();
        response
            .header(Header::new("ETag", etag.clone()))
            // `X-Content-Type-Options: nosniff` comes from Rocket's Shield,
            // on every response: set here too, Shield warns on each one.
            .header(Header::new("Cache-Control", asset.cache_control));
        if asset.compressible() {
            response.header(Header::new("Vary", "Accept-Encoding"));
        }
        if none_match(request, &etag) {
            return response.status(Status::NotModified).ok();
        }
        response.header(asset.content_type.clone());
        match gzip {
            Some(bytes) => response
                .header(Header::new("Content-Encoding", "gzip"))
                .sized_body(bytes.len(), Cursor::new(bytes)),
            None => {
                let body = asset.body.clone();
                response.sized_body(body.as_ref().len(), Cursor::new(body))
            }
        };
        response.ok()
    }
}

/// Whether `If-None-Match` names `etag` (or is `*`). Weak validators
/// (`W/"..."`) match too, as RFC 9110 asks for this header.
fn none_match(request: &Request<'_>, etag: &str) -> bool {
    request.headers().get("If-None-Match").any(|value| {
        value.split(',').map(str::trim).any(|candidate| {
            candidate == "*" || candidate.strip_prefix("W/").unwrap_or(candidate) == etag
        })
    })
}

/// Whether `Accept-Encoding` lists `gzip` (or `*`) without `q=0`.
fn accepts_gzip(request: &Request<'_>) -> bool {
    request.headers().get("Accept-Encoding").any(|value| {
        value.split(',').any(|item| {
            let mut parts = item.split(';').map(str::trim);
            let coding = parts.next().unwrap_or_default();
            let refused = parts.any(|parameter| {
                parameter
                    .strip_prefix("q=")
                    .and_then(|q| q.parse::<f32>().ok())
                    .is_some_and(|q| q <= 0.0)
            });
            (coding.eq_ignore_ascii_case("gzip") || coding == "*") && !refused
        })
    })
}

/// Whether a file's name carries a content hash, so its content never
/// changes under that name: vue-cli's `js/app.1a2b3c4d.js` (a dot-separated
/// part of 8 or more hex digits) and Vite's `assets/index-Bx1_z-9A.js`
/// (8 URL-safe characters after the last `-`, in `assets/`).
pub fn is_hashed(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    let parts: Vec<&str> = name.split('.').collect();
    if parts.len() >= 3
        && parts[1..parts.len() - 1]
            .iter()
            .any(|part| part.len() >= 8 && part.bytes().all(|b| b.is_ascii_hexdigit()))
    {
        return true;
    }
    // Vite's hash may itself contain `-`: take the last 8 characters.
    let stem = parts[0].as_bytes();
    path.starts_with("assets/")
        && parts.len() >= 2
        && stem.len() > 9
        && stem[stem.len() - 9] == b'-'
        && stem[stem.len() - 8..]
            .iter()
            .all(|&b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// 64-bit FNV-1a: small, stable across builds and platforms, and fast
/// enough for the few megabytes of a UI (hashed once per file).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashed_names_are_recognised() {
        for path in [
            "js/app.1a2b3c4d.js",
            "js/chunk-vendors.0123abcd.js",
            "css/app.deadbeef.css",
            "fonts/fa-solid-900.0123456789abcdef.woff2",
            "assets/index-Bx1_z-9A.js",
        ] {
            assert!(is_hashed(path), "{path}");
        }
        for path in [
            "index.html",
            "js/app.js",
            "js/app.1a2b3c.js",
            "dark.css",
            "static/logo.png",
            "js/index-Bx1_z-9A.js",
            "assets/logo.png",
        ] {
            assert!(!is_hashed(path), "{path}");
        }
    }

    #[test]
    fn etag_depends_on_content_only() {
        let a = Asset::new("js/a.js", Body::Static(b"let a;"));
        let b = Asset::new("css/b.css", Body::Static(b"let a;"));
        let c = Asset::new("js/a.js", Body::Static(b"let b;"));
        assert_eq!(a.etag(), b.etag());
        assert_ne!(a.etag(), c.etag());
        assert!(a.etag().starts_with('"') && a.etag().ends_with('"'));
    }

    #[test]
    fn small_or_binary_files_are_not_compressed() {
        let text = "body { color: red; }\n".repeat(100);
        let css = Asset::new("css/app.css", Body::Shared(text.as_bytes().into()));
        assert!(css.gzip().is_some_and(|gzip| gzip.len() < text.len()));
        assert!(Asset::new("css/small.css", Body::Static(b"p{}"))
            .gzip()
            .is_none());
        let png = Asset::new("static/logo.png", Body::Shared(vec![0u8; 4096].into()));
        assert!(png.gzip().is_none());
    }

    #[test]
    fn the_builtin_dashboard_is_embedded() {
        let set = builtin();
        assert!(set.get("index.html").is_some());
        assert!(set.get("js/app.js").is_some());
    }
}
