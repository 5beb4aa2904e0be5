//! Truncated and corrupted traces give an error or a result, never a panic.

mod common;

use std::path::Path;

use common::*;
use hookprof::format::{Endian, Trace};
use hookprof::model::Profile;
use hookprof::report::{FlatReport, Format};
use hookprof::symbols::NoSymbols;

/// Everything a command does with a trace, short of reading ELF files.
fn read_everything(bytes: &[u8]) -> Result<(), String> {
    let trace = Trace::new(bytes).map_err(|e| e.to_string())?;
    for chunk in trace.chunks() {
        if let hookprof::format::Chunk::Events(events) = chunk.map_err(|e| e.to_string())?.chunk {
            for record in events.iter() {
                record.map_err(|e| e.to_string())?;
            }
        }
    }
    let profile = Profile::from_trace(&trace).map_err(|e| e.to_string())?;
    let _ = hookprof::info::render(Path::new("t.hktrace"), &profile.summary);
    let _ = hookprof::profile_warnings(&profile.summary);
    for per_thread in [false, true] {
        let report = FlatReport::build(&profile, &mut NoSymbols, per_thread);
        for format in Format::ALL {
            report.render(format, &mut Vec::new()).unwrap();
        }
    }
    Ok(())
}

fn assert_error_message(message: &str) {
    assert!(
        message.starts_with("byte "),
        "error without a byte offset: {message}"
    );
}

#[test]
fn every_truncation_is_an_error_or_a_shorter_trace() {
    let mut incomplete = header(Endian::Little);
    incomplete.flags = 0;
    for bytes in [
        golden_trace(Endian::Little),
        golden_trace(Endian::Big),
        golden_trace_with(incomplete, true),
    ] {
        assert!(read_everything(&bytes).is_ok());
        for len in 0..bytes.len() {
            if let Err(message) = read_everything(&bytes[..len]) {
                assert_error_message(&message);
            }
        }
    }
}

#[test]
fn truncation_inside_a_chunk_says_so() {
    let bytes = golden_trace(Endian::Little);
    // Inside the EXE chunk's payload (header 64 bytes + chunk header 16).
    let message = read_everything(&bytes[..64 + 16 + 4]).unwrap_err();
    assert!(
        message.contains("truncated: EXE chunk declares"),
        "{message}"
    );
    assert!(message.starts_with("byte 64: "), "{message}");
}

#[test]
fn every_flipped_byte_is_an_error_or_a_result() {
    let bytes = golden_trace(Endian::Little);
    for pos in 0..bytes.len() {
        for mask in [0x01u8, 0x02, 0x10, 0x40, 0x80, 0xff] {
            let mut corrupt = bytes.clone();
            corrupt[pos] ^= mask;
            if let Err(message) = read_everything(&corrupt) {
                assert_error_message(&message);
            }
        }
    }
}

#[test]
fn random_corruption_never_panics() {
    // xorshift64*: deterministic, no dependency.
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        state.wrapping_mul(0x2545_f491_4f6c_dd1d)
    };
    let base = golden_trace(Endian::Big);
    for _ in 0..5000 {
        let mut corrupt = base.clone();
        let edits = 1 + next() % 8;
        for _ in 0..edits {
            let pos = (next() % corrupt.len() as u64) as usize;
            corrupt[pos] = next() as u8;
        }
        if next() % 4 == 0 {
            corrupt.truncate((next() % corrupt.len() as u64) as usize);
        }
        if let Err(message) = read_everything(&corrupt) {
            assert_error_message(&message);
        }
    }
}

#[test]
fn garbage_and_empty_inputs_are_errors() {
    for bytes in [&b""[..], b"HKTRACE", &[0u8; 64], &[0xffu8; 200]] {
        assert_error_message(&read_everything(bytes).unwrap_err());
    }
}
