//! Truncated and corrupted traces give an error or a result, never a panic.

mod common;

use std::path::Path;

use common::*;
use hookprof::analysis::model::Profile;
use hookprof::input::format::{Endian, Trace};
use hookprof::input::symbols::NoSymbols;
use hookprof::output::report::{FlatReport, Format};

/// Everything a command does with a trace, short of reading ELF files.
fn read_everything(bytes: &[u8]) -> Result<(), String> {
    let trace = Trace::new(bytes).map_err(|e| e.to_string())?;
    for chunk in trace.chunks() {
        if let hookprof::input::format::Chunk::Events(events) =
            chunk.map_err(|e| e.to_string())?.chunk
        {
            for record in events.iter() {
                record.map_err(|e| e.to_string())?;
            }
        }
    }
    let profile = Profile::from_trace(&trace).map_err(|e| e.to_string())?;
    let _ = hookprof::output::info::render(Path::new("t.hktrace"), &profile.summary);
    let _ = hookprof::analysis::warnings::profile_warnings(&profile.summary);
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

/// A real trace of the fuzz corpus (fuzz/programs/threads_longjmp.c: two threads, PACKED
/// chunks, checksums) and its chunks: `(offset, total length, type)`.
fn real_trace() -> (Vec<u8>, Vec<(usize, usize, u32)>) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fuzz/corpus/trace/threads-longjmp-packed.hktrace");
    let bytes = std::fs::read(path).unwrap();
    let trace = Trace::new(&bytes).unwrap();
    let chunks = trace
        .chunks()
        .map(|c| {
            let c = c.unwrap();
            (c.offset as usize, c.total_len() as usize, c.chunk_type)
        })
        .collect();
    (bytes, chunks)
}

/// The warnings every report prints for `bytes`.
fn warnings(bytes: &[u8]) -> Vec<String> {
    let trace = Trace::new(bytes).unwrap();
    let profile = Profile::from_trace(&trace).unwrap();
    hookprof::analysis::warnings::profile_warnings(&profile.summary)
}

const PACKED: u32 = hookprof::input::format::chunk_type::PACKED;
const CHECK: u32 = hookprof::input::format::chunk_type::CHECK;

#[test]
fn the_real_trace_has_no_warning() {
    let (bytes, _) = real_trace();
    assert_eq!(warnings(&bytes), Vec::<String>::new());
}

#[test]
fn a_chunk_repeated_with_its_check_chunk_is_reported_where_it_repeats() {
    // Before: exit 0, no warning, and the thread's counts doubled (issue 26 item 6).
    let (bytes, chunks) = real_trace();
    let mut tested = 0;
    for (i, &(offset, len, kind)) in chunks.iter().enumerate() {
        if kind != PACKED {
            continue;
        }
        let (check, check_len, check_kind) = chunks[i + 1];
        assert_eq!(check_kind, CHECK);
        let end = check + check_len;
        assert_eq!(offset + len, check);
        // Right after itself, and after the chunks that follow it.
        for at in [end, bytes.len() - 48 - 24] {
            let mut copied = bytes[..at].to_vec();
            copied.extend_from_slice(&bytes[offset..end]);
            copied.extend_from_slice(&bytes[at..]);
            let warnings = warnings(&copied);
            let expected = format!("the PACKED chunk at byte {at} ");
            assert!(
                warnings
                    .iter()
                    .any(|w| w.contains(&expected) && w.contains(&format!("byte {offset}"))),
                "copy of byte {offset} at {at}: {warnings:#?}"
            );
            assert!(
                warnings.iter().any(|w| w.starts_with(
                    "the header (byte 48) says the finished \
                     trace holds 17 records, but"
                )),
                "{warnings:#?}"
            );
            tested += 1;
        }
    }
    assert_eq!(tested, 4);
}

#[test]
fn a_packed_chunk_that_goes_back_in_time_is_reported_in_an_unfinished_trace() {
    // A thread's second chunk whose records start before its first one's: only the order
    // shows it (an unfinished trace's header has no counts to compare).
    let (bytes, chunks) = real_trace();
    let (offset, len, _) = *chunks.iter().find(|c| c.2 == PACKED).unwrap();
    let end = offset + len + 24;
    let mut later = bytes[..end].to_vec();
    later.extend_from_slice(&bytes[offset..end]);
    // The copy's first_time (fixed part, offset 8) one tick earlier: another chunk, not a
    // copy, whose records start before the first one's.
    let first_time_at = end + 16 + 8;
    let first_time =
        u64::from_le_bytes(later[first_time_at..first_time_at + 8].try_into().unwrap());
    later[first_time_at..first_time_at + 8].copy_from_slice(&(first_time - 1).to_le_bytes());
    later.extend_from_slice(&bytes[end..]);
    later[32] &= !1; // not finished
    let warnings = warnings(&later);
    let expected = format!(
        "the PACKED chunk at byte {end} (thread 22312) starts before the thread's chunk at byte \
         {offset}"
    );
    assert!(
        warnings.iter().any(|w| w.contains(&expected)),
        "{warnings:#?}"
    );
}

#[test]
fn a_finished_trace_cut_at_any_chunk_boundary_is_reported() {
    // Before: 146 of 149 such cuts of a real trace reported without a word (issue 26 item 6).
    let (bytes, chunks) = real_trace();
    let clock = chunks.len() - 2;
    assert_eq!(chunks[clock].2, hookprof::input::format::chunk_type::CLOCK);
    for &(offset, _, _) in &chunks[1..=clock] {
        let warnings = warnings(&bytes[..offset]);
        let cut = format!("the file was cut at byte {offset}");
        assert!(
            warnings.iter().any(|w| w.contains(&cut)),
            "cut at {offset}: {warnings:#?}"
        );
    }
    // Between the CLOCK chunk and its CHECK chunk: the checks name the CLOCK chunk.
    let warnings = warnings(&bytes[..chunks[clock + 1].0]);
    let unchecked = format!("the CLOCK chunk at byte {}", chunks[clock].0);
    assert!(
        warnings.iter().any(|w| w.contains(&unchecked)),
        "{warnings:#?}"
    );
}

#[test]
fn more_lost_in_chunks_than_in_the_header_is_reported() {
    let (bytes, chunks) = real_trace();
    let (clock, _, _) = *chunks
        .iter()
        .find(|c| c.2 == hookprof::input::format::chunk_type::CLOCK)
        .unwrap();
    let mut lost = bytes[..clock].to_vec();
    // A LOST chunk of 5 records (thread 22310), unchecked: the checks say so too.
    for word in [4u64 | 8 << 32, 22310, 5] {
        lost.extend_from_slice(&word.to_le_bytes());
    }
    lost.extend_from_slice(&bytes[clock..]);
    let warnings = warnings(&lost);
    assert!(
        warnings.iter().any(
            |w| w.starts_with("the LOST chunks count 5 lost records, more than the header's 0")
        ),
        "{warnings:#?}"
    );
}

#[test]
fn the_fuzz_corpus_damaged_traces_are_reported() {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/corpus/trace");
    let read = |name: &str| std::fs::read(corpus.join(name)).unwrap();
    let repeated = warnings(&read("threads-longjmp-packed-chunk-repeated.hktrace"));
    assert!(
        repeated.iter().any(|w| w
            .contains("the PACKED chunk at byte 736 (thread 22310) repeats the one at byte 632")),
        "{repeated:#?}"
    );
    let cut = warnings(&read("threads-longjmp-packed-cut-at-chunk.hktrace"));
    assert!(
        cut.iter()
            .any(|w| w.contains("no CLOCK chunk") && w.contains("cut at byte 792")),
        "{cut:#?}"
    );
}
