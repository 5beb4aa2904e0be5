//! `hookprof nitro`: synthetic NITRO buffers, laid out as docs/nitro.md says (a second
//! definition of the layout, independent of the decoder's), for every pointer size and byte
//! order; truncated and corrupted dumps; the command line.
//!
//! The end-to-end test against the real runtimes is tests/tests/nitro_dump.rs.

mod common;

use std::collections::HashMap;
use std::path::Path;
use std::process::{Command, Output};

use common::{check_golden, scratch_dir};
use hookprof::input::format::Endian;
use hookprof::input::nitro::{Contents, Dump, Kind, EXIT_TAG};
use hookprof::input::nitro_program::{ElfError, ProgramImage};
use hookprof::output::nitro::{render, Options};

const SELF: u64 = 0x4010;
const ANCHOR: u64 = 0x1230;
const TEST1: u64 = 0x2004;
const TEST2: u64 = 0x200a;
const TEST3: u64 = 0x2010;

fn names() -> HashMap<u64, String> {
    [(TEST1, "test1"), (TEST2, "test2"), (TEST3, "test3")]
        .into_iter()
        .map(|(a, n)| (a, n.to_string()))
        .collect()
}

/// Writes the target's integers.
#[derive(Clone, Copy, Debug)]
struct Target {
    w: u64,
    endian: Endian,
}

const TARGETS: [Target; 4] = [
    Target {
        w: 8,
        endian: Endian::Little,
    },
    Target {
        w: 4,
        endian: Endian::Little,
    },
    Target {
        w: 8,
        endian: Endian::Big,
    },
    Target {
        w: 4,
        endian: Endian::Big,
    },
];

impl Target {
    fn put(self, buf: &mut Vec<u8>, at: u64, size: u64, value: u64) {
        let at = at as usize;
        if buf.len() < at + size as usize {
            buf.resize(at + size as usize, 0);
        }
        for i in 0..size as usize {
            let shift = match self.endian {
                Endian::Little => 8 * i,
                Endian::Big => 8 * (size as usize - 1 - i),
            };
            buf[at + i] = (value >> shift) as u8;
        }
    }

    /// docs/nitro.md, "Header".
    #[allow(clippy::too_many_arguments)]
    fn header(
        self,
        kind: u8,
        mode: u8,
        flags: u16,
        header_size: u64,
        record_size: u64,
        capacity: u64,
    ) -> Vec<u8> {
        let mut b = b"HKNITRO\0".to_vec();
        self.put(&mut b, 8, 2, 1);
        b.push(self.w as u8);
        b.push(match self.endian {
            Endian::Little => 1,
            Endian::Big => 2,
        });
        b.extend([kind, mode]);
        self.put(&mut b, 14, 2, flags.into());
        self.put(&mut b, 16, 4, header_size);
        self.put(&mut b, 20, 4, record_size);
        self.put(&mut b, 24, 4, capacity);
        self.put(&mut b, 28, 4, 4242);
        self.put(&mut b, 32, 4, 1);
        self.put(&mut b, 36, 4, 0);
        self.put(&mut b, 40, 8, SELF);
        self.put(&mut b, 48, 8, ANCHOR);
        b.resize(header_size as usize + (record_size * capacity) as usize, 0);
        b
    }
}

/// A call trace buffer filled by a model of the hooks of runtime/src/calltrace.c.
struct CallTraceSim {
    t: Target,
    log: bool,
    registers: bool,
    capacity: u64,
    buf: Vec<u8>,
    current: u64,
    floor: u64,
    level: u64,
    unmatched_exits: u64,
    overflow_depth: u64,
    overflow_calls: u64,
}

impl CallTraceSim {
    fn new(t: Target, log: bool, registers: bool, capacity: u64) -> Self {
        let header_size = 56 + 6 * t.w + 16;
        let record_size = t.w * if registers { 7 } else { 3 };
        let buf = t.header(
            1,
            log as u8,
            registers as u16,
            header_size,
            record_size,
            capacity,
        );
        let first = SELF + header_size;
        CallTraceSim {
            t,
            log,
            registers,
            capacity,
            buf,
            current: first,
            floor: first,
            level: 0,
            unmatched_exits: 0,
            overflow_depth: 0,
            overflow_calls: 0,
        }
    }

    fn header_size(&self) -> u64 {
        56 + 6 * self.t.w + 16
    }

    fn record_size(&self) -> u64 {
        self.t.w * if self.registers { 7 } else { 3 }
    }

    fn first(&self) -> u64 {
        SELF + self.header_size()
    }

    fn limit(&self) -> u64 {
        self.first() + self.capacity * self.record_size()
    }

    fn write(&mut self, p: u64, name: u64, lr: u64, r0: u64) {
        let w = self.t.w;
        let at = p - SELF;
        let level = self.level;
        for (i, v) in [name, lr, level, r0, 0, 0, 0]
            .into_iter()
            .take(if self.registers { 7 } else { 3 })
            .enumerate()
        {
            self.t.put(&mut self.buf, at + i as u64 * w, w, v);
        }
        self.level += 1;
    }

    fn entry(&mut self, name: u64, lr: u64, r0: u64) {
        if self.current >= self.limit() {
            if self.log {
                let first = self.first();
                self.write(first, name, lr, r0);
                self.current = first + self.record_size();
            } else {
                self.overflow_calls += 1;
                self.overflow_depth += 1;
                self.level += 1;
                self.floor = u64::MAX;
            }
            return;
        }
        self.write(self.current, name, lr, r0);
        self.current += self.record_size();
    }

    fn exit(&mut self) {
        self.level = self.level.saturating_sub(1);
        let pop = if self.log { 0 } else { self.record_size() };
        let p = self.current - pop;
        if p < self.floor {
            if self.overflow_depth > 0 {
                self.overflow_depth -= 1;
                if self.overflow_depth == 0 {
                    self.floor = self.first();
                }
            } else {
                self.unmatched_exits += 1;
            }
            return;
        }
        self.current = p;
    }

    /// The buffer's bytes with the control area written.
    fn bytes(&self) -> Vec<u8> {
        let (t, w) = (self.t, self.t.w);
        let mut b = self.buf.clone();
        let pop = if self.log { 0 } else { self.record_size() };
        let floor = if self.floor == u64::MAX {
            if w == 4 {
                u64::from(u32::MAX)
            } else {
                u64::MAX
            }
        } else {
            self.floor
        };
        for (i, v) in [
            self.current,
            self.limit(),
            floor,
            pop,
            self.record_size(),
            self.level,
        ]
        .into_iter()
        .enumerate()
        {
            t.put(&mut b, 56 + i as u64 * w, w, v);
        }
        let counters = 56 + 6 * w;
        t.put(&mut b, counters, 4, self.unmatched_exits);
        t.put(&mut b, counters + 4, 4, self.overflow_depth);
        t.put(&mut b, counters + 8, 4, self.overflow_calls);
        t.put(&mut b, counters + 12, 4, (self.overflow_calls > 0) as u64);
        b
    }

    /// The seed's test1(a) -> test2(a + 1) -> test3(a + 3), `inside` run in test3.
    fn seed_calls(&mut self, a: u64, inside: impl FnOnce(&mut Self)) {
        self.entry(TEST1, 0x1100, a);
        self.entry(TEST2, 0x1200, a + 1);
        self.entry(TEST3, 0x1300, a + 3);
        inside(self);
        self.exit();
        self.exit();
        self.exit();
    }
}

/// A function cost measurement buffer with these records (name, tick, interval).
fn cost_buffer(t: Target, records: &[(u64, u64, u64)], capacity: u64, lost: u64) -> Vec<u8> {
    let header_size = 56 + 2 * t.w + 24;
    let mut b = t.header(2, 0, 0, header_size, 24, capacity);
    let first = SELF + header_size;
    t.put(&mut b, 56, t.w, first + 24 * records.len() as u64);
    t.put(&mut b, 56 + t.w, t.w, first + 24 * capacity);
    t.put(&mut b, 56 + 2 * t.w + 8, 8, lost);
    for (i, &(name, tick, interval)) in records.iter().enumerate() {
        let at = header_size + 24 * i as u64;
        t.put(&mut b, at, 8, name);
        t.put(&mut b, at + 8, 8, tick);
        t.put(&mut b, at + 16, 8, interval);
    }
    b
}

/// A statistics buffer with these lines (name, count, cost).
fn stat_buffer(t: Target, lines: &[(u64, u64, u64)], capacity: u64, dropped: u64) -> Vec<u8> {
    let mut b = t.header(3, 0, 0, 80, 24, capacity);
    t.put(&mut b, 56, 8, lines.len() as u64);
    t.put(&mut b, 64, 8, dropped);
    for (i, &(name, count, cost)) in lines.iter().enumerate() {
        let at = 80 + 24 * i as u64;
        t.put(&mut b, at, 8, name);
        t.put(&mut b, at + 8, 8, count);
        t.put(&mut b, at + 16, 8, cost);
    }
    b
}

fn decode_with(bytes: &[u8], lr: Option<u64>) -> Result<(String, Vec<String>), String> {
    decode_options(
        bytes,
        &Options {
            lr,
            inclusive: false,
        },
    )
}

fn decode_options(bytes: &[u8], options: &Options) -> Result<(String, Vec<String>), String> {
    let dump = Dump::parse(bytes).map_err(|e| e.to_string())?;
    let decoded = render(&dump, &names(), options);
    Ok((String::from_utf8(decoded.text).unwrap(), decoded.warnings))
}

fn decode(bytes: &[u8]) -> String {
    let (text, warnings) = decode_with(bytes, Some(0x1000)).unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    text
}

fn ent(name: u64, tick: u64) -> (u64, u64, u64) {
    (name, tick, 0)
}

fn ret(tick: u64) -> (u64, u64, u64) {
    (EXIT_TAG, tick, 0)
}

// ---- Call trace -------------------------------------------------------------------------

#[test]
fn stack_mode_prints_the_calls_in_progress_newest_first() {
    for t in TARGETS {
        let mut sim = CallTraceSim::new(t, false, true, 8);
        let mut inside = Vec::new();
        sim.seed_calls(0x100, |s| inside = s.bytes());
        assert_eq!(
            decode(&inside),
            "OS_DumpCallTrace: lr=00001000\n\
             test3: lr=00001300, r0=00000103, r1=00000000, r2=00000000, r3=00000000\n\
             test2: lr=00001200, r0=00000101, r1=00000000, r2=00000000, r3=00000000\n\
             test1: lr=00001100, r0=00000100, r1=00000000, r2=00000000, r3=00000000\n",
            "{t:?}"
        );
        // After the calls returned, nothing is in progress.
        assert_eq!(decode(&sim.bytes()), "OS_DumpCallTrace: lr=00001000\n");
    }
}

#[test]
fn the_first_line_without_lr_and_wide_values() {
    let t = TARGETS[0];
    let mut sim = CallTraceSim::new(t, false, true, 4);
    sim.entry(TEST1, 0x5555_5555_1234, 0xffff_ffff_ffff_fffe);
    let (text, _) = decode_with(&sim.bytes(), None).unwrap();
    assert_eq!(
        text,
        "OS_DumpCallTrace: lr=????????\n\
         test1: lr=0000555555551234, r0=fffffffffffffffe, r1=00000000, r2=00000000, r3=00000000\n"
    );
    let (text, _) = decode_with(&sim.bytes(), Some(0x7fff_0000_0001)).unwrap();
    assert!(
        text.starts_with("OS_DumpCallTrace: lr=00007fff00000001\n"),
        "{text}"
    );
}

#[test]
fn stack_mode_without_registers() {
    for t in TARGETS {
        let mut sim = CallTraceSim::new(t, false, false, 8);
        let mut inside = Vec::new();
        sim.seed_calls(0x100, |s| inside = s.bytes());
        assert_eq!(
            decode(&inside),
            "OS_DumpCallTrace: lr=00001000\n\
             test3: lr=00001300\n\
             test2: lr=00001200\n\
             test1: lr=00001100\n",
            "{t:?}"
        );
    }
}

#[test]
fn log_mode_indents_by_level_and_stops_at_an_unwritten_slot() {
    for t in TARGETS {
        let mut sim = CallTraceSim::new(t, true, true, 16);
        sim.seed_calls(0x100, |_| {});
        sim.seed_calls(0x200, |_| {});
        assert_eq!(
            decode(&sim.bytes()),
            "OS_DumpCallTrace: lr=00001000\n  \
             test3: lr=00001300, r0=00000203, r1=00000000, r2=00000000, r3=00000000\n \
             test2: lr=00001200, r0=00000201, r1=00000000, r2=00000000, r3=00000000\n\
             test1: lr=00001100, r0=00000200, r1=00000000, r2=00000000, r3=00000000\n  \
             test3: lr=00001300, r0=00000103, r1=00000000, r2=00000000, r3=00000000\n \
             test2: lr=00001200, r0=00000101, r1=00000000, r2=00000000, r3=00000000\n\
             test1: lr=00001100, r0=00000100, r1=00000000, r2=00000000, r3=00000000\n",
            "{t:?}"
        );
    }
}

#[test]
fn log_mode_ring_that_wrapped_keeps_the_newest_calls() {
    for t in TARGETS {
        let mut sim = CallTraceSim::new(t, true, false, 4);
        for a in [0x100, 0x200, 0x300] {
            sim.seed_calls(a, |_| {});
        }
        // 9 calls in a ring of 4: the last 4, newest first.
        assert_eq!(
            decode(&sim.bytes()),
            "OS_DumpCallTrace: lr=00001000\n  \
             test3: lr=00001300\n \
             test2: lr=00001200\n\
             test1: lr=00001100\n  \
             test3: lr=00001300\n",
            "{t:?}"
        );
    }
}

#[test]
fn log_mode_indentation_stops_at_10() {
    let mut sim = CallTraceSim::new(TARGETS[1], true, false, 16);
    for _ in 0..12 {
        sim.entry(TEST1, 0x1100, 0);
    }
    let text = decode(&sim.bytes());
    let indents: Vec<usize> = text
        .lines()
        .skip(1)
        .map(|l| l.len() - l.trim_start().len())
        .collect();
    assert_eq!(indents, [10, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0]);
}

#[test]
fn stack_overflow_and_unmatched_exits_are_noted() {
    for t in TARGETS {
        let mut sim = CallTraceSim::new(t, false, true, 2);
        sim.exit(); // a frame open before OS_InitCallTrace returns
        let mut inside = Vec::new();
        sim.seed_calls(0x100, |s| inside = s.bytes());
        assert_eq!(
            decode(&inside),
            "OS_DumpCallTrace: lr=00001000\n\
             test2: lr=00001200, r0=00000101, r1=00000000, r2=00000000, r3=00000000\n\
             test1: lr=00001100, r0=00000100, r1=00000000, r2=00000000, r3=00000000\n\
             OS_DumpCallTrace: 1 calls were not recorded: the buffer holds 2; the 1 innermost calls in progress are missing above\n\
             OS_DumpCallTrace: 1 returns had no record to remove: their functions were called before OS_InitCallTrace or OS_ClearCallTraceBuffer (§3.4: initialise from the outermost function)\n",
            "{t:?}"
        );
        // Once returned, the stack is exact again; the counts stay.
        assert_eq!(
            decode(&sim.bytes()).lines().nth(1),
            Some("OS_DumpCallTrace: 1 calls were not recorded: the buffer holds 2"),
        );
    }
}

#[test]
fn header_at_byte_4_of_a_u32_array() {
    let mut sim = CallTraceSim::new(TARGETS[0], false, true, 4);
    sim.entry(TEST1, 0x1100, 0x100);
    let mut bytes = vec![0xaa; 4];
    bytes.extend(sim.bytes());
    let dump = Dump::parse(&bytes).unwrap();
    assert_eq!(dump.header.offset, 4);
    let Contents::CallTrace(c) = &dump.contents else {
        panic!("{dump:?}")
    };
    assert_eq!(c.records[0].offset, 4 + 120);
    assert_eq!(decode(&bytes), decode(&sim.bytes()));
}

#[test]
fn null_and_unreadable_names() {
    let mut sim = CallTraceSim::new(TARGETS[0], false, false, 4);
    sim.entry(0x9999, 0x1100, 0);
    sim.entry(TEST1, 0x1100, 0);
    let mut bytes = sim.bytes();
    // Record 0's name: NULL (the runtime prints "(null)").
    let mut null = bytes.clone();
    null[120..128].fill(0);
    let (text, warnings) = decode_with(&null, Some(0)).unwrap();
    assert!(
        text.ends_with("test1: lr=00001100\n(null): lr=00001100\n"),
        "{text}"
    );
    assert!(warnings.is_empty(), "{warnings:?}");
    let (text, warnings) = decode_with(&bytes, Some(0)).unwrap();
    assert!(text.ends_with("0x9999: lr=00001100\n"), "{text}");
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].starts_with("1 name pointers (the first 0x9999) point to no string"),
        "{warnings:?}"
    );
    // A dump cut after the records read is decoded, with a warning.
    bytes.truncate(120 + 2 * 24);
    let (_, warnings) = decode_with(&bytes, Some(0)).unwrap();
    assert!(
        warnings
            .iter()
            .any(|w| w.starts_with("the dump is 168 bytes, shorter than the buffer (216 bytes")),
        "{warnings:?}"
    );
}

// ---- Function cost ----------------------------------------------------------------------

#[test]
fn measurement_buffer_is_summarized_as_os_calc_statistics_does() {
    for t in TARGETS {
        let records = [
            ret(5), // an exit with no entry (a frame open when the buffer was initialised)
            ent(TEST1, 10),
            ent(TEST2, 12),
            ret(20),
            ret(30),
            ent(TEST2, 40),
            ret(47),
            ent(TEST3, 100), // still in progress
        ];
        let bytes = cost_buffer(t, &records, 16, 0);
        let dump = Dump::parse(&bytes).unwrap();
        let Contents::FunctionCost(c) = &dump.contents else {
            panic!()
        };
        let summary = c.summarize(false);
        assert_eq!((summary.unmatched_exits, summary.open), (1, 1));
        // test1's own time: 20 less test2's 8. In the order of first calls; test3 (still in
        // progress) has no line.
        let (text, warnings) = decode_with(&bytes, None).unwrap();
        assert_eq!(
            text,
            "test1: count 1, cost 12\n\
             test2: count 2, cost 15\n",
            "{t:?}"
        );
        assert_eq!(warnings.len(), 1);
        assert!(
            warnings[0].starts_with("1 calls were in progress"),
            "{warnings:?}"
        );
    }
}

#[test]
fn switched_out_intervals_are_subtracted_from_every_call_in_progress() {
    let t = TARGETS[2];
    // test1 [0, 100) calls test2 [10, 60); switched out for 30 after test2's entry and for 5
    // after test2's exit: test2 costs 50 - 30, test1 costs 100 - 35.
    let records = [ent(TEST1, 0), (TEST2, 10, 30), (EXIT_TAG, 60, 5), ret(100)];
    let bytes = cost_buffer(t, &records, 4, 0);
    let inclusive = Options {
        lr: None,
        inclusive: true,
    };
    let (text, _) = decode_options(&bytes, &inclusive).unwrap();
    assert_eq!(text, "test1: count 1, cost 65\ntest2: count 1, cost 20\n");
    // test1's own time: also less test2's 20.
    let (text, _) = decode_with(&bytes, None).unwrap();
    assert_eq!(text, "test1: count 1, cost 45\ntest2: count 1, cost 20\n");
    // An interval longer than the call (a clock that went backwards) costs 0, not a wrap.
    let records = [(TEST1, 0, 500), ret(100)];
    let (text, _) = decode_with(&cost_buffer(t, &records, 4, 0), None).unwrap();
    assert_eq!(text, "test1: count 1, cost 0\n");
}

/// The seed's §4.1 figure: function() at 30 and 45, function() at 70 calling test() at 80 and
/// returning from it at 90, function() returning at 120: "function() 2 times Time Duration
/// 55", "test() 1 time Time Duration 10" (15 + 50 - 10: the callee's time is taken out).
#[test]
fn the_seeds_figure_sums_function_as_55() {
    const FUNCTION: u64 = TEST1;
    const TEST: u64 = TEST2;
    let records = [
        ent(FUNCTION, 30),
        ret(45),
        ent(FUNCTION, 70),
        ent(TEST, 80),
        ret(90),
        ret(120),
    ];
    for t in TARGETS {
        let (text, warnings) = decode_with(&cost_buffer(t, &records, 8, 0), None).unwrap();
        assert_eq!(
            text, "test1: count 2, cost 55\ntest2: count 1, cost 10\n",
            "{t:?} (function is test1, test is test2 here)"
        );
        assert!(warnings.is_empty(), "{warnings:?}");
    }
}

#[test]
fn a_full_measurement_buffer_drops_the_calls_in_progress_and_says_so() {
    let records = [ent(TEST1, 0), ent(TEST2, 10), ret(20), ent(TEST3, 30)];
    let (text, warnings) = decode_with(&cost_buffer(TARGETS[1], &records, 4, 7), None).unwrap();
    assert_eq!(
        text,
        "OS_CalcStatistics: the function cost buffer was full: 7 records were not kept, so 2 \
         calls in progress then are not counted; summarize more often or use a larger buffer \
         (OS_CalcFunctionCostBufferSize)\n\
         test2: count 1, cost 10\n"
    );
    assert!(warnings.is_empty(), "{warnings:?}");
}

#[test]
fn statistics_buffer_prints_its_lines_in_order() {
    for t in TARGETS {
        let lines = [(TEST1, 1, 25), (TEST2, 3, 185), (TEST3, 4, 130)];
        assert_eq!(
            decode(&stat_buffer(t, &lines, 3, 0)),
            "test1: count 1, cost 25\ntest2: count 3, cost 185\ntest3: count 4, cost 130\n",
            "{t:?}"
        );
        assert_eq!(
            decode(&stat_buffer(t, &lines[..2], 2, 4)),
            "test1: count 1, cost 25\ntest2: count 3, cost 185\n\
             OS_DumpStatistics: 4 calls of other functions are not counted: the statistics \
             buffer holds 2 functions\n"
        );
    }
    let mut locked = stat_buffer(TARGETS[0], &[(TEST1, 1, 2)], 2, 0);
    locked[72] = 1;
    let (_, warnings) = decode_with(&locked, None).unwrap();
    assert!(warnings[0].contains("locked"), "{warnings:?}");
}

// ---- Errors -----------------------------------------------------------------------------

/// One buffer of every kind for every target.
fn samples() -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for t in TARGETS {
        for (log, registers) in [(false, true), (true, true), (true, false)] {
            let mut sim = CallTraceSim::new(t, log, registers, 3);
            let mut inside = Vec::new();
            sim.seed_calls(0x100, |s| inside = s.bytes());
            sim.seed_calls(0x200, |_| {});
            out.push(inside);
            out.push(sim.bytes());
        }
        let records = [
            ent(TEST1, 10),
            (TEST2, 12, 3),
            ret(20),
            ret(30),
            ent(TEST3, 31),
        ];
        out.push(cost_buffer(t, &records, 6, 0));
        out.push(stat_buffer(t, &[(TEST1, 1, 5), (TEST2, 2, 7)], 3, 1));
    }
    out
}

fn assert_offset_error(message: &str) {
    assert!(
        message.starts_with("byte "),
        "error without a byte offset: {message}"
    );
}

#[test]
fn every_truncation_is_an_error_or_the_same_text() {
    for bytes in samples() {
        let full = decode_with(&bytes, None).unwrap().0;
        for len in 0..bytes.len() {
            match decode_with(&bytes[..len], None) {
                Ok((text, _)) => assert_eq!(text, full, "cut at {len}"),
                Err(message) => assert_offset_error(&message),
            }
        }
    }
}

#[test]
fn flipped_bytes_give_an_error_or_a_text_never_a_panic() {
    for bytes in samples() {
        for at in 0..bytes.len() {
            for pattern in [0xff, 0x01, 0x80, 0x10] {
                let mut bad = bytes.clone();
                bad[at] ^= pattern;
                if let Err(message) = decode_with(&bad, None) {
                    assert_offset_error(&message);
                }
            }
        }
    }
}

#[test]
fn garbage_and_extreme_values_never_panic() {
    // Every control field all ones, every record field all ones.
    for bytes in samples() {
        let header = Dump::parse(&bytes).unwrap().header;
        for at in (56..header.header_size as usize).chain(header.header_size as usize..bytes.len())
        {
            let mut bad = bytes.clone();
            bad[at..].fill(0xff);
            if let Err(message) = decode_with(&bad, None) {
                assert_offset_error(&message);
            }
        }
    }
    let mut state = 0x2545_f491_4f6c_dd1du64;
    for _ in 0..2000 {
        let mut bytes = samples()[0][..56].to_vec();
        for _ in 0..200 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            bytes.push(state as u8);
        }
        if let Err(message) = decode_with(&bytes, None) {
            assert_offset_error(&message);
        }
    }
}

/// A message for each kind of corruption, in one golden file: what a user sees.
#[test]
fn error_messages() {
    let t = TARGETS[0];
    let mut sim = CallTraceSim::new(t, false, true, 4);
    sim.entry(TEST1, 0x1100, 0x100);
    let good = sim.bytes();
    let edit = |at: usize, bytes: &[u8]| {
        let mut b = good.clone();
        b[at..at + bytes.len()].copy_from_slice(bytes);
        b
    };
    let le = |v: u64, n: usize| v.to_le_bytes()[..n].to_vec();
    let mut shifted = vec![0u8; 13];
    shifted.extend(&good);
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("empty", Vec::new()),
        ("not a buffer", b"\x7fELF\x02\x01\x01\0\0\0\0\0".to_vec()),
        ("magic elsewhere", shifted),
        ("header cut", good[..40].to_vec()),
        ("version", edit(8, &le(2, 2))),
        ("pointer size", edit(10, &[2])),
        ("endian", edit(11, &[0])),
        ("kind", edit(12, &[9])),
        ("mode", edit(13, &[2])),
        ("header_size", edit(16, &le(96, 4))),
        ("flags without r0-r3", edit(14, &[0])),
        ("capacity", edit(24, &le(0, 4))),
        ("self", edit(40, &le(0x4011, 8))),
        ("anchor", edit(48, &le(0, 8))),
        ("limit", edit(64, &le(0x5000, 8))),
        ("current outside", edit(56, &le(0x10, 8))),
        ("current misaligned", edit(56, &le(SELF + 121, 8))),
        ("pop", edit(80, &le(0, 8))),
        ("step", edit(88, &le(8, 8))),
        ("record cut", good[..150].to_vec()),
        (
            "statistics used",
            stat_buffer(t, &[(TEST1, 1, 1)], 1, 0)
                .iter()
                .enumerate()
                .map(|(i, &b)| if i == 56 { 2 } else { b })
                .collect(),
        ),
        (
            "cost record cut",
            cost_buffer(t, &[ent(TEST1, 1), ret(2)], 2, 0)[..96 + 30].to_vec(),
        ),
    ];
    let mut out = String::new();
    for (name, bytes) in cases {
        let message = decode_with(&bytes, None).unwrap_err();
        assert_offset_error(&message);
        out.push_str(&format!("{name}: {message}\n"));
    }
    check_golden("nitro-errors.txt", &out);
}

// ---- The ELF side -----------------------------------------------------------------------

#[test]
fn elf_without_the_anchor_or_of_another_target_is_refused() {
    let exe = std::fs::read(std::env::current_exe().unwrap()).unwrap();
    let mut sim = CallTraceSim::new(TARGETS[0], false, true, 2);
    sim.entry(TEST1, 0, 0);
    let dump = Dump::parse(&sim.bytes()).unwrap();
    assert_eq!(dump.header.kind, Kind::CallTrace);
    // This test binary has no __PROFILE_ENTRY.
    let err = ProgramImage::new(&exe, &dump.header).err().unwrap();
    assert!(matches!(err, ElfError::NoAnchor), "{err}");
    let mut header = dump.header.clone();
    header.pointer_size = 4;
    let err = ProgramImage::new(&exe, &header).err().unwrap();
    assert_eq!(
        err.to_string(),
        "a 64-bit little-endian ELF file cannot be the program of a buffer with 4-byte \
         pointers, little-endian (header bytes 10 and 11)"
    );
    let err = ProgramImage::new(b"not an elf", &dump.header)
        .err()
        .unwrap();
    assert!(err.to_string().starts_with("not an ELF file"), "{err}");
}

// ---- The command line -------------------------------------------------------------------

fn hookprof(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_hookprof"))
        .args(args)
        .output()
        .unwrap()
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> String {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path.to_str().unwrap().to_string()
}

#[test]
fn command_line_errors_name_the_file() {
    let dir = scratch_dir("nitro-cli");
    let mut sim = CallTraceSim::new(TARGETS[0], false, true, 2);
    sim.entry(TEST1, 0, 0);
    let dump = write(&dir, "ct.bin", &sim.bytes());
    let exe = std::env::current_exe().unwrap();
    let exe = exe.to_str().unwrap();

    let out = hookprof(&["nitro", &dump, "--exe", exe]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.starts_with(&format!(
            "hookprof: error: {exe}: has no __PROFILE_ENTRY symbol"
        )),
        "{stderr}"
    );

    let cut = write(&dir, "cut.bin", &sim.bytes()[..30]);
    let out = hookprof(&["nitro", &cut, "--exe", exe]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        stderr,
        format!(
            "hookprof: error: {cut}: byte 0: truncated: the buffer header needs 56 bytes here \
             but the dump is only 30 bytes long\n"
        )
    );

    let out = hookprof(&["nitro", &dump, "--exe", exe, "-o", &dump]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("refusing to write"));

    let out = hookprof(&["nitro", &dump, "--exe", exe, "--lr", "xyz"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("\"xyz\" is not a hex address"));

    let out = hookprof(&["nitro", &dump]);
    assert_eq!(out.status.code(), Some(2), "--exe is required");
}

#[test]
fn dev_zero_and_huge_sparse_files_are_refused_by_their_first_bytes() {
    let exe = std::env::current_exe().unwrap();
    let exe = exe.to_str().unwrap();
    let dir = scratch_dir("nitro-huge");
    let sparse = dir.join("sparse.bin");
    std::fs::File::create(&sparse)
        .unwrap()
        .set_len(4 << 30)
        .unwrap();
    for dump in ["/dev/zero", sparse.to_str().unwrap()] {
        let out = hookprof(&["nitro", dump, "--exe", exe]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{dump}: {stderr}");
        assert!(
            stderr.starts_with(&format!("hookprof: error: {dump}: ")),
            "{dump}: {stderr}"
        );
        assert!(
            stderr.contains("no NITRO buffer header"),
            "{dump}: {stderr}"
        );
    }
    // A magic but more than a dump can be: refused before it is read.
    let big = dir.join("big.bin");
    let mut f = std::fs::File::create(&big).unwrap();
    std::io::Write::write_all(&mut f, b"HKNITRO\0").unwrap();
    f.set_len(1 << 30).unwrap();
    let big = big.to_str().unwrap();
    let out = hookprof(&["nitro", big, "--exe", exe]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.starts_with(&format!(
            "hookprof: error: {big}: 1073741824 bytes, more than"
        )),
        "{stderr}"
    );
}
