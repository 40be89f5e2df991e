//! Embeds the web UIs into the server binary.
//!
//! - `ui/` (the built-in dashboard) always, its JavaScript modules joined
//!   into the `js/app.js` it loads (`src/ui_bundle.rs` says why and how).
//! - A built aw-webui when `AW_WEBUI_DIR` names its folder at compile time
//!   (the variable aw-server-rust's build reads), served at `/` instead of
//!   the dashboard.
//!
//! Writes `$OUT_DIR/embedded_ui.rs`: a list of `(path, include_bytes!(...))`
//! per UI, read by `src/assets.rs`. Which files belong to a UI is decided
//! by `src/asset_files.rs`, the code `--webpath` folders are read with too.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

#[path = "src/asset_files.rs"]
mod asset_files;
#[path = "src/ui_bundle.rs"]
mod ui_bundle;

fn main() {
    println!("cargo:rerun-if-changed=ui");
    println!("cargo:rerun-if-env-changed=AW_WEBUI_DIR");
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let mut code = String::from(
        "/// Files of one UI: (path relative to its folder, contents).\n\
         pub type Files = &'static [(&'static str, &'static [u8])];\n",
    );

    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("set by cargo"));
    let builtin = manifest.join("ui");
    // The dashboard's modules, joined into the `js/app.js` it is served as.
    let joined =
        ui_bundle::bundle(&builtin, ENTRY).unwrap_or_else(|error| panic!("aw-server/ui/{error}"));
    let joined_path = out.join("ui-app.js");
    std::fs::write(&joined_path, joined).expect("OUT_DIR is writable");
    code.push_str(
        "/// The built-in dashboard (`aw-server/ui/`), its modules joined as `js/app.js`.\n",
    );
    code.push_str("pub static BUILTIN_UI: Files = ");
    push_files(&mut code, &builtin, Some((ENTRY, &joined_path)));
    code.push_str(";\n");

    code.push_str(
        "/// aw-webui's folder at build time and its files, if `AW_WEBUI_DIR` was set.\n",
    );
    code.push_str("pub static EMBEDDED_WEBUI: Option<(&str, Files)> = ");
    match std::env::var_os("AW_WEBUI_DIR").filter(|dir| !dir.is_empty()) {
        Some(dir) => {
            let dir = PathBuf::from(dir);
            let dir = dir
                .canonicalize()
                .unwrap_or_else(|error| panic!("AW_WEBUI_DIR={}: {error}", dir.display()));
            if !dir.join("index.html").is_file() {
                panic!(
                    "AW_WEBUI_DIR={}: no index.html there; point it at a built aw-webui \
                     (the dist folder `make build` writes)",
                    dir.display()
                );
            }
            println!("cargo:rerun-if-changed={}", dir.display());
            write!(code, "Some(({:?}, ", dir.display().to_string()).unwrap();
            push_files(&mut code, &dir, None);
            code.push_str("))");
        }
        None => code.push_str("None"),
    }
    code.push_str(";\n");

    std::fs::write(out.join("embedded_ui.rs"), code).expect("OUT_DIR is writable");
}

/// The built-in dashboard's entry module, which `index.html` loads.
const ENTRY: &str = "js/app.js";

/// `&[("path", include_bytes!("/abs/path")), ...]`; `replace`: a file of
/// the folder embedded from elsewhere.
fn push_files(code: &mut String, root: &Path, replace: Option<(&str, &Path)>) {
    let files = asset_files::list_files(root)
        .unwrap_or_else(|error| panic!("cannot list {}: {error}", root.display()));
    code.push_str("&[\n");
    for (relative, mut path) in files {
        if let Some((_, instead)) = replace.filter(|(name, _)| *name == relative) {
            path = instead.to_path_buf();
        }
        let path = path.to_str().expect("UTF-8 path").to_string();
        writeln!(code, "    ({relative:?}, include_bytes!({path:?})),").unwrap();
    }
    code.push(']');
}
