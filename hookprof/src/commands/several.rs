//! Several traces given to one command (`hookprof report prog.*.hktrace`): what the command
//! says of them, and when it refuses them. One place for every command that takes more than
//! one trace (`report` adds them up; `flame` and `timeline` put them side by side).
//!
//! A glob such as `prog.*.hktrace` matches every run of `prog` left in the directory, and
//! `*.hktrace` the runs of other programs too: a report of them all added 152 000 calls up
//! where one run made 76 000, and said nothing (issue 34). So the traces are named, and a
//! report refuses to add up runs of different executables unless told to.

use std::collections::BTreeSet;
use std::path::PathBuf;

use crate::input::error::Error;
use crate::input::trace_file::TraceFile;
use crate::output::file::same_file;

/// What a command does with several traces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Combine {
    /// One profile of them all, functions of the same name added up (`report`): traces of
    /// different executables are refused unless `mixed_programs`.
    AddedUp { mixed_programs: bool },
    /// Each trace a process of its own in one output (`flame`'s roots, `timeline`'s tracks).
    SideBySide,
}

/// One trace, as the note names it.
struct Run {
    path: PathBuf,
    pid: u64,
    exe: Option<PathBuf>,
}

fn program_name(exe: &Option<PathBuf>) -> String {
    exe.as_deref()
        .map_or_else(|| "(no EXE chunk)".to_string(), |p| p.display().to_string())
}

/// Checks `paths` (two or more) for `combine` and returns the note to show on stderr:
/// `3 traces of 3 processes of /x/prog added up: a.hktrace (pid 1), …`. Refuses, with every
/// trace and its executable, traces of different executables to be added up without
/// `mixed_programs`. One trace: no note.
pub fn several_traces(paths: &[PathBuf], combine: Combine) -> Result<Option<String>, Error> {
    if paths.len() < 2 {
        return Ok(None);
    }
    if let Combine::AddedUp { .. } = combine {
        // `prog.hktrace prog.*.hktrace` names a trace twice: it would count twice.
        for (i, a) in paths.iter().enumerate() {
            if let Some(b) = paths[..i].iter().find(|b| same_file(a, b)) {
                return Err(Error::Unsupported {
                    path: a.clone(),
                    message: format!(
                        "the same trace as {}: given twice, its calls would be added up twice",
                        b.display()
                    ),
                });
            }
        }
    }
    let mut runs = Vec::with_capacity(paths.len());
    for path in paths {
        let process = TraceFile::open(path).and_then(|t| t.process());
        let (pid, exe) = match (process, combine) {
            (Ok(process), _) => process,
            (Err(e), Combine::AddedUp { .. }) => return Err(e),
            // Not a .hktrace file (a TI dump, which the views read with --exe), or one the
            // view will say is damaged: nothing to name here.
            (Err(_), Combine::SideBySide) => return Ok(None),
        };
        runs.push(Run {
            path: path.clone(),
            pid,
            exe,
        });
    }
    let programs: BTreeSet<String> = runs.iter().map(|r| program_name(&r.exe)).collect();
    let processes: BTreeSet<u64> = runs.iter().map(|r| r.pid).collect();
    let list = |with_program: bool| -> String {
        runs.iter()
            .map(|r| {
                if with_program {
                    format!("{} → {}", r.path.display(), program_name(&r.exe))
                } else {
                    format!("{} (pid {})", r.path.display(), r.pid)
                }
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    if let Combine::AddedUp {
        mixed_programs: false,
    } = combine
    {
        if programs.len() > 1 {
            return Err(Error::DifferentPrograms {
                programs: programs.len(),
                list: list(true),
            });
        }
    }
    let of = if programs.len() == 1 {
        format!("of {}", programs.iter().next().map_or("", String::as_str))
    } else {
        format!("of {} programs", programs.len())
    };
    let how = match combine {
        Combine::AddedUp { .. } => "added up",
        Combine::SideBySide => "side by side, each process on its own",
    };
    Ok(Some(format!(
        "{} traces of {} process{} {of} {how}: {}",
        runs.len(),
        processes.len(),
        if processes.len() == 1 { "" } else { "es" },
        list(programs.len() > 1)
    )))
}
