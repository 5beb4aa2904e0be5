//! The warnings about a trace itself that every command shares.

use crate::analysis::replay::{TimeBasis, TraceSummary};

/// Why a trace is not marked complete: its writer never finished it (no CLOCK chunk), or
/// finished it without the mark (`hookprof record` does, where the stream broke off).
pub fn incomplete_why(s: &TraceSummary) -> &'static str {
    if s.clock.is_some() {
        "its recording was cut short: hookprof record's stream broke off (a connection reset, a \
         damaged byte), and records after the LOST mark that ends it are missing; or the \
         program was killed while it finished the file"
    } else {
        "the program was killed or is still running"
    }
}

/// Warnings about the trace itself that every report shares.
pub fn profile_warnings(s: &TraceSummary) -> Vec<String> {
    let mut warnings = Vec::new();
    if !s.finished() {
        warnings.push(format!(
            "the trace is incomplete ({}): frames still open are closed at each thread's last \
             record",
            incomplete_why(s)
        ));
    }
    if let Some(err) = &s.truncated_tail {
        warnings.push(format!(
            "the last chunk of this incomplete trace is cut short and was ignored ({err})"
        ));
    }
    if let Some(w) = s.writer.filter(|w| w.starved()) {
        // The writer thread's wait for a CPU (the kernel's schedstat): the machine had no core
        // free for it, and the traced threads competed with it for theirs.
        let ms = |ns: u64| ns as f64 / 1e6;
        warnings.push(format!(
            "the runtime's writer thread had no free core: it waited {:.1} ms for a CPU while it \
             ran {:.1} ms (the machine was busy); the traced threads shared their cores with \
             it, so their wall times hold some of its work — --time=cpu counts only the time \
             they ran, and HOOKCC_WRITER=0 makes each thread write its own buffers",
            ms(w.wait_ns),
            ms(w.cpu_ns)
        ));
    }
    if s.ticks_per_second().is_none() {
        warnings.push(
            "the trace has no clock rate (ticks_per_second is 0 and there is no CLOCK chunk): \
             times are in ticks and the columns are named *_ticks"
                .to_string(),
        );
    }
    if s.lost() > 0 && s.lost_markers > 0 {
        // A stream's (hookprof record): the target dropped them, at the places its LOST
        // chunks say.
        warnings.push(format!(
            "{} records were dropped by the target at {} places, where the host did not read \
             its stream in time (the ring's size, the poll interval: docs/baremetal.md, \
             \"Streaming\") or its packed RAM buffer was full; frames open there were closed \
             at the gap, and the profile is missing those calls",
            s.lost(),
            s.lost_markers
        ));
    } else if s.lost() > 0 {
        // The LOST chunks count what threads could not keep; the header counts those and the
        // records nobody's chunk could take (made after their thread's last chunk).
        let in_chunks = s.lost_in_chunks.min(s.lost());
        let after = s.lost() - in_chunks;
        let mut causes = Vec::new();
        // HOOKCC_MODE=profile: records of call paths the trees had no room for (given to a
        // tree, not kept by it).
        let beyond_paths = if s.records_skipped {
            0
        } else {
            s.tree_records_given
                .saturating_sub(s.records)
                .min(in_chunks)
        };
        if beyond_paths > 0 {
            causes.push(format!(
                "{beyond_paths} of call paths beyond what a thread's tree may hold \
                 (HOOKCC_PROFILE_NODES)"
            ));
        }
        let in_chunks = in_chunks - beyond_paths;
        if in_chunks > 0 {
            causes.push(format!(
                "{in_chunks} not kept by their threads (HOOKCC_MAX_BYTES or the disk's \
                 free-space reserve reached, the file not writable, or hooks re-entered from \
                 inside the runtime)"
            ));
        }
        if after > 0 {
            causes.push(format!(
                "{after} made after their thread's last records were written (in thread-exit \
                 destructors that ran after the runtime's last round, in a thread that got no \
                 buffer, or after the file was finished at exit)"
            ));
        }
        warnings.push(format!(
            "{} records were lost by the runtime: {}; the profile is missing those calls",
            s.lost(),
            causes.join("; ")
        ));
    }
    if s.has_switches && s.switches_lost > 0 {
        // A thread's perf ring (8 pages) holds 680 switches (runtime/src/trace/switches.h);
        // the runtime's writer thread empties every ring every 10 ms. A full ring is a writer that did not get to
        // it: a machine with no free core for it (its own switches are not recorded), or a
        // thread switching that often.
        let times = match s.time {
            TimeBasis::Cpu => "the CPU times (--time=cpu) are upper bounds",
            TimeBasis::Wall => "the off-CPU times are lower bounds",
        };
        warnings.push(format!(
            "the kernel dropped {} context-switch records (a thread's ring was full: the \
             runtime's writer thread, which reads the rings every 10 ms, did not get to it in \
             time — a busy machine with no free core for it, or a thread switching more than \
             some 680 times in 10 ms): {times}",
            s.switches_lost
        ));
    }
    if s.hole_bytes > 0 {
        warnings.push(format!(
            "{} zero bytes were skipped where chunks were expected (space reserved by a thread \
             that never wrote it)",
            s.hole_bytes
        ));
    }
    warnings.extend(s.integrity.warnings());
    warnings.extend(disagreement_warnings(s));
    warnings
}

/// Where what was read disagrees with what the trace promises: the finished header's counts,
/// the CLOCK chunk every finished trace ends with, chunks written once or in time order. A
/// chunk copied together with its CHECK chunk, or a file cut at a chunk boundary, passes
/// every checksum: these are what show it.
fn disagreement_warnings(s: &TraceSummary) -> Vec<String> {
    let mut warnings = Vec::new();
    let h = &s.header;
    let check = "(`hookprof info` shows what was read)";
    // Under HOOKCC_MIN_DURATION the header counts the records kept, the trees every call.
    let read = if s.records_skipped {
        s.kept_records
    } else {
        s.records
    };
    // Trees say how many records they were given, not how many of those they kept: the
    // header's count lies between what is known kept and what was given (bare metal's header
    // counts all given).
    let at_most = if s.records_skipped {
        read
    } else {
        read.max(s.tree_records_given)
    };
    if h.is_complete() && !(read..=at_most).contains(&h.records) {
        let read = if h.records < read { read } else { at_most };
        let what = if read < h.records {
            "chunks are missing (the file was cut or overwritten)"
        } else {
            "chunks are repeated (copied) or the header is corrupt"
        };
        warnings.push(format!(
            "the header (byte 48) says the finished trace holds {} records, but {} were read: \
             {what}; the profile is not the program's {check}",
            h.records, read
        ));
    }
    if h.is_complete() && s.lost_in_chunks > h.lost {
        warnings.push(format!(
            "the LOST chunks count {} lost records, more than the header's {} (byte 56), which \
             counts them all: a LOST chunk is repeated or the header is corrupt {check}",
            s.lost_in_chunks, h.lost
        ));
    }
    // Only what a runtime wrote: its EXE (hosted) or MODULE (bare metal) chunk comes first. A
    // TI or NITRO dump converted by hookprof (neither, and no CLOCK) has nothing to miss.
    let from_a_runtime = s.exe.is_some() || !s.modules.is_empty();
    if h.is_complete() && s.clock.is_none() && s.truncated_tail.is_none() && from_a_runtime {
        warnings.push(format!(
            "the trace is marked finished but has no CLOCK chunk, which the runtime writes when \
             it finishes the file: the file was cut at byte {} (its end), and what came after \
             is missing (records, THREAD chunks); times at the end may be wrong {check}",
            s.end_offset
        ));
    }
    if let Some(first) = s.first_misplaced {
        warnings.push(format!(
            "{} of the trace's chunks are out of place, the first: {first}: the file was \
             copied or pasted in part (checksums cannot see it); counts and times may be \
             doubled or wrong {check}",
            s.misplaced
        ));
    }
    if let Some(first) = s.first_outside_run {
        warnings.push(format!(
            "{} of the trace's chunks hold times outside the run, the first: {first}: a damaged \
             time (checksums cannot see one written so); durations of the calls around it are \
             wrong {check}",
            s.outside_run
        ));
    }
    warnings
}
