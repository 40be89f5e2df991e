//! Joins the built-in dashboard's scripts into the one file the binary
//! serves, at build time.
//!
//! `aw-server/ui/index.html` lists the dashboard's scripts in the order
//! they run, one `<script defer src="js/...">` line each, one after the
//! other: that list is the only place the order is written. Each script
//! defines one name (`dom`, `api`, `activityView`...) that later ones use,
//! so a folder of these pages (`--webpath`) works as it is. The embedded
//! dashboard gets the listed files copied, in that order, into one
//! [`JOINED`] file, and an `index.html` whose list is one line loading it:
//! a browser then fetches and compiles one script before the first view's
//! requests go out, which on a small machine is most of the wait
//! (`benches/runs/2026-11-28-page-joiner.md` has the figures). Miniflux,
//! whose static files are the model for these, serves an explicit list of
//! its scripts joined the same way. Nothing in the scripts is parsed.
//!
//! This file is compiled twice (here and by `build.rs` through `#[path]`),
//! so it uses nothing but `std`.

use std::path::Path;

/// The joined scripts, as the embedded `index.html` loads them.
pub const JOINED: &str = "js/dashboard.js";

/// What the build embeds for the dashboard in `root`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Joined {
    /// `index.html` with its list of scripts replaced by one line loading
    /// [`JOINED`].
    pub index: String,
    /// The listed scripts, in order.
    pub script: String,
}

/// Reads `root/index.html` and joins the scripts it lists.
pub fn join(root: &Path) -> Result<Joined, String> {
    let index = std::fs::read_to_string(root.join("index.html"))
        .map_err(|error| format!("index.html: {error}"))?;
    let mut first_line = None;
    let mut sources = Vec::new();
    let mut page = Vec::new();
    for (number, line) in index.lines().enumerate() {
        let number = number + 1;
        if !line.contains("<script") {
            page.push(line.to_string());
            continue;
        }
        let source = script_source(line).ok_or_else(|| {
            format!(
                "index.html:{number}: not a `<script defer src=\"js/...\"></script>` line: {line}"
            )
        })?;
        match first_line {
            None => {
                first_line = Some(number);
                page.push(format!("<script defer src=\"{JOINED}\"></script>"));
            }
            Some(first) if first + sources.len() != number => {
                return Err(format!(
                    "index.html:{number}: the scripts must be listed on consecutive lines \
                     (the list starts at line {first})"
                ));
            }
            Some(_) => {}
        }
        sources.push(source.to_string());
    }
    if sources.is_empty() {
        return Err("index.html lists no script".to_string());
    }
    let mut script = String::from(
        "// The built-in dashboard's scripts (aw-server/ui/js/), joined in the\n\
         // order aw-server/ui/index.html lists them (aw-server/src/ui_scripts.rs).\n",
    );
    for source in &sources {
        let text = std::fs::read_to_string(root.join(source))
            .map_err(|error| format!("{source}: {error}"))?;
        script.push_str(&format!("\n// {source}\n{text}"));
        if !text.ends_with('\n') {
            script.push('\n');
        }
    }
    let mut index = page.join("\n");
    index.push('\n');
    Ok(Joined { index, script })
}

/// The `src` of a line that is exactly `<script defer src="js/..."></script>`
/// (indentation aside), a relative path under `js/` that stays there.
fn script_source(line: &str) -> Option<&str> {
    let source = line
        .trim()
        .strip_prefix("<script defer src=\"")?
        .strip_suffix("\"></script>")?;
    let inside = source.strip_prefix("js/")?;
    let safe = source.ends_with(".js")
        && inside
            .split('/')
            .all(|part| !part.is_empty() && part != "." && part != "..");
    safe.then_some(source)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn folder(index: &str, files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("index.html"), index).unwrap();
        for (path, text) in files {
            let path = dir.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        dir
    }

    #[test]
    fn the_listed_scripts_are_joined_in_order_and_the_page_loads_the_join() {
        let dir = folder(
            "<head>\n<script defer src=\"js/b.js\"></script>\n  \
             <script defer src=\"js/views/a.js\"></script>\n</head>\n",
            &[
                ("js/b.js", "const b = 1;"),
                ("js/views/a.js", "const a = b;\n"),
            ],
        );
        let joined = join(dir.path()).unwrap();
        assert_eq!(
            joined.index,
            "<head>\n<script defer src=\"js/dashboard.js\"></script>\n</head>\n"
        );
        let b = joined.script.find("// js/b.js\nconst b = 1;\n").unwrap();
        let a = joined
            .script
            .find("// js/views/a.js\nconst a = b;\n")
            .unwrap();
        assert!(b < a, "{}", joined.script);
    }

    #[test]
    fn anything_else_stops_the_build_naming_the_line() {
        let cases = [
            ("<script type=\"module\" src=\"js/a.js\"></script>\n", "index.html:1"),
            ("<script defer src=\"js/../x.js\"></script>\n", "index.html:1"),
            ("<script defer src=\"/js/a.js\"></script>\n", "index.html:1"),
            (
                "<script defer src=\"js/a.js\"></script>\n<p>\n<script defer src=\"js/a.js\"></script>\n",
                "index.html:3",
            ),
            ("<script defer src=\"js/missing.js\"></script>\n", "js/missing.js"),
            ("<p>no scripts</p>\n", "no script"),
        ];
        for (index, expected) in cases {
            let dir = folder(index, &[("js/a.js", "const a = 1;")]);
            let error = join(dir.path()).unwrap_err();
            assert!(error.contains(expected), "{index}: {error}");
        }
    }
}
