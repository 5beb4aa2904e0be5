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

/// A chunk of a trace: `(offset, total length, type, thread)`.
type ChunkAt = (usize, usize, u32, u64);

/// A trace of the fuzz corpus (fuzz/corpus/trace/NAME) and its chunks.
fn corpus_trace(name: &str) -> (Vec<u8>, Vec<ChunkAt>) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fuzz/corpus/trace")
        .join(name);
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let trace = Trace::new(&bytes).unwrap();
    let chunks = trace
        .chunks()
        .map(|c| {
            let c = c.unwrap();
            (
                c.offset as usize,
                c.total_len() as usize,
                c.chunk_type,
                c.thread,
            )
        })
        .collect();
    (bytes, chunks)
}

/// Writes the checksum of the chunk at `offset` (`len` bytes) into the CHECK chunk after it, as
/// the runtime would have: the damage passes every check.
fn recheck(bytes: &mut [u8], offset: usize, len: usize) {
    let sum = hookprof::input::format::checksum(&bytes[offset..offset + len], Endian::Little);
    let at = offset + len + 16;
    bytes[at..at + 8].copy_from_slice(&sum.to_le_bytes());
}

/// Whether the committed damaged copy in the corpus is `bytes` (made by the test that uses it);
/// `HOOKPROF_BLESS=1` writes it.
fn assert_in_corpus(name: &str, bytes: &[u8]) {
    if std::env::var_os("HOOKPROF_BLESS").is_some() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../fuzz/corpus/trace")
            .join(name);
        std::fs::write(path, bytes).unwrap();
    }
    let (committed, _) = corpus_trace(name);
    assert!(
        committed == bytes,
        "fuzz/corpus/trace/{name} is not the test's damaged trace ({} bytes, {} committed): \
         rewrite it",
        bytes.len(),
        committed.len()
    );
}

/// Calls per function address, over every thread.
fn calls(bytes: &[u8]) -> std::collections::BTreeMap<u64, u64> {
    let profile = Profile::from_trace(&Trace::new(bytes).unwrap()).unwrap();
    profile
        .merged_functions()
        .into_iter()
        .map(|(address, f)| (address, f.calls))
        .collect()
}

const PROFILE: u32 = hookprof::input::format::chunk_type::PROFILE;
const PAUSE: u32 = hookprof::input::format::chunk_type::PAUSE;
const THREAD: u32 = hookprof::input::format::chunk_type::THREAD;

#[test]
fn a_profile_chunk_repeated_after_its_threads_end_is_reported_and_not_counted() {
    // Before: a profile (HOOKCC_MODE=profile) whose worker's PROFILE chunk was copied, with its
    // CHECK chunk, after the worker's THREAD chunk, in a trace of a killed program (no header
    // counts to compare): no warning, and the worker's calls counted twice (issue 37 item 8).
    let (bytes, chunks) = corpus_trace("threads-longjmp-profile.hktrace");
    let original = calls(&bytes);
    let (profile, len, _, worker) = *chunks.iter().find(|c| c.2 == PROFILE).unwrap();
    let thread_chunk = chunks
        .iter()
        .find(|c| c.2 == THREAD && c.3 == worker)
        .unwrap()
        .0;
    // Killed after the main thread's THREAD chunk: the finish's chunks never written.
    let (last_thread, last_len, _, _) = *chunks.iter().rfind(|c| c.2 == THREAD).unwrap();
    let killed_at = last_thread + last_len + 24;
    let mut damaged = bytes[..killed_at].to_vec();
    damaged.extend_from_slice(&bytes[profile..profile + len + 24]);
    damaged[32] &= !1; // not finished: no records or lost counts, rate 0
    damaged[16..24].fill(0);
    damaged[48..64].fill(0);
    let warnings = warnings(&damaged);
    let expected = format!(
        "the PROFILE chunk at byte {killed_at} (thread {worker}) comes after the thread's THREAD \
         chunk at byte {thread_chunk}"
    );
    assert!(
        warnings.iter().any(|w| w.contains(&expected)),
        "{warnings:#?}"
    );
    assert_eq!(calls(&damaged), original, "the copy is not counted");
    assert_in_corpus("threads-longjmp-profile-repeated.hktrace", &damaged);
    // A thread's tree older than the one before it (fewer records): a copy of a later tree put
    // before its original, one record more, as a snapshot's would be. The original, after it,
    // goes back: reported, and not taken over the newer one.
    let (main_tree, main_len, _, main_tid) = *chunks.iter().rfind(|c| c.2 == PROFILE).unwrap();
    let mut newer = bytes[main_tree..main_tree + main_len + 24].to_vec();
    let records_at = 16 + 24;
    let records = u64::from_le_bytes(newer[records_at..records_at + 8].try_into().unwrap());
    newer[records_at..records_at + 8].copy_from_slice(&(records + 1).to_le_bytes());
    recheck(&mut newer, 0, main_len);
    let mut older_after = bytes[..main_tree].to_vec();
    older_after.extend_from_slice(&newer);
    older_after.extend_from_slice(&bytes[main_tree..]);
    let said = crate::warnings(&older_after);
    let moved = main_tree + newer.len();
    let expected = format!(
        "the PROFILE chunk at byte {moved} (thread {main_tid}) holds less than the thread's \
         PROFILE chunk at byte {main_tree}"
    );
    assert!(said.iter().any(|w| w.contains(&expected)), "{said:#?}");
}

#[test]
fn a_packed_chunk_and_its_pause_swapped_are_reported() {
    // Before: no warning, and the pause taken out of the wrong records' times (issue 37 item 8;
    // docs/reliability.md said chunks moved in time are reported).
    let (bytes, chunks) = corpus_trace("threads-longjmp-pauses.hktrace");
    assert_eq!(warnings(&bytes), Vec::<String>::new());
    let i = chunks
        .iter()
        .position(|c| c.2 == PACKED && chunks.get(c_next(c, &chunks)).is_some_and(|p| p.2 == PAUSE))
        .expect("a PACKED chunk and then its PAUSE");
    let (packed, packed_len, _, tid) = chunks[i];
    let (pause, pause_len, _, _) = chunks[i + 2];
    assert_eq!(packed + packed_len + 24, pause);
    let mut swapped = bytes[..packed].to_vec();
    swapped.extend_from_slice(&bytes[pause..pause + pause_len + 24]);
    swapped.extend_from_slice(&bytes[packed..pause]);
    swapped.extend_from_slice(&bytes[pause + pause_len + 24..]);
    let moved = packed + pause_len + 24;
    let warnings = warnings(&swapped);
    let expected = format!(
        "the PACKED chunk at byte {moved} (thread {tid}) starts before the end of the thread's \
         PAUSE chunk at byte {packed}"
    );
    assert!(
        warnings.iter().any(|w| w.contains(&expected)),
        "{warnings:#?}"
    );
    assert_in_corpus("threads-longjmp-pause-swapped.hktrace", &swapped);
}

/// The index, in `chunks`, of the chunk after `c`'s CHECK chunk.
fn c_next(c: &ChunkAt, chunks: &[ChunkAt]) -> usize {
    chunks.iter().position(|d| d.0 == c.0).unwrap() + 2
}

#[test]
fn a_record_time_far_outside_the_run_is_reported() {
    // Before: a record 2^62 ticks after the one before it (its chunk's checksum made to match)
    // gave `main` 2.1e18 ns without a word (issue 37 item 8).
    // A PACKED chunk's first_time (its records' base) moved by 2^62: its records with it.
    let (bytes, chunks) = corpus_trace("threads-longjmp-pauses.hktrace");
    let (packed, len, _, tid) = *chunks.iter().rfind(|c| c.2 == PACKED).unwrap();
    let mut late = bytes.clone();
    let at = packed + 16 + 8;
    let first_time = u64::from_le_bytes(late[at..at + 8].try_into().unwrap());
    late[at..at + 8].copy_from_slice(&(first_time + (1 << 62)).to_le_bytes());
    recheck(&mut late, packed, len);
    let said = warnings(&late);
    let expected = format!("the PACKED chunk at byte {packed} (thread {tid}) holds a time at tick");
    assert!(
        said.iter()
            .any(|w| w.contains(&expected) && w.contains("after the run")),
        "{said:#?}"
    );
    assert_in_corpus("threads-longjmp-pauses-2-62-later.hktrace", &late);

    // One 16-byte record of an EVENTS chunk, in the middle of the main thread's.
    let (bytes, chunks) = corpus_trace("threads-longjmp-checked.hktrace");
    let (events, len, _, tid) = *chunks
        .iter()
        .rfind(|c| c.2 == hookprof::input::format::chunk_type::EVENTS)
        .unwrap();
    let mut late = bytes.clone();
    let at = events + 16 + 3 * 16;
    let time = u64::from_le_bytes(late[at..at + 8].try_into().unwrap());
    late[at..at + 8].copy_from_slice(&(time + (1 << 62)).to_le_bytes());
    recheck(&mut late, events, len);
    let said = warnings(&late);
    let expected = format!("the EVENTS chunk at byte {events} (thread {tid}) holds a time at tick");
    assert!(said.iter().any(|w| w.contains(&expected)), "{said:#?}");
}

#[test]
fn a_profile_at_its_node_limit_counts_each_lost_record_once() {
    // HOOKCC_MODE=profile HOOKCC_PROFILE_NODES=2: the main thread's tree had no room for two
    // records, which its LOST chunk counts. Before: the tree's records were counted as read
    // too (15 read, the header's 13, 2 lost), and every report said chunks were repeated and
    // the profile not the program's (issue 37 item 9).
    let (bytes, _) = corpus_trace("threads-longjmp-profile-2-nodes.hktrace");
    let profile = Profile::from_trace(&Trace::new(&bytes).unwrap()).unwrap();
    let s = &profile.summary;
    assert_eq!((s.header.records, s.header.lost), (13, 2));
    assert_eq!((s.records, s.lost()), (13, 2));
    let warnings = warnings(&bytes);
    assert_eq!(warnings.len(), 1, "{warnings:#?}");
    assert!(
        warnings[0].starts_with("2 records were lost by the runtime: 2 of call paths beyond"),
        "{warnings:#?}"
    );
}
