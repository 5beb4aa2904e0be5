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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::format::{Endian, Header, Writer};

    /// Every kind told from a file's first bytes, and a view refused the kinds it cannot read
    /// with the command that reads them.
    #[test]
    fn tells_every_kind_by_its_first_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let file = |name: &str, bytes: &[u8]| {
            let path = dir.path().join(name);
            std::fs::write(&path, bytes).unwrap();
            path
        };
        let trace = Writer::new(Vec::new(), &Header::new(Endian::Little))
            .unwrap()
            .into_inner();
        let mut core = vec![0u8; 64];
        core[..4].copy_from_slice(b"\x7fELF");
        core[5] = 1;
        core[16] = 4;
        let mut executable = core.clone();
        executable[16] = 2;
        let kinds = [
            ("t.hktrace", trace, Kind::Trace),
            ("nitro.bin", b"HKNITRO\0and the rest".to_vec(), Kind::Nitro),
            ("nitro4.bin", b"\0\0\0\0HKNITRO\0".to_vec(), Kind::Nitro),
            ("pfp.bin", b"HOOKPFP\0and the rest".to_vec(), Kind::Pfp),
            ("gprof.bin", b"HOOKGPRFand the rest".to_vec(), Kind::Gprof),
            ("core", core, Kind::Core),
            ("stream.bin", vec![3, 0, 1, 4, 0x80, 0x01], Kind::Stream),
            ("ti.dat", b"1651 1 0 0 0\n0x00000000\n".to_vec(), Kind::Ti),
            ("prog", executable, Kind::Ti),
        ];
        for (name, bytes, expected) in kinds {
            let path = file(name, &bytes);
            assert_eq!(kind(&path).unwrap(), expected, "{name}");
        }
        let exe = Path::new("prog");
        for (name, command) in [
            ("pfp.bin", "hookprof pfp"),
            ("gprof.bin", "hookprof gprof"),
            ("core", "hookprof core"),
            ("stream.bin", "hookprof record"),
        ] {
            let Err(error) = open(&dir.path().join(name), Some(exe)) else {
                panic!("{name} opened for a view");
            };
            assert!(error.to_string().contains(command), "{name}: {error}");
        }
        let Err(error) = open(&dir.path().join("pfp.bin"), None) else {
            panic!("a dump opened without --exe");
        };
        assert!(
            error.to_string().contains("give the program with --exe"),
            "{error}"
        );
    }
}
