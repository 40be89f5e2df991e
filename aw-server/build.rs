//! Embeds the web UIs into the server binary.
//!
//! - `ui/` (the built-in dashboard) always, the scripts its `index.html`
//!   lists joined into the one file it then loads (`src/ui_scripts.rs` says
//!   why and how).
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
#[path = "src/ui_scripts.rs"]
mod ui_scripts;

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
    // The dashboard's scripts, joined, and the page that loads the join.
    let joined = ui_scripts::join(&builtin).unwrap_or_else(|error| panic!("aw-server/ui/{error}"));
    let index_path = out.join("ui-index.html");
    let script_path = out.join("ui-dashboard.js");
    std::fs::write(&index_path, joined.index).expect("OUT_DIR is writable");
    std::fs::write(&script_path, joined.script).expect("OUT_DIR is writable");
    code.push_str(
        "/// The built-in dashboard (`aw-server/ui/`), its scripts joined (`ui_scripts.rs`).\n",
    );
    code.push_str("pub static BUILTIN_UI: Files = ");
    push_files(
        &mut code,
        &builtin,
        &[("index.html", &index_path)],
        &[(ui_scripts::JOINED, &script_path)],
    );
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
            push_files(&mut code, &dir, &[], &[]);
            code.push_str("))");
        }
        None => code.push_str("None"),
    }
    code.push_str(";\n");

    std::fs::write(out.join("embedded_ui.rs"), code).expect("OUT_DIR is writable");
}

/// `&[("path", include_bytes!("/abs/path")), ...]`; `replace`: files of
/// the folder embedded from elsewhere; `add`: files embedded beside them.
fn push_files(code: &mut String, root: &Path, replace: &[(&str, &Path)], add: &[(&str, &Path)]) {
    let files = asset_files::list_files(root)
        .unwrap_or_else(|error| panic!("cannot list {}: {error}", root.display()));
    code.push_str("&[\n");
    let added = add
        .iter()
        .map(|&(name, path)| (name.to_string(), path.to_path_buf()));
    for (relative, mut path) in files.into_iter().chain(added) {
        if let Some((_, instead)) = replace.iter().find(|(name, _)| *name == relative) {
            path = instead.to_path_buf();
        }
        let path = path.to_str().expect("UTF-8 path").to_string();
        writeln!(code, "    ({relative:?}, include_bytes!({path:?})),").unwrap();
    }
    code.push(']');
}
