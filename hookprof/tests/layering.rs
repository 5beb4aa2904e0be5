//! hookprof's layers, checked on its own sources: every module sits on a floor,
//! `input` (decoders) < `analysis` < `output` < `commands` (and `fuzz`, the fuzzers' entry
//! points), and
//!
//! - no file imports a module on a higher floor than its own;
//! - no two modules import each other, directly or through others (no cycle).
//!
//! An import is any `crate::…`, `super::…` or `self::…` path in the code (comments, literals
//! and `#[cfg(test)]` modules left out: a unit test may build its input with anything), and in a `mod.rs` or `lib.rs` a path through one of its own child modules
//! (`csv::write`). A path counts as an import of the deepest module it names; a file
//! naming its own module or one of its ancestors' items through `super::` imports that
//! ancestor. `lib.rs` (declarations only) and the binary (`main.rs`, `install_docs.rs`) are
//! not on a floor.
//!
//! And two rules of shape: no source file is longer than a reader can hold (1 000 lines), and
//! only `input` tells what a file is: everything else opens its inputs through the door,
//! `input::open` and `input::kind` (src/input/door.rs), never through the sniffers behind it
//! (src/input/detect.rs) nor by looking at a file's first bytes itself.
//!
//! The other parts, by the same reading: no file of the wrapper, the pass (and its shim) or
//! the runtime is over 1 000 lines either; the wrapper's and the pass's modules import each
//! other in one direction; and runtime/src/trace.c's parts call only the parts before them
//! (in the order trace.c includes them and runtime/src/trace/README.md lists), a call up the
//! order going through the one part that declares such calls, declarations.h.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The floor of a module, from its first path component; `None`: not layered.
fn floor(module: &[String]) -> Option<(usize, &'static str)> {
    match module.first().map(String::as_str) {
        Some("input") => Some((0, "input")),
        Some("analysis") => Some((1, "analysis")),
        Some("output") => Some((2, "output")),
        Some("commands") => Some((3, "commands")),
        Some("fuzz") => Some((3, "fuzz")),
        _ => None,
    }
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    files_ending(dir, &["rs"], out);
}

/// The files under `dir` whose extension is one of `extensions`, at any depth.
fn files_ending(dir: &Path, extensions: &[&str], out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files_ending(&path, extensions, out);
        } else if path
            .extension()
            .is_some_and(|e| extensions.iter().any(|x| e == *x))
        {
            out.push(path);
        }
    }
}

/// `input/format.rs` → `[input, format]`; `output/report/mod.rs` → `[output, report]`.
fn module_of(src: &Path, file: &Path) -> Vec<String> {
    let relative = file.strip_prefix(src).unwrap().with_extension("");
    let mut parts: Vec<String> = relative
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if parts.last().is_some_and(|p| p == "mod" || p == "lib") {
        parts.pop();
    }
    parts
}

/// The code of a file without comments, string and char literals, and `#[cfg(test)]`
/// modules (`#[cfg(all(test, unix))]` too).
fn code_of(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < bytes.len() {
        if text[i..].starts_with("//") {
            while i < bytes.len() && bytes[i] != b'\n' {
                i += 1;
            }
        } else if text[i..].starts_with("/*") {
            i += text[i..].find("*/").map_or(text.len() - i, |n| n + 2);
        } else if bytes[i] == b'"' {
            // A string literal (raw strings with `#` are not used in hookprof's sources).
            i += 1;
            while i < bytes.len() && bytes[i] != b'"' {
                i += if bytes[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("\"\"");
        } else if bytes[i] == b'\''
            && i + 2 < bytes.len()
            && (bytes[i + 2] == b'\'' || bytes[i + 1] == b'\\')
        {
            // A char literal ('"', '\n'); lifetimes ('a) are left alone.
            let from = if bytes[i + 1] == b'\\' { i + 3 } else { i + 2 };
            let close = text[from..].find('\'').map_or(text.len(), |n| from + n);
            i = close + 1;
        } else {
            let c = text[i..].chars().next().unwrap();
            out.push(c);
            i += c.len_utf8();
        }
    }
    // Test modules: from the attribute to the brace that closes the module.
    let mut code = String::with_capacity(out.len());
    let mut rest = out.as_str();
    while let Some(at) = rest.find("#[cfg(") {
        let attribute_end = rest[at..].find(']').map_or(rest.len(), |n| at + n + 1);
        let attribute = &rest[at..attribute_end];
        let after = rest[attribute_end..].trim_start();
        let is_test_module = attribute.contains("test")
            && (after.starts_with("mod ") || after.starts_with("pub mod "))
            && after
                .find('{')
                .is_some_and(|b| after.find(';').is_none_or(|s| b < s));
        if !is_test_module {
            code.push_str(&rest[..attribute_end]);
            rest = &rest[attribute_end..];
            continue;
        }
        code.push_str(&rest[..at]);
        let open = attribute_end + rest[attribute_end..].find('{').unwrap();
        let mut depth = 0;
        let mut end = rest.len();
        for (n, c) in rest[open..].char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = open + n + 1;
                        break;
                    }
                }
                _ => {}
            }
        }
        rest = &rest[end..];
    }
    code.push_str(rest);
    code
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

fn skip_space(code: &str, at: usize) -> usize {
    let rest = &code[at..];
    at + (rest.len() - rest.trim_start().len())
}

/// The paths of a use tree starting at `at` (just after `crate::`): `a::b`, `{a, b::{c, d}}`,
/// `a as b`, `*`. Returns where it ends.
fn use_tree(code: &str, at: usize, prefix: &[String], out: &mut Vec<Vec<String>>) -> usize {
    let mut at = skip_space(code, at);
    if code[at..].starts_with('{') {
        at += 1;
        loop {
            at = skip_space(code, at);
            if code[at..].starts_with('}') {
                return at + 1;
            }
            at = skip_space(code, use_tree(code, at, prefix, out));
            if code[at..].starts_with(',') {
                at += 1;
            } else if code[at..].starts_with('}') {
                return at + 1;
            } else {
                return at;
            }
        }
    }
    let rest = &code[at..];
    let len = rest.find(|c: char| !is_ident(c)).unwrap_or(rest.len());
    let mut path = prefix.to_vec();
    if len == 0 {
        // `*`, or the end of the path.
        out.push(path);
        return at + usize::from(rest.starts_with('*'));
    }
    path.push(rest[..len].to_string());
    at += len;
    if code[at..].starts_with("::") {
        return use_tree(code, at + 2, &path, out);
    }
    out.push(path);
    let after = skip_space(code, at);
    if code[after..].starts_with("as ") {
        let name = skip_space(code, after + 3);
        let rest = &code[name..];
        return name + rest.find(|c: char| !is_ident(c)).unwrap_or(rest.len());
    }
    at
}

/// Every path a file's code names through `crate::`, `super::`, `self::` or (in a `mod.rs`
/// or `lib.rs`) one of its child modules, as absolute paths.
fn imports(code: &str, module: &[String], is_dir_module: bool) -> Vec<Vec<String>> {
    // `super` of `a/b.rs` is `a`, and of `a/b/mod.rs` too; `self` is `a::b`.
    let own_dir: Vec<String> = module.to_vec();
    let parent: Vec<String> = module[..module.len().saturating_sub(1)].to_vec();
    let children: BTreeSet<String> = if is_dir_module {
        code.lines()
            .filter_map(|l| {
                let l = l.trim();
                let l = l.strip_prefix("pub ").unwrap_or(l);
                let name = l.strip_prefix("mod ")?.strip_suffix(';')?;
                Some(name.trim().to_string())
            })
            .collect()
    } else {
        BTreeSet::new()
    };
    let mut out = Vec::new();
    let mut at = 0;
    while at < code.len() {
        let preceded = at > 0 && {
            let before = code[..at].chars().next_back().unwrap();
            is_ident(before) || before == ':'
        };
        let rest = &code[at..];
        let mut roots: Vec<(&str, Vec<String>)> = vec![
            ("crate::", Vec::new()),
            ("super::", parent.clone()),
            ("self::", own_dir.clone()),
        ];
        if is_dir_module {
            for child in &children {
                let mut base = own_dir.clone();
                base.push(child.clone());
                roots.push((Box::leak(format!("{child}::").into_boxed_str()), base));
            }
        }
        let hit = if preceded {
            None
        } else {
            roots.into_iter().find(|(root, _)| rest.starts_with(root))
        };
        match hit {
            Some((root, mut base)) => {
                let mut start = at + root.len();
                // `super::super::`
                while code[start..].starts_with("super::") {
                    base.pop();
                    start += "super::".len();
                }
                if root != "crate::" && root != "super::" && root != "self::" {
                    // A child module: `csv::write` names `csv`.
                    let mut paths = Vec::new();
                    use_tree(code, start, &base, &mut paths);
                    out.extend(paths);
                    at = start;
                } else {
                    at = use_tree(code, start, &base, &mut out).max(start);
                }
            }
            None => at += rest.chars().next().unwrap().len_utf8(),
        }
    }
    out
}

/// The deepest module of `modules` that `path` names (its prefix).
fn target<'m>(path: &[String], modules: &'m BTreeSet<Vec<String>>) -> Option<&'m Vec<String>> {
    (1..=path.len())
        .rev()
        .find_map(|n| modules.get(&path[..n].to_vec()))
}

struct Layers {
    /// Module → file (relative to src).
    files: BTreeMap<Vec<String>, PathBuf>,
    /// Module → (imported module → the first path that imports it).
    edges: BTreeMap<Vec<String>, BTreeMap<Vec<String>, String>>,
}

fn layers(src: &Path) -> Layers {
    let mut paths = Vec::new();
    rust_files(src, &mut paths);
    paths.sort();
    let mut files = BTreeMap::new();
    for path in &paths {
        let name = path.file_name().unwrap();
        if name == "main.rs" || name == "install_docs.rs" {
            continue;
        }
        files.insert(
            module_of(src, path),
            path.strip_prefix(src).unwrap().to_path_buf(),
        );
    }
    let modules: BTreeSet<Vec<String>> = files.keys().cloned().collect();
    let mut edges = BTreeMap::new();
    for (module, file) in &files {
        let text = std::fs::read_to_string(src.join(file)).unwrap();
        let is_dir_module = file.ends_with("mod.rs") || file.ends_with("lib.rs");
        let mut to: BTreeMap<Vec<String>, String> = BTreeMap::new();
        for path in imports(&code_of(&text), module, is_dir_module) {
            let Some(t) = target(&path, &modules) else {
                continue;
            };
            // Its own items, or an ancestor's through the ancestor (`super::X` in a file
            // whose folder's mod.rs defines X) count; naming itself does not.
            if t == module || t.is_empty() {
                continue;
            }
            to.entry(t.clone())
                .or_insert_with(|| format!("crate::{}", path.join("::")));
        }
        edges.insert(module.clone(), to);
    }
    Layers { files, edges }
}

fn violations(layers: &Layers) -> Vec<String> {
    let mut found = Vec::new();
    let name = |m: &Vec<String>| layers.files[m].display().to_string();
    for (from, to) in &layers.edges {
        let Some((from_floor, from_name)) = floor(from) else {
            continue;
        };
        for (t, path) in to {
            if let Some((t_floor, t_name)) = floor(t) {
                if t_floor > from_floor {
                    found.push(format!(
                        "src/{} (floor {from_name}) imports `{path}` of src/{} (floor {t_name}, \
                         higher)",
                        name(from),
                        name(t)
                    ));
                }
            }
        }
    }
    // Cycles: a depth-first search; each back edge closes one.
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        New,
        Open,
        Done,
    }
    let mut mark: BTreeMap<&Vec<String>, Mark> =
        layers.edges.keys().map(|m| (m, Mark::New)).collect();
    fn visit<'a>(
        m: &'a Vec<String>,
        layers: &'a Layers,
        mark: &mut BTreeMap<&'a Vec<String>, Mark>,
        stack: &mut Vec<&'a Vec<String>>,
        found: &mut Vec<String>,
    ) {
        mark.insert(m, Mark::Open);
        stack.push(m);
        for t in layers.edges[m].keys() {
            match mark.get(t).copied() {
                Some(Mark::New) => visit(t, layers, mark, stack, found),
                Some(Mark::Open) => {
                    let at = stack.iter().position(|s| *s == t).unwrap();
                    let mut cycle: Vec<String> = stack[at..]
                        .iter()
                        .zip(stack[at + 1..].iter().chain([&t]))
                        .map(|(a, b)| {
                            format!(
                                "src/{} imports `{}`",
                                layers.files[*a].display(),
                                layers.edges[*a][*b]
                            )
                        })
                        .collect();
                    cycle.push(format!("back to src/{}", layers.files[t].display()));
                    found.push(format!("modules import each other: {}", cycle.join(", ")));
                }
                _ => {}
            }
        }
        stack.pop();
        mark.insert(m, Mark::Done);
    }
    let modules: Vec<&Vec<String>> = layers.edges.keys().collect();
    for m in modules {
        if mark[m] == Mark::New {
            visit(m, layers, &mut mark, &mut Vec::new(), &mut found);
        }
    }
    found
}

#[test]
fn no_file_imports_a_higher_floor_and_no_modules_import_each_other() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let layers = layers(&src);
    for module in layers.files.keys() {
        let file = &layers.files[module];
        let top = file.components().count() == 1;
        assert!(
            floor(module).is_some() || (top && (file.ends_with("lib.rs"))),
            "src/{}: in no floor: put it under input/, analysis/, output/ or commands/",
            file.display()
        );
    }
    let found = violations(&layers);
    assert!(
        found.is_empty(),
        "hookprof's layering is broken ({} problems; see tests/layering.rs):\n  {}",
        found.len(),
        found.join("\n  ")
    );
}

#[test]
fn lib_rs_only_declares_modules() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let code = code_of(&std::fs::read_to_string(src.join("lib.rs")).unwrap());
    for line in code.lines().map(str::trim).filter(|l| !l.is_empty()) {
        assert!(
            line.starts_with("pub mod ") || line.starts_with("mod "),
            "src/lib.rs: `{line}`: lib.rs holds the module declarations and the crate's doc; \
             put code in its floor's folder"
        );
    }
}

/// The longest a source file may be: one a reader can hold.
const MOST_LINES: usize = 1000;

/// The C sources under `dir` (`.c`, `.h`, `.cpp`).
fn c_files(dir: &Path, out: &mut Vec<PathBuf>) {
    files_ending(dir, &["c", "h", "cpp"], out);
}

/// No source file of hookprof, the wrapper, the pass (its Rust and its C++ shim) or the
/// runtime is over [`MOST_LINES`] lines.
#[test]
fn no_source_file_is_over_1000_lines() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut paths = Vec::new();
    for part in ["hookprof/src", "wrapper/src", "pass/src"] {
        rust_files(&root.join(part), &mut paths);
    }
    for part in ["pass/shim", "runtime/src", "runtime/include"] {
        c_files(&root.join(part), &mut paths);
    }
    paths.sort();
    assert!(
        paths.len() > 150,
        "{} files: the check reads nothing",
        paths.len()
    );
    let long: Vec<String> = paths
        .iter()
        .filter_map(|path| {
            let lines = std::fs::read_to_string(path).unwrap().lines().count();
            (lines > MOST_LINES).then(|| {
                format!(
                    "{}: {lines} lines",
                    path.strip_prefix(&root).unwrap().display()
                )
            })
        })
        .collect();
    assert!(
        long.is_empty(),
        "files over {MOST_LINES} lines: split each by what its parts do (a folder of modules, \
         docs/architecture.md, \"hookprof's layers\"):\n  {}",
        long.join("\n  ")
    );
}

/// The wrapper's and the pass's modules import each other in one direction: no cycle (the
/// order each crate's lib.rs gives). They have no floors; hookprof's check above has both.
#[test]
fn the_wrapper_and_the_pass_import_in_one_direction() {
    for krate in ["wrapper", "pass"] {
        let src = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("..")
            .join(krate)
            .join("src");
        let layers = layers(&src);
        assert!(layers.files.len() > 8, "{krate}: the check reads nothing");
        let found = violations(&layers);
        assert!(
            found.is_empty(),
            "{krate}'s modules import each other in a circle (see its lib.rs):\n  {}",
            found.join("\n  ")
        );
    }
}

/// What tells a file's kind from its bytes, and lives in src/input/ only: the sniffers of
/// input/detect.rs, the magic checks they call, and the door's own.
const SNIFFERS: [&str; 5] = [
    "is_hktrace",
    "is_nitro_dump",
    "header_offset",
    "starts_like",
    "dump_kind",
];

#[test]
fn only_input_tells_what_a_file_is() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let layers = layers(&src);
    let detect = vec!["input".to_string(), "detect".to_string()];
    let mut found = Vec::new();
    for (module, to) in &layers.edges {
        if module.first().is_some_and(|m| m == "input") {
            continue;
        }
        if let Some(path) = to.get(&detect) {
            found.push(format!(
                "src/{} imports `{path}`",
                layers.files[module].display()
            ));
        }
    }
    // The sniffers by name, in every file outside input/ (the binary's too).
    let mut paths = Vec::new();
    rust_files(&src, &mut paths);
    paths.sort();
    for path in &paths {
        let file = path.strip_prefix(&src).unwrap();
        if file.starts_with("input") {
            continue;
        }
        let code = code_of(&std::fs::read_to_string(path).unwrap());
        for sniffer in SNIFFERS {
            let named = code.match_indices(sniffer).any(|(at, _)| {
                let before = code[..at].chars().next_back();
                let after = code[at + sniffer.len()..].chars().next();
                !before.is_some_and(is_ident) && !after.is_some_and(is_ident)
            });
            if named {
                found.push(format!("src/{} calls `{sniffer}`", file.display()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "only src/input/ may tell what a file is; open it through `input::open` or ask \
         `input::kind` (src/input/door.rs) instead:\n  {}",
        found.join("\n  ")
    );
}

/// The code of a C file without comments and string or char literals (each replaced by a
/// space, or by `""` for a literal), line breaks kept.
fn c_code(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < b.len() {
        if b[i..].starts_with(b"/*") {
            let end = text[i + 2..].find("*/").map_or(b.len(), |e| i + 2 + e + 2);
            out.extend(text[i..end].chars().filter(|&c| c == '\n'));
            out.push(' ');
            i = end;
        } else if b[i..].starts_with(b"//") {
            i = text[i..].find('\n').map_or(b.len(), |e| i + e);
        } else if b[i] == b'"' || b[i] == b'\'' {
            let quote = b[i];
            let mut j = i + 1;
            while j < b.len() && b[j] != quote && b[j] != b'\n' {
                j += if b[j] == b'\\' { 2 } else { 1 };
            }
            out.push_str("\"\"");
            i = (j + 1).min(b.len());
        } else {
            let c = text[i..].chars().next().unwrap();
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}

/// A C part's top-level functions: (defined, declared without a body) names. A top-level
/// statement is what lies between `;`, `{…}` and `}` at brace depth 0, preprocessor lines
/// left out; a function's name is the identifier before its parameter list.
fn c_functions(code: &str) -> (Vec<String>, Vec<String>) {
    let code: String = code
        .lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .collect::<Vec<_>>()
        .join("\n");
    let name_before_params = |stmt: &str| -> Option<String> {
        // the last identifier followed by `(` whose parenthesis is not an attribute's
        let mut depth = 0usize;
        let bytes = stmt.as_bytes();
        let mut found = None;
        for (i, &c) in bytes.iter().enumerate() {
            match c {
                b'(' => {
                    if depth == 0 {
                        let before = stmt[..i].trim_end();
                        let start = before
                            .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                            .map_or(0, |p| p + 1);
                        let ident = &before[start..];
                        if !ident.is_empty()
                            && !matches!(ident, "__attribute__" | "HKRT_HOOK_CC" | "sizeof")
                            && found.is_none()
                        {
                            found = Some(ident.to_string());
                        }
                    }
                    depth += 1;
                }
                b')' => depth = depth.saturating_sub(1),
                b'=' if depth == 0 => return None, // a variable with an initializer
                _ => {}
            }
        }
        found
    };
    let (mut defined, mut declared) = (Vec::new(), Vec::new());
    let mut depth = 0usize;
    let mut stmt = String::new();
    for c in code.chars() {
        match c {
            '{' => {
                if depth == 0 {
                    let s = stmt.trim();
                    let is_type = ["struct", "union", "enum", "typedef"]
                        .iter()
                        .any(|k| s.starts_with(k) && !s.contains('('));
                    if !is_type && s.ends_with(')') {
                        if let Some(n) = name_before_params(s) {
                            defined.push(n);
                        }
                    }
                    stmt.clear();
                }
                depth += 1;
            }
            '}' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    stmt.clear();
                }
            }
            ';' if depth == 0 => {
                let s = stmt.trim();
                if s.starts_with("static") && s.contains('(') {
                    if let Some(n) = name_before_params(s) {
                        declared.push(n);
                    }
                }
                stmt.clear();
            }
            _ if depth == 0 => stmt.push(c),
            _ => {}
        }
    }
    (defined, declared)
}

/// runtime/src/trace.c includes its parts in one order, which runtime/src/trace/README.md's
/// table gives; each part calls only the parts before it (the compiler checks that, as long as
/// no part declares another part's function), and what must call a later part is declared in
/// declarations.h, where each declaration is one a part before its definition needs.
#[test]
fn the_runtime_parts_call_only_parts_before_them_or_declarations_h() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../runtime/src");
    let trace_c = std::fs::read_to_string(root.join("trace.c")).unwrap();
    let order: Vec<String> = trace_c
        .lines()
        .filter_map(|l| l.trim().strip_prefix("#include \"trace/"))
        .map(|l| l.trim_end_matches('"').to_string())
        .collect();
    let readme = std::fs::read_to_string(root.join("trace/README.md")).unwrap();
    let table: Vec<String> = readme
        .lines()
        .filter_map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            (cells.len() > 3 && cells[1].parse::<usize>().is_ok()).then(|| cells[2].to_string())
        })
        .collect();
    assert_eq!(
        order, table,
        "runtime/src/trace.c includes its parts in another order than trace/README.md's table"
    );
    let mut on_disk: Vec<String> = std::fs::read_dir(root.join("trace"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".h"))
        .collect();
    on_disk.sort();
    let mut sorted = order.clone();
    sorted.sort();
    assert_eq!(
        sorted, on_disk,
        "every part of runtime/src/trace/ included once by trace.c"
    );

    let mut defined_in: BTreeMap<String, usize> = BTreeMap::new();
    let mut parts = Vec::new();
    for (i, part) in order.iter().enumerate() {
        let code = c_code(&std::fs::read_to_string(root.join("trace").join(part)).unwrap());
        let (defined, declared) = c_functions(&code);
        for d in &defined {
            defined_in.entry(d.clone()).or_insert(i);
        }
        parts.push((part.clone(), code, defined, declared));
    }
    assert!(
        defined_in.len() > 150,
        "the parser found {} functions in runtime/src/trace/: the check reads nothing",
        defined_in.len()
    );
    let mut problems = Vec::new();
    for (i, (part, _, defined, declared)) in parts.iter().enumerate() {
        for name in declared {
            if part == "declarations.h" {
                match defined_in.get(name) {
                    Some(&at) if at > i => {
                        let calls = |code: &str| {
                            code.match_indices(&format!("{name}(")).any(|(p, _)| {
                                !code[..p]
                                    .chars()
                                    .next_back()
                                    .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
                            })
                        };
                        let called_early = parts[..at]
                            .iter()
                            .any(|(p, code, _, _)| p != "declarations.h" && calls(code));
                        if !called_early {
                            problems.push(format!(
                                "declarations.h declares {name}, which no part before {} calls",
                                parts[at].0
                            ));
                        }
                    }
                    Some(&at) => problems.push(format!(
                        "declarations.h declares {name}, defined before it in {}",
                        parts[at].0
                    )),
                    None => {
                        problems.push(format!("declarations.h declares {name}, defined nowhere"))
                    }
                }
            } else if !defined.contains(name) {
                problems.push(format!(
                    "{part} declares {name}, which it does not define: a call to a later part \
                     goes through declarations.h"
                ));
            }
        }
    }
    assert!(
        problems.is_empty(),
        "runtime/src/trace/:\n  {}",
        problems.join("\n  ")
    );
}
