//! `hookprof info`: what a trace contains, without symbols.

use std::fmt::Write as _;
use std::path::Path;

use crate::analysis::replay::TraceSummary;
use crate::input::format::Integrity;

/// Renders the description of a trace printed by `hookprof info`.
pub fn render(path: &Path, s: &TraceSummary) -> String {
    let h = &s.header;
    let mut out = String::new();
    let mut line = |label: &str, value: String| {
        let _ = writeln!(out, "{:<18} {value}", format!("{label}:"));
    };
    line("trace", path.display().to_string());
    line(
        "format",
        format!(
            "version {}, {} header bytes, {}, {}-byte pointers",
            h.version, h.header_size, h.endian, h.pointer_size
        ),
    );
    line(
        "complete",
        if h.is_complete() {
            "yes".to_string()
        } else if s.finished() {
            "yes (written as a stream: its header stays as written, the CLOCK chunk ends it)"
                .to_string()
        } else {
            format!(
                "no ({}; counts below are what the file holds)",
                crate::analysis::warnings::incomplete_why(s)
            )
        },
    );
    line("pid", h.pid.to_string());
    line(
        "started",
        format!(
            "{} ({} ns since the epoch)",
            utc(h.start_realtime_ns),
            h.start_realtime_ns
        ),
    );
    let clock = match s.clock {
        Some(c) => format!(
            "; CLOCK chunk: {} ticks/s, ticks {}..{}",
            c.ticks_per_second, c.first_tick, c.last_tick
        ),
        None => String::new(),
    };
    let rate = match (h.ticks_per_second, s.ticks_per_second()) {
        (0, Some(tps)) => format!("0 in the header, {tps} from the CLOCK chunk"),
        (0, None) => "unknown (reports show ticks)".to_string(),
        (tps, _) => tps.to_string(),
    };
    line("ticks per second", format!("{rate}{clock}"));
    line(
        "executable",
        s.exe
            .as_ref()
            .map_or("(no EXE chunk)".to_string(), |p| p.display().to_string()),
    );
    line("modules", s.modules.len().to_string());
    for m in &s.modules {
        let path = m
            .path
            .as_ref()
            .map_or("(the executable)".to_string(), |p| p.display().to_string());
        let _ = writeln!(
            out,
            "  0x{:016x}-0x{:016x}  bias 0x{:x}  {path}",
            m.start, m.end, m.bias
        );
    }
    let _ = writeln!(out, "{:<18} {}", "threads:", s.threads.len());
    for t in &s.threads {
        let seq = t.sequence.map_or("-".to_string(), |n| format!("#{n}"));
        let name = t
            .name
            .as_deref()
            .map_or(String::new(), |n| format!(" {n:?}"));
        let _ = writeln!(
            out,
            "  {seq:>4} tid {}{name}: {} records ({} entries, {} exits), lost {}, unmatched entries {}, unmatched exits {}, closed at end {}, max depth {}",
            t.tid,
            t.records,
            t.entries,
            t.exits,
            t.lost,
            t.unmatched_entries,
            t.unmatched_exits,
            t.closed_at_end,
            t.max_depth
        );
    }
    let read = if s.records_skipped {
        s.kept_records
    } else {
        s.records
    };
    let records = if h.is_complete() && h.records != read {
        format!("{} (the header says {})", read, h.records)
    } else if s.records_skipped {
        format!(
            "{} in the trees (every call), {} kept in the trace (HOOKCC_MIN_DURATION)",
            s.records, s.kept_records
        )
    } else {
        s.records.to_string()
    };
    let mut line = |label: &str, value: String| {
        let _ = writeln!(out, "{:<18} {value}", format!("{label}:"));
    };
    line("records", records);
    if let Some(size) = size_line(path, s) {
        line("size", size);
    }
    let lost = if h.lost != s.lost_in_chunks {
        format!(
            "{} (header {}, LOST chunks {})",
            s.lost(),
            h.lost,
            s.lost_in_chunks
        )
    } else {
        s.lost().to_string()
    };
    let lost = if s.lost_markers > 0 {
        format!(
            "{lost}, dropped by the target at {} places in its stream ({} frames closed there, \
             {} exits of frames entered before them)",
            s.lost_markers,
            s.closed_at_gap(),
            s.entered_before_window()
        )
    } else {
        lost
    };
    line("lost", lost);
    line("unmatched entries", s.unmatched_entries().to_string());
    line("unmatched exits", s.unmatched_exits().to_string());
    line("closed at end", s.closed_at_end().to_string());
    if s.ring_windows > 0 {
        line(
            "ring",
            format!(
                "{} windows (HOOKCC_MODE=ring snapshots), {} records dropped before them; {} \
                 calls entered before a window (their exits only: not counted), {} frames \
                 closed at a gap between windows",
                s.ring_windows,
                s.ring_dropped,
                s.entered_before_window(),
                s.closed_at_gap()
            ),
        );
    }
    if let Some(t) = &s.throttle {
        let counted: u64 = t.functions.iter().map(|f| f.counted).sum();
        line(
            "throttled",
            format!(
                "{} functions timed for their first calls, then counted without records: {counted} \
                 calls (THROTTLE chunks; a function is throttled after {} timed calls whose mean \
                 is under {} x a hook pair's {} ticks; reports add the counted calls)",
                t.functions.len(),
                t.min_calls,
                t.factor,
                t.pair_ticks
            ),
        );
    }
    if s.count_marks() > 0 {
        line(
            "count marks",
            format!(
                "{} (one in a thread's records every {} counted calls: reports take their cost out there)",
                s.count_marks(),
                s.overhead.map_or(0, |o| o.count_calls)
            ),
        );
    }
    if s.folded_calls > 0 || s.folded_min_ticks > 0 {
        let below = match s.ticks_per_second() {
            Some(tps) => format!("{:.0} ns", s.folded_min_ticks as f64 * 1e9 / tps as f64),
            None => format!("{} ticks", s.folded_min_ticks),
        };
        line(
            "min duration",
            format!(
                "HOOKCC_MIN_DURATION: {} calls under {below} left out of the records (in the \
                 {} call paths of the PROFILE chunks, which reports read; timelines show the \
                 records)",
                s.folded_calls, s.profile_nodes
            ),
        );
    } else if s.profile_chunks > 0 {
        line(
            "profile",
            format!(
                "HOOKCC_MODE=profile: {} call paths in {} PROFILE chunks (a thread's last one \
                 counts), the records folded into them counted above; views of calls in time \
                 order need a trace",
                s.profile_nodes, s.profile_chunks
            ),
        );
    }
    if s.closed_by_longjmp() > 0 {
        line("closed by longjmp", s.closed_by_longjmp().to_string());
    }
    if s.unknown_chunks > 0 {
        line("unknown chunks", format!("{} (skipped)", s.unknown_chunks));
    }
    line("checksums", checksums(&s.integrity));
    if let Some(first) = s.first_misplaced {
        line(
            "out of place",
            format!("{} chunks (first: {first})", s.misplaced),
        );
    }
    if let Some(first) = s.first_outside_run {
        line(
            "outside the run",
            format!("{} chunks (first: {first})", s.outside_run),
        );
    }
    if h.is_complete() && s.clock.is_none() {
        line(
            "clock chunk",
            format!(
                "MISSING though the trace is finished: the file was cut at byte {}",
                s.end_offset
            ),
        );
    }
    line("hook overhead", overhead(s));
    if s.pauses > 0 {
        let time = match s.ticks_per_second() {
            Some(tps) => format!("{:.3} ms", s.pause_ticks as f64 * 1e3 / tps as f64),
            None => format!("{} ticks", s.pause_ticks),
        };
        line(
            "buffer writes",
            format!(
                "{} from inside hooks, {time} in all ({})",
                s.pauses,
                if s.compensated {
                    "taken out of the times"
                } else {
                    "in the times"
                }
            ),
        );
    }
    if s.has_switches {
        let offcpu: u64 = s.threads.iter().map(|t| t.offcpu_ticks).sum();
        let time = match s.ticks_per_second() {
            Some(tps) => format!("{:.3} ms", offcpu as f64 * 1e3 / tps as f64),
            None => format!("{offcpu} ticks"),
        };
        let dropped = match s.switches_lost {
            0 => String::new(),
            n => format!(", {n} switch records dropped by the kernel (its ring was full)"),
        };
        line(
            "context switches",
            format!(
                "{}, {time} switched out in all (SWITCH chunks; reports split on-CPU from \
                 off-CPU time, every view counts CPU time alone with --time=cpu){dropped}",
                s.switches
            ),
        );
    }
    if s.sample_period_ns != 0 {
        let (all, in_functions) = s.samples();
        line(
            "samples",
            format!(
                "{all} of the CPU time, one every {} µs (SAMPLE chunks; reports show sampled \
                 times): {in_functions} in functions, {} with no function open, {} in the \
                 hooks (left out)",
                s.sample_period_ns as f64 / 1000.0,
                all - in_functions,
                s.samples_in_hooks
            ),
        );
    }
    if let Some(w) = &s.writer {
        let ms = |ns: u64| ns as f64 / 1e6;
        line(
            "writer thread",
            format!(
                "ran {:.1} ms, waited {:.1} ms for a CPU, {} time slices, in {:.1} ms (WRITER \
                 chunk: the kernel's schedstat){}",
                ms(w.cpu_ns),
                ms(w.wait_ns),
                w.slices,
                ms(w.wall_ns),
                if w.starved() {
                    "; it had no free core"
                } else {
                    ""
                }
            ),
        );
    }
    if let Some(err) = &s.truncated_tail {
        line("cut short", format!("{err} (last chunk ignored)"));
    }
    if s.hole_bytes > 0 {
        line(
            "holes",
            format!(
                "{} zero bytes skipped (ranges reserved but never written)",
                s.hole_bytes
            ),
        );
    }
    out
}

/// The `size:` line: the file's bytes, and per call pair (two records) in all and in the
/// chunks that hold the records (PACKED: about 3 to 5 bytes; 16-byte records: 32 and more).
fn size_line(path: &Path, s: &TraceSummary) -> Option<String> {
    let file = std::fs::metadata(path).ok()?.len();
    if s.records < 2 {
        return Some(format!("{file} bytes"));
    }
    let pairs = s.records as f64 / 2.0;
    if s.records_skipped {
        return Some(format!(
            "{file} bytes: {:.2} bytes per call pair made, {:.2} per call pair kept",
            file as f64 / pairs,
            file as f64 / (s.kept_records.max(1) as f64 / 2.0)
        ));
    }
    if s.profile_chunks > 0 {
        return Some(format!(
            "{file} bytes: {:.3} bytes per call pair folded (a profile does not grow with the run)",
            file as f64 / pairs
        ));
    }
    Some(format!(
        "{file} bytes: {:.2} bytes per call pair ({:.2} in the chunks that hold the records)",
        file as f64 / pairs,
        s.record_bytes as f64 / pairs
    ))
}

/// The `hook overhead:` line: what the runtime measured, and whether reports subtract it.
fn overhead(s: &TraceSummary) -> String {
    let Some(o) = s.overhead else {
        return "not measured (a runtime from before 2026-11-25, or a buffer of under 512 records): \
                times are raw"
            .to_string();
    };
    let time = |ticks: u64| match s.ticks_per_second() {
        Some(tps) => format!("{:.1} ns", ticks as f64 * 1e9 / tps as f64),
        None => format!("{ticks} ticks"),
    };
    let counted = if o.count_calls > 0 {
        format!(
            ", {} per {} counted calls of a throttled function",
            time(o.count_ticks),
            o.count_calls
        )
    } else {
        String::new()
    };
    format!(
        "{} per call and {} per call made inside it (means of {} hook pairs timed at start){counted}; {}",
        time(o.self_ticks),
        time(o.child_ticks),
        o.pairs,
        if s.compensated {
            "reports subtract it (--no-compensation: raw times)"
        } else {
            "not subtracted (--no-compensation)"
        }
    )
}

/// The `checksums:` line: what was verified, and where the first failure is.
fn checksums(i: &Integrity) -> String {
    if !i.flagged && i.verified == 0 && i.is_clean() {
        return "none in this file (a runtime from before 2026-11-25, or the bare-metal one)"
            .to_string();
    }
    let mut parts = vec![format!("{} chunks match", i.verified)];
    if let Some(first) = i.first_mismatch {
        parts.push(format!("{} do NOT (first: {first})", i.mismatched));
    }
    if let Some(first) = i.first_unchecked {
        parts.push(format!("{} have none (first: {first})", i.unchecked));
    }
    if i.stray_checks > 0 {
        parts.push(format!("{} CHECK chunks follow no chunk", i.stray_checks));
    }
    parts.push(match i.header_matches {
        Some(true) => "the header matches".to_string(),
        Some(false) => format!(
            "the header does NOT (CLOCK chunk at byte {})",
            i.header_check_at
        ),
        None => "the header has no checksum (not finished)".to_string(),
    });
    parts.join("; ")
}

/// `YYYY-MM-DD HH:MM:SS UTC` for nanoseconds since the Unix epoch.
pub(crate) fn utc(ns: u64) -> String {
    let secs = ns / 1_000_000_000;
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02} UTC",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn utc_dates() {
        assert_eq!(super::utc(0), "1970-01-01 00:00:00 UTC");
        assert_eq!(
            super::utc(1_700_000_000_000_000_000),
            "2023-11-14 22:13:20 UTC"
        );
        assert_eq!(
            super::utc(951_782_400 * 1_000_000_000),
            "2000-02-29 00:00:00 UTC"
        );
        super::utc(u64::MAX);
    }
}
