//! The fuzz targets' bodies: every input format hookprof reads, decoded from bytes in memory
//! with everything a command does short of reading an ELF file. None may panic or hang
//! whatever the bytes; an error is the expected answer to most inputs.
//!
//! `fuzz/` (outside the workspace, `cargo +nightly fuzz run trace`) drives them with libFuzzer
//! for the long runs (docs/reliability.md); `hookprof/tests/fuzz_corpus.rs` runs them on the
//! committed corpus (`fuzz/corpus/<target>/`, real outputs of the test programs) and on
//! deterministic mutations of it in every `cargo test`, which is what CI runs.

use std::collections::HashMap;
use std::path::Path;

use crate::analysis::model::Profile;
use crate::input::format::{Chunk, Endian, Trace};
use crate::input::symbols::NoSymbols;
use crate::output::report::{FlatReport, Format};

/// A target's name and the function that takes its input.
pub type Target = (&'static str, fn(&[u8]));

/// The targets, by name: what `fuzz/fuzz_targets/<name>.rs` and the corpus directories use.
pub const TARGETS: &[Target] = &[
    ("trace", trace),
    ("ti", ti),
    ("nitro", nitro),
    ("pfp", pfp),
    ("gprof", gprof),
];

/// A `.hktrace`: header, chunks, records, the replayed profile, `info` and every report format.
pub fn trace(data: &[u8]) {
    let Ok(trace) = Trace::new(data) else {
        return;
    };
    for chunk in trace.chunks() {
        let Ok(chunk) = chunk else {
            break;
        };
        if let Chunk::Events(events) = chunk.chunk {
            for record in events.iter() {
                if record.is_err() {
                    break;
                }
            }
        }
    }
    let Ok(profile) = Profile::from_trace(&trace) else {
        return;
    };
    let _ = crate::output::info::render(Path::new("fuzz.hktrace"), &profile.summary);
    let _ = crate::analysis::warnings::profile_warnings(&profile.summary);
    for per_thread in [false, true] {
        let report = FlatReport::build(&profile, &mut NoSymbols, per_thread);
        for format in Format::ALL {
            let _ = report.render(format, &mut Vec::new());
        }
    }
}

/// A TI dump, binary or CCS hex text, read with each record layout (3 or 4 words, either
/// byte order).
pub fn ti(data: &[u8]) {
    for pointer_size in [4, 8] {
        for endian in [Endian::Little, Endian::Big] {
            let _ = crate::input::ti::Dump::parse(
                data,
                crate::input::ti::Layout {
                    pointer_size,
                    endian,
                },
            );
        }
    }
}

/// A NITRO call-trace or function-cost buffer, rendered as `hookprof nitro` prints it (no
/// names: every address is unknown).
pub fn nitro(data: &[u8]) {
    if let Ok(dump) = crate::input::nitro::Dump::parse(data) {
        let names: HashMap<u64, String> = HashMap::new();
        for inclusive in [false, true] {
            let options = crate::output::nitro::Options {
                lr: Some(0x1000),
                inclusive,
            };
            let _ = crate::output::nitro::render(&dump, &names, &options);
        }
    }
}

/// A dump of `pfpInst`, rendered as `hookprof pfp` prints it.
pub fn pfp(data: &[u8]) {
    for endian in [Endian::Little, Endian::Big] {
        if let Ok(instance) = crate::input::pfp::Instance::parse(data, endian) {
            let _ = instance.render();
        }
    }
}

/// A dump of the gprof data, converted to gmon.out as `hookprof gprof` does.
pub fn gprof(data: &[u8]) {
    for endian in [Endian::Little, Endian::Big] {
        if let Ok(parsed) = crate::input::gprof::Data::parse(data, endian) {
            for pointer_size in [4, 8] {
                let _ = parsed.gmon(pointer_size, endian);
            }
        }
    }
}
