//! Joins the built-in dashboard's JavaScript modules into the one file the
//! binary serves as `js/app.js`, at build time.
//!
//! The modules stay one small file per concern in `aw-server/ui/js/`, and a
//! `--webpath` copy of the folder is served as it is. The embedded
//! dashboard gets them joined because a browser opening the page fetches,
//! checks and links every module separately before any of them runs, and
//! on a small machine that was most of the wait before the first view's
//! query went out (`benches/runs/2026-11-27-dashboard-first-visit.md` has
//! the figures). Miniflux, whose static files are the model for these,
//! serves its scripts concatenated the same way.
//!
//! This is not a general bundler. It takes only the module syntax the
//! dashboard uses, and stops the build with the file and the line for
//! anything else:
//! - `import { a, b as c } from './x.js';` and `import * as x from './x.js';`
//!   at the start of a line (a statement may span lines), relative paths;
//! - `import('./x.js')` with a literal relative path, anywhere;
//! - `export` before `function`, `async function`, `const`, `let` or
//!   `class` at the start of a line.
//!
//! Each module becomes a function run once, in an order where every module
//! comes after what it imports (dynamic imports included, so a view's
//! module is ready when the router asks for it), and returns its exports;
//! imports become `const` bindings of those. That keeps each module's names
//! to itself, as modules do. Cycles are refused.
//!
//! This file is compiled twice (here and by `build.rs` through `#[path]`),
//! so it uses nothing but `std`.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::Path;

/// The modules reachable from `entry` (a `/`-separated path under `root`,
/// as `js/app.js`), joined into one module's source.
pub fn bundle(root: &Path, entry: &str) -> Result<String, String> {
    let mut modules = HashMap::new();
    let mut order = Vec::new();
    visit(root, entry, &mut modules, &mut Vec::new(), &mut order)?;
    let mut out = String::from(
        "// The built-in dashboard's modules (aw-server/ui/js/), joined by the\n\
         // server's build (aw-server/src/ui_bundle.rs): each module is a function\n\
         // run once, after the modules it imports.\n",
    );
    for path in &order {
        let module: &Module = &modules[path];
        writeln!(out, "\n// {path}").unwrap();
        if path == entry {
            writeln!(out, "(() => {{\n{}}})();", module.code).unwrap();
        } else {
            writeln!(
                out,
                "const {} = (() => {{\n{}return {{ {} }};\n}})();",
                binding_name(path),
                module.code,
                module.exports.join(", ")
            )
            .unwrap();
        }
    }
    Ok(out)
}

/// One module, rewritten: its code with imports and `export` replaced,
/// and the names it exports.
struct Module {
    code: String,
    exports: Vec<String>,
}

/// Loads `path` and, first, everything it imports; pushes each module to
/// `order` once all it imports are there.
fn visit(
    root: &Path,
    path: &str,
    modules: &mut HashMap<String, Module>,
    stack: &mut Vec<String>,
    order: &mut Vec<String>,
) -> Result<(), String> {
    if modules.contains_key(path) {
        return Ok(());
    }
    if stack.iter().any(|each| each == path) {
        return Err(format!(
            "import cycle: {} -> {path}; the joined file needs an order",
            stack.join(" -> ")
        ));
    }
    let source = std::fs::read_to_string(root.join(path))
        .map_err(|error| format!("{path}: cannot read it: {error}"))?;
    let (module, imports) = rewrite(path, &source)?;
    stack.push(path.to_string());
    for import in &imports {
        visit(root, import, modules, stack, order)?;
    }
    stack.pop();
    modules.insert(path.to_string(), module);
    order.push(path.to_string());
    Ok(())
}

/// The module's rewritten code and the paths it imports (statically or
/// not), in the order it names them.
fn rewrite(path: &str, source: &str) -> Result<(Module, Vec<String>), String> {
    let mut code = String::with_capacity(source.len());
    let mut exports = Vec::new();
    let mut imports = Vec::new();
    let mut lines = source.lines().enumerate();
    while let Some((index, line)) = lines.next() {
        let at = |message: String| format!("{path}:{}: {message}", index + 1);
        if line.starts_with("import ") || line == "import" {
            let mut statement = line.to_string();
            while !statement.trim_end().ends_with(';') {
                let (_, next) = lines
                    .next()
                    .ok_or_else(|| at("an import without its closing `;`".into()))?;
                statement.push(' ');
                statement.push_str(next);
            }
            let (clause, target) = parse_import(&statement).map_err(at)?;
            let target = resolve(path, &target).map_err(at)?;
            writeln!(code, "const {clause} = {};", binding_name(&target)).unwrap();
            imports.push(target);
            continue;
        }
        let line = match line.strip_prefix("export ") {
            Some(rest) => {
                exports.push(exported_name(rest).map_err(at)?);
                rest
            }
            None => line,
        };
        let line = rewrite_dynamic_imports(path, line, &mut imports).map_err(at)?;
        code.push_str(&line);
        code.push('\n');
    }
    Ok((Module { code, exports }, imports))
}

/// `import CLAUSE from 'PATH';` as (the `const` pattern, PATH).
fn parse_import(statement: &str) -> Result<(String, String), String> {
    let unsupported = || {
        format!(
            "`{}`: only `import {{ a, b as c }} from './x.js';` and \
             `import * as x from './x.js';` can be joined",
            statement.trim()
        )
    };
    let body = statement
        .trim()
        .strip_prefix("import")
        .ok_or_else(unsupported)?;
    let body = body.trim().strip_suffix(';').ok_or_else(unsupported)?;
    let (clause, target) = body.rsplit_once(" from ").ok_or_else(unsupported)?;
    let target = target.trim();
    let target = target
        .strip_prefix('\'')
        .and_then(|t| t.strip_suffix('\''))
        .or_else(|| target.strip_prefix('"').and_then(|t| t.strip_suffix('"')))
        .ok_or_else(unsupported)?;
    let clause = clause.trim();
    let pattern = if let Some(name) = clause.strip_prefix("* as ") {
        identifier(name.trim()).ok_or_else(unsupported)?.to_string()
    } else if let Some(names) = clause.strip_prefix('{').and_then(|c| c.strip_suffix('}')) {
        let mut parts = Vec::new();
        for part in names.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let mut words = part.split_whitespace();
            let part = match (words.next(), words.next(), words.next(), words.next()) {
                (Some(name), None, None, None) => {
                    identifier(name).ok_or_else(unsupported)?.to_string()
                }
                (Some(name), Some("as"), Some(local), None) => format!(
                    "{}: {}",
                    identifier(name).ok_or_else(unsupported)?,
                    identifier(local).ok_or_else(unsupported)?
                ),
                _ => return Err(unsupported()),
            };
            parts.push(part);
        }
        format!("{{ {} }}", parts.join(", "))
    } else {
        return Err(unsupported());
    };
    Ok((pattern, target.to_string()))
}

/// The name an `export` line declares (`rest` is what follows `export `).
fn exported_name(rest: &str) -> Result<String, String> {
    let unsupported = || {
        format!(
            "`export {}`: only `export` before function, async function, const, \
             let or class declarations can be joined",
            rest.trim()
        )
    };
    let declaration = ["async function ", "function ", "const ", "let ", "class "]
        .iter()
        .find_map(|keyword| rest.strip_prefix(keyword))
        .ok_or_else(unsupported)?;
    let end = declaration
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '$'))
        .unwrap_or(declaration.len());
    identifier(&declaration[..end])
        .map(str::to_string)
        .ok_or_else(unsupported)
}

/// `import('./x.js')` in `line` replaced by the joined module, already
/// evaluated; its path added to `imports`.
fn rewrite_dynamic_imports(
    path: &str,
    line: &str,
    imports: &mut Vec<String>,
) -> Result<String, String> {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(start) = rest.find("import(") {
        out.push_str(&rest[..start]);
        let after = &rest[start + "import(".len()..];
        let quote = after.chars().next().filter(|c| *c == '\'' || *c == '"');
        let literal = quote.and_then(|quote| {
            let inner = &after[1..];
            let end = inner.find(quote)?;
            inner[end + 1..]
                .starts_with(')')
                .then(|| (&inner[..end], &inner[end + 2..]))
        });
        let Some((target, tail)) = literal else {
            return Err(format!(
                "`{}`: only `import('./x.js')` with a literal path can be joined",
                line.trim()
            ));
        };
        let target = resolve(path, target)?;
        write!(out, "Promise.resolve({})", binding_name(&target)).unwrap();
        imports.push(target);
        rest = tail;
    }
    out.push_str(rest);
    Ok(out)
}

/// `target` (`./x.js`, `../x.js`) seen from the module at `from`, as a
/// `/`-separated path under the root; never outside it.
fn resolve(from: &str, target: &str) -> Result<String, String> {
    if !(target.starts_with("./") || target.starts_with("../")) || !target.ends_with(".js") {
        return Err(format!(
            "`{target}`: only relative paths to .js files can be joined"
        ));
    }
    let mut parts: Vec<&str> = from.split('/').collect();
    parts.pop(); // the importing file's own name
    for segment in target.split('/') {
        match segment {
            "." | "" => {}
            ".." => {
                parts
                    .pop()
                    .ok_or_else(|| format!("`{target}` leaves the UI folder"))?;
            }
            name => parts.push(name),
        }
    }
    Ok(parts.join("/"))
}

/// The `const` holding a module's exports: `js/views/activity.js` ->
/// `__ui_js_views_activity_js`.
fn binding_name(path: &str) -> String {
    let mut name = String::from("__ui_");
    name.extend(
        path.chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }),
    );
    name
}

fn identifier(word: &str) -> Option<&str> {
    let mut chars = word.chars();
    let first = chars.next()?;
    let valid = (first.is_ascii_alphabetic() || first == '_' || first == '$')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$');
    valid.then_some(word)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn folder(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (path, text) in files {
            let path = dir.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        dir
    }

    #[test]
    fn modules_come_after_what_they_import_and_keep_their_names() {
        let dir = folder(&[
            (
                "js/app.js",
                "import * as api from './api.js';\nimport {\n  h,\n  text as t,\n} from './dom.js';\n\
                 const view = () => import('./views/one.js');\nconst local = 1;\n",
            ),
            ("js/api.js", "import { h } from './dom.js';\nexport async function get() {}\nconst local = 2;\n"),
            ("js/dom.js", "export function h() {}\nexport const text = 1;\n"),
            ("js/views/one.js", "import { get } from '../api.js';\nexport class View {}\n"),
        ]);
        let joined = bundle(dir.path(), "js/app.js").unwrap();
        let position = |needle: &str| {
            joined
                .find(needle)
                .unwrap_or_else(|| panic!("{needle} in {joined}"))
        };
        assert!(position("// js/dom.js") < position("// js/api.js"));
        assert!(position("// js/api.js") < position("// js/views/one.js"));
        assert!(position("// js/views/one.js") < position("// js/app.js"));
        assert_eq!(joined.matches("// js/dom.js").count(), 1);
        assert!(joined.contains("const api = __ui_js_api_js;"));
        assert!(joined.contains("const { h, text: t } = __ui_js_dom_js;"));
        assert!(joined.contains("const view = () => Promise.resolve(__ui_js_views_one_js);"));
        assert!(joined.contains("const { get } = __ui_js_api_js;"));
        assert!(joined.contains("return { get };"));
        assert!(joined.contains("return { h, text };"));
        assert!(joined.contains("return { View };"));
        assert!(joined.contains("async function get() {}"));
        assert!(!joined.contains("export "));
        assert!(!joined.contains("import("));
        assert!(!joined.lines().any(|line| line.starts_with("import ")));
    }

    #[test]
    fn anything_else_stops_the_build_naming_the_line() {
        let refused = [
            ("import api from './api.js';", "js/app.js:1"),
            ("import './api.js';", "js/app.js:1"),
            (
                "import { x } from 'https://example.com/x.js';",
                "only relative paths",
            ),
            ("import { x } from '../../x.js';", "leaves the UI folder"),
            ("const a = 1;\nexport default a;", "js/app.js:2"),
            ("export { a };", "js/app.js:1"),
            ("const m = import(name);", "literal path"),
            ("import { x } from './api.js'", "closing `;`"),
        ];
        for (source, expected) in refused {
            let dir = folder(&[
                ("js/app.js", source),
                ("js/api.js", "export const x = 1;\n"),
            ]);
            let error = bundle(dir.path(), "js/app.js").unwrap_err();
            assert!(error.contains(expected), "{source}: {error}");
        }
        let dir = folder(&[
            ("js/app.js", "import { a } from './a.js';\n"),
            (
                "js/a.js",
                "import { b } from './b.js';\nexport const a = 1;\n",
            ),
            (
                "js/b.js",
                "import { a } from './a.js';\nexport const b = 1;\n",
            ),
        ]);
        let error = bundle(dir.path(), "js/app.js").unwrap_err();
        assert!(error.contains("cycle"), "{error}");
        let dir = folder(&[("js/app.js", "import { a } from './gone.js';\n")]);
        let error = bundle(dir.path(), "js/app.js").unwrap_err();
        assert!(error.contains("js/gone.js: cannot read it"), "{error}");
    }
}
