//! `hookprof ti` and `hookprof callgraph` on TI dumps: a synthetic run written as the TI
//! runtime lays out its records (docs/ti-runtime.md, a second definition independent of the
//! reader's), for both pointer sizes and byte orders, binary and CCS hex, linear and wrapped;
//! golden files for the CSVs, the status and the call graph; truncated and corrupted dumps;
//! the command line.
//!
//! `HOOKPROF_BLESS=1 cargo test -p hookprof --test ti` rewrites the golden files.

mod common;

use std::path::Path;
use std::process::{Command, Output};

use common::{check_golden, scratch_dir};
use hookprof::input::format::Endian;
use hookprof::input::ti::{Dump, DumpFormat, Layout};
use hookprof::input::ti_program::Program;

/// The TI parts this test uses, from the floors they are on (input, analysis, output, commands).
mod ti {
    pub use hookprof::analysis::ti::{load_bias, Bias};
    pub use hookprof::commands::ti::process;
    pub use hookprof::input::ti::{parse_dump, LayoutChoice};
    pub use hookprof::output::ti::callgraph;
}

const ENTRY: u64 = 0;
const EXIT: u64 = 1;
const TASK_ENTRY: u64 = 2;
const TASK_EXIT: u64 = 3;

const MAIN: u64 = 0x100;
const F: u64 = 0x200;
const G: u64 = 0x300;
/// Two symbols: "h - h_alias".
const H: u64 = 0x304;
/// The symbol "odd" is at 0x402 (a 2-byte aligned function): the record says 0x400.
const ODD: u64 = 0x400;
/// No symbol: shown as hex.
const ANON: u64 = 0x500;
const TASK_A: u64 = 0x1000;
/// No symbols: "?task #1", "?task #2" in order of appearance.
const TASK_B: u64 = 0x2000;
const TASK_C: u64 = 0x3000;
/// An all-ones address_type: an invalid record.
const INVALID: u64 = u64::MAX;

/// The run, in time order: (address, type, time). Cycles, by task:
///   A: main [110, 340) runs 110-170, 210-250, 330-340: inclusive 110, with f 30, g 30 (10
///      before a switch, 20 after), ANON 5: exclusive 45. Then f [350, 370) with g [360, …)
///      closed by f's exit (unwound), h still open at the end.
///   B: h [180, 200) 20; g [300, 305) 5.
///   C: f [260, 320) runs 260-290, 310-320: 40, with odd [262, 270) 8.
/// Edges: an exit without entry first and last, an invalid record in the middle.
fn run() -> Vec<(u64, u64, u64)> {
    vec![
        (0x900, EXIT, 100),
        (MAIN, ENTRY, 110),
        (F, ENTRY, 120),
        (F, EXIT, 150),
        (G, ENTRY, 160),
        (TASK_A, TASK_EXIT, 170),
        (TASK_B, TASK_ENTRY, 170),
        (H, ENTRY, 180),
        (H, EXIT, 200),
        (TASK_B, TASK_EXIT, 210),
        (TASK_A, TASK_ENTRY, 210),
        (INVALID, 0, 0),
        (G, EXIT, 230),
        (ANON, ENTRY, 240),
        (ANON, EXIT, 245),
        (TASK_A, TASK_EXIT, 250),
        (TASK_C, TASK_ENTRY, 250),
        (F, ENTRY, 260),
        (ODD, ENTRY, 262),
        (ODD, EXIT, 270),
        (TASK_C, TASK_EXIT, 290),
        (TASK_B, TASK_ENTRY, 290),
        (G, ENTRY, 300),
        (G, EXIT, 305),
        (TASK_B, TASK_EXIT, 310),
        (TASK_C, TASK_ENTRY, 310),
        (F, EXIT, 320),
        (TASK_C, TASK_EXIT, 330),
        (TASK_A, TASK_ENTRY, 330),
        (MAIN, EXIT, 340),
        (F, ENTRY, 350),
        (G, ENTRY, 360),
        (F, EXIT, 370),
        (H, ENTRY, 380),
        (0x700, EXIT, 390),
    ]
}

const LAYOUTS: [Layout; 4] = [
    Layout {
        pointer_size: 8,
        endian: Endian::Little,
    },
    Layout {
        pointer_size: 4,
        endian: Endian::Little,
    },
    Layout {
        pointer_size: 8,
        endian: Endian::Big,
    },
    Layout {
        pointer_size: 4,
        endian: Endian::Big,
    },
];

fn program(layout: Layout) -> Program {
    Program::from_names(
        layout,
        [
            (MAIN, "main"),
            (F, "f"),
            (G, "g"),
            (H, "h_alias"),
            (H, "h"),
            (0x402, "odd"),
            (TASK_A, "taskA"),
        ]
        .into_iter()
        .map(|(a, n)| (a, n.to_string())),
    )
}

fn put(out: &mut Vec<u8>, value: u64, size: usize, endian: Endian) {
    let bytes = value.to_be_bytes();
    let mut word = bytes[8 - size..].to_vec();
    if endian == Endian::Little {
        word.reverse();
    }
    out.extend(word);
}

/// The records' memory, `rotate` slots wrapped round (the oldest at slot `rotate`).
fn binary(layout: Layout, records: &[(u64, u64, u64)], rotate: usize) -> Vec<u8> {
    let w = layout.pointer_size as usize;
    let mut slots: Vec<Vec<u8>> = records
        .iter()
        .map(|&(address, kind, time)| {
            let mut r = Vec::new();
            let address_type = if address == INVALID {
                u64::MAX >> (64 - 8 * w)
            } else {
                address | kind
            };
            put(&mut r, address_type, w, layout.endian);
            put(&mut r, time & 0xffff_ffff, 4, layout.endian);
            put(&mut r, time >> 32, 4, layout.endian);
            r
        })
        .collect();
    slots.rotate_right(rotate);
    slots.concat()
}

/// CCS "32-bit Hex - C Style" text of the same memory.
fn ccs(layout: Layout, memory: &[u8], start: u64) -> Vec<u8> {
    let mut text = format!("1651 1 {start:x} 0 {:x}\n", memory.len() / 4);
    for word in memory.chunks(4) {
        let mut b = [0u8; 4];
        b.copy_from_slice(word);
        let v = match layout.endian {
            Endian::Little => u32::from_le_bytes(b),
            Endian::Big => u32::from_be_bytes(b),
        };
        text.push_str(&format!("0x{v:08X}\n"));
    }
    text.into_bytes()
}

struct Outputs {
    call_list: String,
    profile: String,
    status: String,
    callgraph: String,
    warnings: Vec<String>,
}

fn decode(bytes: &[u8], layout: Layout) -> Result<Outputs, String> {
    let dump = Dump::parse(bytes, layout).map_err(|e| e.to_string())?;
    let processed = ti::process(dump, &program(layout), None);
    Ok(Outputs {
        call_list: String::from_utf8(processed.call_list.clone()).unwrap(),
        profile: String::from_utf8(processed.profile.clone()).unwrap(),
        status: processed.status(),
        callgraph: String::from_utf8(ti::callgraph(&processed.analysis)).unwrap(),
        warnings: processed.warnings,
    })
}

#[test]
fn golden_csvs_status_and_call_graph() {
    let layout = LAYOUTS[0];
    let out = decode(&binary(layout, &run(), 0), layout).unwrap();
    check_golden("ti-call_list.csv", &out.call_list);
    check_golden("ti-profile.csv", &out.profile);
    check_golden("ti-status.txt", &out.status);
    check_golden("ti-callgraph.txt", &out.callgraph);
    assert_eq!(
        out.warnings,
        [
            "3 of the 8 function addresses have no symbol in the ELF file and are shown as \
             ?function #1, #2, …, their ELF addresses in the Address column (is it the program that wrote \
             the dump?)"
        ]
    );
}

/// The numbers the comment of `run` derives, independently of the golden files.
#[test]
fn cycles_exclude_the_time_a_task_was_switched_out() {
    let layout = LAYOUTS[1];
    let dump = Dump::parse(&binary(layout, &run(), 0), layout).unwrap();
    assert_eq!((dump.slots, dump.invalid), (35, 1));
    let processed = ti::process(dump, &program(layout), None);
    let a = &processed.analysis;
    let call = |name: &str, enter: u64| {
        a.calls
            .iter()
            .find(|c| a.function_name(c.address) == name && c.enter_time == enter)
            .unwrap_or_else(|| panic!("no call of {name} at {enter}: {:#?}", a.calls))
    };
    let main = call("main", 110);
    assert_eq!((main.inclusive, main.exclusive, main.depth), (110, 45, 1));
    assert_eq!(a.task_name(main.task), "taskA");
    let g = call("g", 160);
    assert_eq!((g.inclusive, g.exclusive, g.depth), (30, 30, 2));
    let f = call("f", 260);
    assert_eq!((f.inclusive, f.exclusive), (40, 32));
    assert_eq!(a.task_name(f.task), "?task #2");
    assert_eq!(call("odd", 262).inclusive, 8);
    assert_eq!(a.task_name(call("h - h_alias", 180).task), "?task #1");
    let unwound = call("g", 360);
    assert!(unwound.unwound);
    assert_eq!((unwound.exit_time, unwound.inclusive), (370, 10));
    assert_eq!(
        (
            a.enters_without_exit,
            a.exits_without_enter,
            a.max_depth,
            a.functions_found,
            a.tasks_found
        ),
        // g unwound + h open; the first and last exits; main, g, and the unwound g's depth 2
        (2, 2, 2, 8, 3)
    );
    assert_eq!(
        (a.first_time, a.last_time, a.total_cycles()),
        (Some(100), Some(390), 290)
    );
    // Every call: inclusive = exclusive + the inclusive of the calls it made.
    for (i, c) in a.calls.iter().enumerate() {
        let children: u64 = a.calls[..i]
            .iter()
            .filter(|d| {
                d.task == c.task
                    && d.depth == c.depth + 1
                    && d.enter_time >= c.enter_time
                    && d.exit_time <= c.exit_time
            })
            .map(|d| d.inclusive)
            .sum();
        assert_eq!(c.inclusive, c.exclusive + children, "{c:?}");
    }
    // Tasks: runs and cycles. The records before the first switch are taskA's.
    let tasks: Vec<(String, u64, u64)> = a
        .tasks
        .iter()
        .map(|(k, s)| (a.task_name(*k), s.runs, s.total))
        .collect();
    assert_eq!(
        tasks,
        [
            ("taskA".to_string(), 3, 70 + 40 + 60),
            ("?task #1".to_string(), 2, 40 + 20),
            ("?task #2".to_string(), 2, 40 + 20),
        ]
    );
    assert_eq!(a.task_valid_cycles(), 290);
}

#[test]
fn every_layout_and_both_formats_decode_alike() {
    let reference = decode(&binary(LAYOUTS[0], &run(), 0), LAYOUTS[0]).unwrap();
    for layout in LAYOUTS {
        let memory = binary(layout, &run(), 0);
        for (what, bytes) in [
            ("binary", memory.clone()),
            ("ccs", ccs(layout, &memory, 0x8000_0000)),
        ] {
            let out = decode(&bytes, layout).unwrap();
            assert_eq!(out.call_list, reference.call_list, "{layout}, {what}");
            assert_eq!(out.profile, reference.profile, "{layout}, {what}");
            assert_eq!(out.callgraph, reference.callgraph, "{layout}, {what}");
        }
    }
}

#[test]
fn a_wrapped_circular_buffer_is_read_from_its_oldest_record() {
    let reference = decode(&binary(LAYOUTS[0], &run(), 0), LAYOUTS[0]).unwrap();
    let n = run().len();
    for layout in LAYOUTS {
        for rotate in [1, 7, n / 2, n - 1] {
            let memory = binary(layout, &run(), rotate);
            let dump = Dump::parse(&memory, layout).unwrap();
            assert_eq!(dump.oldest_slot, Some(rotate as u64), "{layout}, {rotate}");
            assert_eq!(dump.backward_steps, 0);
            let out = decode(&ccs(layout, &memory, 0x10), layout).unwrap();
            assert_eq!(out.call_list, reference.call_list, "{layout}, {rotate}");
            assert_eq!(out.profile, reference.profile, "{layout}, {rotate}");
            assert!(
                out.status
                    .contains(&format!("the oldest record is record {rotate} of the dump")),
                "{}",
                out.status
            );
        }
    }
}

#[test]
fn a_buffer_that_did_not_wrap_is_not_rotated_by_a_small_backward_step() {
    // Two threads' records interleaved: time goes back a little once.
    let mut records = run();
    records[3].2 = 115;
    let layout = LAYOUTS[0];
    let dump = Dump::parse(&binary(layout, &records, 0), layout).unwrap();
    assert_eq!((dump.oldest_slot, dump.backward_steps), (None, 1));
    let out = decode(&binary(layout, &records, 0), layout).unwrap();
    assert!(
        out.warnings
            .iter()
            .any(|w| w.contains("the timestamp goes backwards 1 times")),
        "{:?}",
        out.warnings
    );
}

#[test]
fn load_bias_of_a_position_independent_program() {
    // Addresses recorded at bias 0x5555_0000_0000; the ELF knows them at bias 0.
    let bias = 0x5555_0000_0000u64;
    let layout = LAYOUTS[0];
    let records: Vec<(u64, u64, u64)> = run()
        .into_iter()
        .map(|(a, k, t)| (if a == INVALID { a } else { a + bias }, k, t))
        .collect();
    let dump = Dump::parse(&binary(layout, &records, 0), layout).unwrap();
    let mut program = program(layout);
    program.position_independent = true;
    // From the function addresses: every symbol at the same page offset votes.
    let (found, how) = ti::load_bias(&program, &dump, None);
    assert_eq!(found, bias, "{how:?}");
    assert!(matches!(how, ti::Bias::Inferred { .. }), "{how:?}");
    // From ProfileData's address, given or in the CCS header.
    program.profile_data = Some(0x7000);
    let (found, _) = ti::load_bias(&program, &dump, Some(bias + 0x7000));
    assert_eq!(found, bias);
    let memory = binary(layout, &records, 0);
    let dump = Dump::parse(&ccs(layout, &memory, bias + 0x7000), layout).unwrap();
    assert!(matches!(dump.format, DumpFormat::CcsHex { .. }));
    let (found, how) = ti::load_bias(&program, &dump, None);
    assert_eq!(found, bias);
    assert_eq!(
        how,
        ti::Bias::FromProfileData {
            runtime: bias + 0x7000,
            given: false
        }
    );
    let processed = ti::process(dump, &program, None);
    assert_eq!(
        processed.profile,
        decode(&binary(layout, &run(), 0), layout)
            .unwrap()
            .profile
            .into_bytes()
    );
}

// ---- Errors -----------------------------------------------------------------------------

fn assert_located(message: &str) {
    assert!(
        message.starts_with("byte ") || message.starts_with("line "),
        "error without a location: {message}"
    );
}

#[test]
fn every_truncation_is_an_error_or_fewer_records() {
    for layout in LAYOUTS {
        let memory = binary(layout, &run(), 5);
        for bytes in [memory.clone(), ccs(layout, &memory, 0x10)] {
            for len in 0..bytes.len() {
                match decode(&bytes[..len], layout) {
                    Ok(_) => {}
                    Err(message) => assert_located(&message),
                }
            }
        }
    }
}

#[test]
fn flipped_bytes_never_panic() {
    for layout in [LAYOUTS[0], LAYOUTS[3]] {
        let memory = binary(layout, &run(), 3);
        for bytes in [memory.clone(), ccs(layout, &memory, 0x10)] {
            for at in 0..bytes.len() {
                for pattern in [0xff, 0x01, 0x02, 0x80, 0x20] {
                    let mut bad = bytes.clone();
                    bad[at] ^= pattern;
                    if let Err(message) = decode(&bad, layout) {
                        assert_located(&message);
                    }
                }
            }
        }
    }
}

#[test]
fn error_messages() {
    let layout = LAYOUTS[0];
    let memory = binary(layout, &run(), 0);
    let text = ccs(layout, &memory, 0x10);
    let with_line = |line: usize, replacement: &str| {
        let mut lines: Vec<String> = String::from_utf8(text.clone())
            .unwrap()
            .lines()
            .map(str::to_string)
            .collect();
        lines[line - 1] = replacement.to_string();
        (lines.join("\n") + "\n").into_bytes()
    };
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("empty", Vec::new()),
        ("binary cut", memory[..100].to_vec()),
        ("ccs header fields", with_line(1, "1651 1 10")),
        ("ccs format", with_line(1, "1651 2 10 0 8c")),
        ("ccs address", with_line(1, "1651 1 xyz 0 8c")),
        ("ccs word", with_line(5, "0xABCDEFG")),
        ("ccs cut", text[..text.len() - 22].to_vec()),
    ];
    let mut out = String::new();
    for (name, bytes) in cases {
        let message = decode(&bytes, layout).err().unwrap();
        assert_located(&message);
        out.push_str(&format!("{name}: {message}\n"));
    }
    check_golden("ti-errors.txt", &out);
}

// ---- The command line -------------------------------------------------------------------

fn hookprof(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_hookprof"))
        .args(args)
        .output()
        .unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// This test binary as the ELF file: x86-64 (or whatever the host is), no names for the
/// synthetic addresses.
fn host_layout_and_exe() -> (Layout, String) {
    let exe = std::env::current_exe().unwrap();
    let program = Program::parse(&std::fs::read(&exe).unwrap(), false).unwrap();
    (program.layout, exe.to_str().unwrap().to_string())
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> String {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path.to_str().unwrap().to_string()
}

#[test]
fn command_line() {
    let dir = scratch_dir("ti-cli");
    let (layout, exe) = host_layout_and_exe();
    let memory = binary(layout, &run(), 0);
    let dump = write(&dir, "run.bin", &memory);
    let out = hookprof(&["ti", &dump, "--exe", &exe]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    for expected in [
        "Functions found: 8\n",
        "Tasks found: 3\n",
        "Enter records without exit: 2\n",
        "Exit records without enter: 2\n",
        "Maximum call stack depth: 2\n",
    ] {
        assert!(stdout.contains(expected), "{expected:?} in\n{stdout}");
    }
    assert!(
        stdout.ends_with("Profile data processing complete.\n"),
        "{stdout}"
    );
    let prefix = dir.join("run");
    let profile = std::fs::read_to_string(format!("{}_profile.csv", prefix.display())).unwrap();
    assert!(
        profile.starts_with("FirstTSC,100,LastTSC,390,TotalCycles,290\n"),
        "{profile}"
    );
    assert!(dir.join("run_call_list.csv").is_file());

    // --out, and the same from the CCS text.
    let dat = write(&dir, "run.dat", &ccs(layout, &memory, 0x10));
    let out = hookprof(&[
        "ti",
        &dat,
        "--exe",
        &exe,
        "--out",
        &format!("{}/dat", dir.display()),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        std::fs::read(dir.join("dat_profile.csv")).unwrap(),
        profile.as_bytes()
    );

    // Never over the input.
    let victim = write(&dir, "x_profile.csv", &memory);
    let out = hookprof(&[
        "ti",
        &victim,
        "--exe",
        &exe,
        "--out",
        &format!("{}/x", dir.display()),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("refusing to write"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(std::fs::read(&victim).unwrap(), memory);

    // A dump cut short: the file and the byte.
    let cut = write(&dir, "cut.bin", &memory[..memory.len() - 3]);
    let out = hookprof(&["ti", &cut, "--exe", &exe]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(
        stderr.starts_with(&format!("hookprof: error: {cut}: byte ")),
        "{stderr}"
    );
    assert!(
        stderr.contains("truncated: the last record has"),
        "{stderr}"
    );

    // The call graph of a TI dump: one section per task; --exe is needed to read one.
    let out = hookprof(&["callgraph", &dump, "--exe", &exe]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let graph = text(&out.stdout);
    for task in [
        "Thread: ?task #1\t\t\t\n",
        "Thread: ?task #2\t\t\t\n",
        "Thread: ?task #3\t\t\t\n",
    ] {
        assert!(graph.contains(task), "{task:?} in\n{graph}");
    }
    let out = hookprof(&["callgraph", &dump]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains(
            "not a .hktrace file (it does not start with \"HKTRACE\"); to read it as a TI dump"
        ),
        "{}",
        text(&out.stderr)
    );
    let out = hookprof(&["ti", &dump]);
    assert_eq!(out.status.code(), Some(2), "--exe is required");
}

#[test]
fn dev_zero_and_huge_sparse_files_are_refused_without_reading_them_all() {
    let (_, exe) = host_layout_and_exe();
    let dir = scratch_dir("ti-huge");
    let sparse = dir.join("sparse.bin");
    std::fs::File::create(&sparse)
        .unwrap()
        .set_len(4 << 30)
        .unwrap();
    let sparse = sparse.to_str().unwrap().to_string();
    for (dump, what) in [
        ("/dev/zero", "more than 268435456 bytes".to_string()),
        (sparse.as_str(), "4294967296 bytes".to_string()),
    ] {
        for command in ["ti", "callgraph"] {
            let out = hookprof(&[command, dump, "--exe", &exe]);
            let stderr = text(&out.stderr);
            assert_eq!(out.status.code(), Some(1), "{command} {dump}: {stderr}");
            assert!(
                stderr.starts_with(&format!(
                    "hookprof: error: {dump}: {what}, more than the 256 MiB"
                )),
                "{command} {dump}: {stderr}"
            );
        }
    }
}

#[test]
fn noise_whose_size_is_a_multiple_of_16_is_refused_by_the_elf() {
    let (_, exe) = host_layout_and_exe();
    let dir = scratch_dir("ti-noise");
    // Deterministic noise (an LCG): 4096 "records".
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    let bytes: Vec<u8> = (0..4096 * 16)
        .map(|_| {
            x = x
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (x >> 56) as u8
        })
        .collect();
    let noise = write(&dir, "noise.bin", &bytes);
    let out = hookprof(&["ti", &noise, "--exe", &exe]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.starts_with(&format!("hookprof: error: {noise}: only "))
            && stderr.contains(&format!(
                "function addresses in its records are functions of {exe}"
            )),
        "{stderr}"
    );
}

/// A 64-bit program's dump may hold hookcc's 4-word records or the seed's 3-word Hook_Record
/// (its own hook.c): the layout whose timestamps run in order is the one used, and it says so.
#[test]
fn record_layout_of_a_64_bit_program_is_detected() {
    for endian in [Endian::Little, Endian::Big] {
        let elf = Layout {
            pointer_size: 8,
            endian,
        };
        let seed = Layout {
            pointer_size: 4,
            endian,
        };
        // 34 records: 408 bytes, no whole number of 4-word records; 36: 432 bytes, both
        // layouts read them, and only the 3-word one in time order.
        for (records, rotate) in [(34, 0), (34, 7), (36, 0), (36, 7)] {
            let mut run = run();
            run.resize(records, (INVALID, 0, 0));
            let expected = decode(&binary(seed, &run, rotate), seed).unwrap();
            // The seed's records in a 64-bit program's dump: detected.
            let bytes = binary(seed, &run, rotate);
            let (dump, choice) = ti::parse_dump(&bytes, elf, None).unwrap();
            let detected = match choice {
                ti::LayoutChoice::Detected {
                    other_backward_steps: None,
                } => records == 34,
                ti::LayoutChoice::Detected {
                    other_backward_steps: Some(steps),
                } => records == 36 && steps > 4,
                _ => false,
            };
            assert!(detected, "{endian:?} {records} rotate {rotate}: {choice:?}");
            assert_eq!(dump.layout, seed);
            let processed = ti::process(dump, &program(seed), None);
            assert_eq!(
                String::from_utf8(processed.call_list).unwrap(),
                expected.call_list
            );
            // hookcc's own 4-word records: as the ELF file says.
            let bytes = binary(elf, &run, rotate);
            let (dump, choice) = ti::parse_dump(&bytes, elf, None).unwrap();
            assert_eq!((dump.layout, choice), (elf, ti::LayoutChoice::Elf));
            // Forced.
            let (dump, choice) = ti::parse_dump(&bytes, elf, Some(4)).unwrap();
            assert_eq!((dump.layout, choice), (elf, ti::LayoutChoice::Given));
            let seed_bytes = binary(seed, &run, rotate);
            let (dump, choice) = ti::parse_dump(&seed_bytes, elf, Some(3)).unwrap();
            assert_eq!((dump.layout, choice), (seed, ti::LayoutChoice::Given));
        }
    }
    // Nothing to tell them apart by (48 bytes: 3 or 4 records, all at time 0): an error that
    // names the option, not a guess.
    let elf = Layout {
        pointer_size: 8,
        endian: Endian::Little,
    };
    let err = ti::parse_dump(&[0u8; 48], elf, None)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("cannot tell the record layout") && err.contains("--record-words=3"),
        "{err}"
    );
    // A 32-bit program's records are 3 words, whatever the data.
    let elf32 = Layout {
        pointer_size: 4,
        endian: Endian::Little,
    };
    let (dump, choice) = ti::parse_dump(&[0u8; 48], elf32, None).unwrap();
    assert_eq!((dump.layout, choice), (elf32, ti::LayoutChoice::Elf));
}
