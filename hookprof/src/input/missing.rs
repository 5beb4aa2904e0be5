//! Why a trace is not there: a trace path that does not exist is named with what the program
//! that should have written it says about itself. "No such file or directory" alone left a user
//! who forgot `hookcc --trace`, or who typed `prog.hktrace` for `prog.<pid>.hktrace`, with
//! nothing to go on (issue 34).

use std::path::{Path, PathBuf};

use crate::input::error::Error;
use crate::input::symbols::ElfSymbols;

/// The symbol every program built with `hookcc --trace` defines (the trace runtime's entry
/// hook, exported: a stripped executable keeps it in its dynamic symbols).
const TRACE_HOOK: &str = "__hookcc_enter";

/// The program a trace name suggests: `DIR/prog` for `DIR/prog.1234.hktrace`,
/// `DIR/prog.hktrace` or the unexpanded glob `DIR/prog.*.hktrace` (what the shell passes on
/// when nothing matches). The part of the file name before its first `.`.
fn program_named_by(path: &Path) -> Option<PathBuf> {
    let name = path.file_name()?.to_str()?;
    let stem = name.split('.').next().filter(|s| !s.is_empty())?;
    if stem.contains(['*', '?', '[']) {
        return None;
    }
    Some(path.with_file_name(stem))
}

/// The `STEM.*.hktrace` files beside `path` (the runs of the program it names), sorted.
fn runs_beside(path: &Path, stem: &str) -> Vec<PathBuf> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let prefix = format!("{stem}.");
    let mut found: Vec<PathBuf> = std::fs::read_dir(&dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(&prefix) && n.ends_with(".hktrace"))
        })
        .map(|p| match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => p,
            _ => PathBuf::from(p.file_name().unwrap_or_default()),
        })
        .collect();
    found.sort();
    found
}

/// The error for a trace `path` that does not exist. Where an executable can be looked at —
/// `exe` (the user's `--exe`), else the program the trace's name suggests, beside it — it says
/// whether that program has hookcc's trace hooks: without them, "no trace: was `prog` built
/// with `hookcc --trace`?"; with them, how its traces are named and where they go.
pub fn no_trace(path: &Path, exe: Option<&Path>) -> Error {
    let glob = path.to_string_lossy().contains(['*', '?', '[']);
    let what = if glob {
        "no file matches"
    } else {
        "no such file"
    };
    let program = exe
        .map(Path::to_path_buf)
        .or_else(|| program_named_by(path));
    let symbols = program
        .as_deref()
        .filter(|p| p.is_file())
        .and_then(|p| ElfSymbols::load(p).ok());
    let why = match (program.as_deref(), symbols) {
        (Some(program), Some(symbols)) if !symbols.defines(TRACE_HOOK) => format!(
            "{what}: no trace: was `{}` built with `hookcc --trace`? It has none of the trace \
             runtime's hooks (no {TRACE_HOOK}): rebuild it with `hookcc --trace` (or \
             CC=hookcc HOOKCC_TRACE=1 make) and run it",
            program.display()
        ),
        (Some(program), Some(_)) => {
            let stem = program
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let runs = if glob {
                Vec::new()
            } else {
                runs_beside(path, &stem)
            };
            if runs.is_empty() {
                format!(
                    "{what}: `{}` has hookcc's trace hooks: each run writes {stem}.<pid>.hktrace \
                     in the directory it starts in (or $HOOKCC_OUTPUT); run it first",
                    program.display()
                )
            } else {
                let list: Vec<String> = runs.iter().map(|p| p.display().to_string()).collect();
                format!(
                    "{what}: `{}` writes {stem}.<pid>.hktrace, one a run (or $HOOKCC_OUTPUT); \
                     here: {}",
                    program.display(),
                    list.join(", ")
                )
            }
        }
        _ => format!(
            "{what} (a program built with `hookcc --trace` writes PROGRAM.<pid>.hktrace in the \
             directory it starts in, or $HOOKCC_OUTPUT, when it runs)"
        ),
    };
    Error::NoTrace {
        path: path.to_path_buf(),
        why,
    }
}
