//! The one door for inputs: what a file is ([`kind`]), and any file a view reads opened as one
//! trace ([`open`]): the file's own `.hktrace`, or a dump's calls re-encoded as a `.hktrace` in
//! memory, with the names the dump gives its functions.
//!
//! Every kind hookprof reads, by its first bytes ([`Kind`]): a `.hktrace` (`HKTRACE\0`); a
//! NITRO buffer (its magic at one of [`HEADER_OFFSETS`](crate::input::nitro::HEADER_OFFSETS));
//! a dump of PFP's `pfpInst` (`HOOKPFP\0`); a dump of hookcc's gprof data (`HOOKGPRF`); a core
//! file (an ELF file of type `ET_CORE`); a capture of a target's stream (its START record);
//! else a TI dump (binary or CCS hex, which have no magic). Commands and views never look at
//! a file's bytes to tell its kind: they ask here.

use std::collections::HashMap;
use std::path::Path;

use crate::input::detect;
pub use crate::input::detect::Kind;
use crate::input::error::Error;
use crate::input::trace_file::TraceFile;

impl Kind {
    /// Why a view cannot read a file of this kind, and which command does.
    fn not_for_views(self) -> Option<&'static str> {
        Some(match self {
            Kind::Trace | Kind::Nitro | Kind::Ti => return None,
            Kind::Pfp => {
                "a dump of PFP's pfpInst, not a trace: `hookprof pfp DUMP --exe ELF` prints its \
                 measurement lines"
            }
            Kind::Gprof => {
                "a dump of hookcc's gprof data, not a trace: `hookprof gprof DUMP --exe ELF` \
                 writes the gmon.out GNU gprof reads"
            }
            Kind::Core => {
                "a core file, not a trace: `hookprof core PROGRAM CORE` writes a trace of the \
                 records it still holds, which every view reads"
            }
            Kind::Stream => {
                "a target's stream as it came, not a trace: `hookprof record --serial FILE \
                 --exe ELF` writes its trace"
            }
        })
    }
}

/// What the file at `path` is.
pub fn kind(path: &Path) -> Result<Kind, Error> {
    if detect::is_hktrace(path)? {
        return Ok(Kind::Trace);
    }
    dump_kind(path)
}

/// What the file at `path`, not a `.hktrace`, is.
fn dump_kind(path: &Path) -> Result<Kind, Error> {
    if detect::is_nitro_dump(path)? {
        return Ok(Kind::Nitro);
    }
    detect::dump_kind(path)
}

/// An input opened for the views: one trace, whatever the file was.
pub struct Input {
    pub kind: Kind,
    /// The file's own trace, mapped; or a dump's calls as a trace in memory (errors name the
    /// dump).
    pub trace: TraceFile,
    /// A dump's function names, by the addresses its trace gives them; `None`: the ELF files
    /// of the trace's modules name them.
    pub names: Option<HashMap<u64, String>>,
    /// Warnings from reading a dump, for the view to show with the replay's.
    pub warnings: Vec<String>,
}

/// Opens `path` for a view: a `.hktrace` as it is; a NITRO function cost measurement buffer or
/// a TI dump of the program `exe` (required then) converted: for TI its calls, one thread per
/// task, in cycles of task time, as `hookprof ti` reads them. Any other kind is refused,
/// saying which command reads it.
pub fn open(path: &Path, exe: Option<&Path>) -> Result<Input, Error> {
    if detect::is_hktrace(path)? {
        return Ok(Input {
            kind: Kind::Trace,
            trace: TraceFile::open(path)?,
            names: None,
            warnings: Vec::new(),
        });
    }
    let Some(exe) = exe else {
        return Err(Error::Unsupported {
            path: path.to_path_buf(),
            message: "not a .hktrace file (it does not start with \"HKTRACE\"); to read it as a \
                      TI dump (hookcc --hook-runtime=ti) or a NITRO function cost buffer, give \
                      the program with --exe"
                .to_string(),
        });
    };
    let kind = dump_kind(path)?;
    if let Some(message) = kind.not_for_views() {
        return Err(Error::Unsupported {
            path: path.to_path_buf(),
            message: message.to_string(),
        });
    }
    if kind == Kind::Nitro {
        let converted = crate::input::nitro_trace::hktrace_file(path, exe)?;
        return Ok(Input {
            kind,
            trace: TraceFile::from_bytes(path, converted.trace),
            names: Some(converted.names),
            warnings: converted.warnings,
        });
    }
    let options = crate::input::ti_calls::Options {
        exe: exe.to_path_buf(),
        all_symbols: false,
        profile_data: None,
        record_words: None,
    };
    let processed = crate::input::ti_calls::analyse_file(path, &options)?;
    let names = processed.analysis.function_names();
    let bytes = processed.analysis.to_hktrace();
    Ok(Input {
        kind,
        trace: TraceFile::from_bytes(path, bytes),
        names: Some(names),
        warnings: processed.warnings,
    })
}
