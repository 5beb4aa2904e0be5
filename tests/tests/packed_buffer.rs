//! The packed RAM buffer on bare metal (issue 38; docs/baremetal.md, "The packed RAM buffer"):
//! `make run HOOKS=packed` builds tests/programs/calls.c with the stream's encoder writing into
//! a RAM buffer (examples/baremetal/packed_out.c, `HOOKCC_TRACE_PACKED_BUFFER`), which at exit
//! is ended (`hookcc_trace_packed_finish`) and written out through semihosting;
//! `hookprof record --serial` decodes it. On every board (the ARM926 in ARM and Thumb code,
//! the Cortex-M3, the Cortex-M4F and M7 with the hard-float ABI, RV32):
//! - a buffer that holds everything: calls.c's counts exact, every record the runtime made in
//!   the trace, under 3 bytes a record;
//! - a buffer of 256 bytes: it stops when full, and what the trace keeps plus what it says was
//!   lost is what the runtime made (the firmware's own count), the loss in `hookprof info`.
//!
//! Needs what tests/tests/baremetal.rs needs (scripts/setup.sh).

use std::path::{Path, PathBuf};
use std::process::Output;

use hookcc_tests::*;

/// A board of examples/baremetal and its make variables.
const BOARDS: [(&str, &[&str]); 6] = [
    ("arm926", &[]),
    ("arm926", &["THUMB=1"]),
    ("cortex-m3", &[]),
    ("cortex-m4f", &[]),
    ("cortex-m4f", &["MACHINE=mps2-an500"]),
    ("riscv32", &[]),
];

/// `make -s run VARIABLES…` in `project` with the workspace's hookcc.
fn make_run(project: &Path, variables: &[String]) -> Output {
    make_baremetal(project, "run", variables)
}

/// What one packed run gave: the runtime's counts (records made, dropped, bytes), the
/// decoded trace, and hookprof record's summary line.
struct Packed {
    what: String,
    made: u64,
    dropped: u64,
    bytes: u64,
    trace: PathBuf,
    elf: PathBuf,
    summary: String,
    _dir: tempfile::TempDir,
}

fn number_after(text: &str, word: &str) -> u64 {
    let at = text
        .find(word)
        .unwrap_or_else(|| panic!("no `{word}` in: {text}"))
        + word.len();
    text[at..]
        .split(|c: char| !c.is_ascii_digit())
        .find(|s| !s.is_empty())
        .unwrap()
        .parse()
        .unwrap()
}

/// A command's stdout and stderr, one after the other (what `make` said).
fn said(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// `hookprof record --serial DUMP --exe ELF -o TRACE`: its stderr and its summary line.
fn record_dump(dump: &Path, elf: &Path, trace: &Path, what: &str) -> (String, String) {
    let record = run_ok(
        hookprof()
            .arg("record")
            .arg("--serial")
            .arg(dump)
            .arg("--exe")
            .arg(elf)
            .arg("-o")
            .arg(trace),
    );
    let stderr = String::from_utf8_lossy(&record.stderr).into_owned();
    let summary = stderr
        .lines()
        .find(|l| l.starts_with("hookprof record: "))
        .unwrap_or_else(|| panic!("{what}: no summary from hookprof record\n{stderr}"))
        .to_string();
    (stderr, summary)
}

/// calls.c with the packed buffer of `bytes` bytes (the example's default: None) on `board`:
/// run, its buffer written out, decoded by hookprof record --serial.
fn packed_run(board: &str, board_variables: &[&str], bytes: Option<u32>, ring: bool) -> Packed {
    let what = format!(
        "calls.c on {board} {} HOOKS=packed PACKED_BYTES={}{}",
        board_variables.join(" "),
        bytes.map_or("(default)".to_string(), |b| b.to_string()),
        if ring { " PACKED_RING=1" } else { "" }
    );
    let dir = tempfile::tempdir().unwrap();
    let project = copy_baremetal_example(dir.path(), board);
    let mut variables = vec![
        "HOOKS=packed".to_string(),
        "PACKED_COUNTS=1".to_string(),
        format!("APP={}", program_source("calls.c").display()),
        format!("HOOKCC_FLAGS=--trace {SOURCE_PLACEMENT}"),
    ];
    variables.extend(board_variables.iter().map(|v| v.to_string()));
    if let Some(bytes) = bytes {
        variables.push(format!("PACKED_BYTES={bytes}"));
    }
    if ring {
        variables.push("PACKED_RING=1".to_string());
    }
    let out = make_run(&project, &variables);
    let output = said(&out);
    assert!(
        out.status.success(),
        "{what}: make run failed with {}\n{output}",
        out.status
    );
    assert!(
        output.contains("16135\n"),
        "{what}: calls.c's output\n{output}"
    );
    let line = output
        .lines()
        .find(|l| l.starts_with("packed records "))
        .unwrap_or_else(|| panic!("{what}: no counts from packed_out.c\n{output}"));
    let (made, dropped, bytes) = (
        number_after(line, "records "),
        number_after(line, "lost "),
        number_after(line, "bytes "),
    );
    let dump = project.join("firmware.hkpacked");
    assert_eq!(
        std::fs::metadata(&dump).map(|m| m.len()).ok(),
        Some(bytes),
        "{what}: firmware.hkpacked"
    );
    let trace = project.join("firmware.hktrace");
    let elf = project.join("firmware.elf");
    let (_, summary) = record_dump(&dump, &elf, &trace, &what);
    assert!(
        summary.contains("end of stream") && !summary.contains("do not add up"),
        "{what}: {summary}"
    );
    Packed {
        what,
        made,
        dropped,
        bytes,
        trace,
        elf,
        summary,
        _dir: dir,
    }
}

/// A buffer that holds all of calls.c: its counts exact, every record there and naming its
/// function by the function's record (readelf and nm), under 3 bytes a record (what a 16-byte
/// record buffer takes in 16).
#[test]
fn packed_ram_buffer_holds_every_call_on_every_board() {
    if !have_baremetal_tools() {
        return;
    }
    for (board, variables) in BOARDS {
        let run = packed_run(board, variables, None, false);
        let what = &run.what;
        assert_eq!(run.dropped, 0, "{what}: {}", run.summary);
        assert_eq!(
            number_after(&run.summary, "bytes, "),
            run.made,
            "{what}: calls' records in the trace vs the runtime's count: {}",
            run.summary
        );
        let per_record = run.bytes as f64 / run.made as f64;
        assert!(
            per_record <= 3.0,
            "{what}: {per_record:.2} bytes a record ({} bytes, {} records)",
            run.bytes,
            run.made
        );
        eprintln!(
            "{what}: {} records in {} bytes, {per_record:.2} bytes a record",
            run.made, run.bytes
        );
        let (rows, stderr) = report_csv(&run.trace, &["--exe", run.elf.to_str().unwrap()]);
        assert!(
            stderr.is_empty(),
            "{what}: hookprof report warned:\n{stderr}"
        );
        let counts: std::collections::BTreeMap<String, u64> =
            rows.into_iter().map(|r| (r.function, r.calls)).collect();
        let expected: std::collections::BTreeMap<String, u64> = CALLS_C
            .into_iter()
            .map(|(f, n)| (f.to_string(), n))
            .collect();
        assert_eq!(counts, expected, "{what}");
        // Issue 35, item 2: the records name the functions, in `.data`, by the target's own
        // readelf and nm.
        let (readelf, nm) = if board == "riscv32" {
            ("riscv64-unknown-elf-readelf", "riscv64-unknown-elf-nm")
        } else {
            ("arm-none-eabi-readelf", "arm-none-eabi-nm")
        };
        let by_records = records_by_readelf_and_nm(&run.trace, &run.elf, readelf, nm);
        assert_eq!(by_records, expected, "{what}: the records' functions");
    }
}

/// A buffer of 256 bytes stops when full: the records it kept plus the ones it counted lost are
/// the ones the runtime made, and the trace says how many were lost, and where.
#[test]
fn a_full_packed_ram_buffer_counts_what_it_dropped_on_every_board() {
    if !have_baremetal_tools() {
        return;
    }
    for (board, variables) in BOARDS {
        let run = packed_run(board, variables, Some(256), false);
        let what = &run.what;
        assert!(run.bytes <= 256, "{what}: {} bytes", run.bytes);
        assert!(run.dropped > 0, "{what}: nothing dropped: {}", run.summary);
        let kept = number_after(&run.summary, "bytes, ");
        assert!(kept > 0, "{what}: {}", run.summary);
        assert_eq!(
            kept + run.dropped,
            run.made,
            "{what}: kept + dropped vs made: {}",
            run.summary
        );
        let info = run_ok(hookprof().arg("info").arg(&run.trace));
        let info = String::from_utf8_lossy(&info.stdout);
        assert!(
            info.contains(&format!("lost:              {}", run.dropped)),
            "{what}: the loss in hookprof info\n{info}"
        );
    }
}

/// The functions of a trace's records in order (entry or exit, and the function named from the
/// ELF's symbols).
fn record_names(trace: &Path, elf: &Path) -> Vec<(bool, String)> {
    // The hooks pass functions' records: hookprof's symbols name a record by its function
    // (the records test checks that naming against nm and readelf).
    let symbols = hookprof::input::symbols::ElfSymbols::load(elf).unwrap();
    let bytes = std::fs::read(trace).unwrap();
    let parsed = hookprof::input::format::Trace::new(&bytes).unwrap();
    let mut records = Vec::new();
    for chunk in parsed.chunks() {
        if let hookprof::input::format::Chunk::Events(events) = chunk.unwrap().chunk {
            for r in events.iter() {
                let r = r.unwrap();
                let name = symbols
                    .lookup(r.address)
                    .map(|hit| hit.name.to_string())
                    .unwrap_or_else(|| format!("{:#x}", r.address));
                records.push((r.kind == hookprof::input::format::RecordKind::Exit, name));
            }
        }
    }
    records
}

/// A flight recorder of 4 KiB (two halves of 2 KiB) keeps the newest records: what it holds
/// is the end of what a buffer holding everything holds, record for record (function and
/// kind); the records written over plus the ones kept are the ones the runtime made; the
/// oldest half begins with a RING chunk counting the ones written over.
#[test]
fn a_packed_flight_recorder_keeps_the_newest_records_on_every_board() {
    if !have_baremetal_tools() {
        return;
    }
    for (board, variables) in BOARDS {
        let all = packed_run(board, variables, None, false);
        let ring = packed_run(board, variables, Some(4096), true);
        let what = &ring.what;
        assert!(ring.bytes <= 4096, "{what}: {} bytes", ring.bytes);
        let kept = number_after(&ring.summary, "bytes, ");
        let overwritten = number_after(&ring.summary, "a flight recorder: ");
        assert!(overwritten > 0, "{what}: {}", ring.summary);
        assert_eq!(
            (kept + overwritten, ring.dropped),
            (ring.made, 0),
            "{what}: kept + written over vs made: {}",
            ring.summary
        );
        assert!(
            ring.bytes >= 4096 / 2 - 96,
            "{what}: only {} bytes kept",
            ring.bytes
        );
        let newest = record_names(&ring.trace, &ring.elf);
        let every = record_names(&all.trace, &all.elf);
        assert_eq!(newest.len() as u64, kept, "{what}");
        assert!(newest.len() < every.len(), "{what}");
        assert!(
            newest == every[every.len() - newest.len()..],
            "{what}: the flight recorder's {} records are not the last of the {} made",
            newest.len(),
            every.len()
        );
        assert_eq!(
            newest.last(),
            Some(&(true, "main".to_string())),
            "{what}: the last record"
        );
        let info = run_ok(hookprof().arg("info").arg(&ring.trace));
        let info = String::from_utf8_lossy(&info.stdout);
        assert!(
            info.contains(&format!("{overwritten} records dropped before them")),
            "{what}: the ring in hookprof info\n{info}"
        );
        eprintln!(
            "{what}: kept the last {kept} of {} records in {} bytes",
            ring.made, ring.bytes
        );
    }
}

/// FreeRTOS (examples/baremetal/freertos/rtos_app.c: four tasks, a queue, a timer) with a 4 KiB
/// packed flight recorder on the Cortex-M3, Cortex-M4F and RV32 boards: the task switches go in the
/// buffer with the calls, each half begins with the running task, and in the decoded window
/// every task's entries and exits match (exits of frames entered before it are counted as
/// such, not unmatched), every task has its name (the finish names them again), and kept +
/// written over = made.
#[test]
fn a_packed_flight_recorder_keeps_freertos_tasks_apart() {
    if !have_baremetal_tools() {
        return;
    }
    for board in ["cortex-m3", "cortex-m4f", "riscv32"] {
        let what = format!("rtos_app.c on {board}, HOOKS=packed PACKED_RING=1 PACKED_BYTES=4096");
        let dir = tempfile::tempdir().unwrap();
        let project = copy_baremetal_example(dir.path(), "freertos");
        let variables: Vec<String> = [
            format!("BOARD={board}"),
            "HOOKS=packed".into(),
            "PACKED_RING=1".into(),
            "PACKED_BYTES=4096".into(),
            "PACKED_COUNTS=1".into(),
            format!("HOOKCC_FLAGS=--trace {SOURCE_PLACEMENT}"),
        ]
        .into();
        let out = make_run(&project, &variables);
        let output = said(&out);
        assert!(out.status.success(), "{what}: make run failed\n{output}");
        let line = output
            .lines()
            .find(|l| l.starts_with("packed records "))
            .unwrap_or_else(|| panic!("{what}: no counts\n{output}"));
        let made = number_after(line, "records ");
        let trace = project.join("firmware.hktrace");
        let (stderr, summary) = record_dump(
            &project.join("firmware.hkpacked"),
            &project.join("firmware.elf"),
            &trace,
            &what,
        );
        let kept = number_after(&summary, "bytes, ")
            + number_after(&summary, "bytes each), ")
            + number_after(&summary, "task switches, ");
        let overwritten = number_after(&summary, "a flight recorder: ");
        assert!(overwritten > 0, "{what}: {summary}");
        assert_eq!(kept + overwritten, made, "{what}: {summary}");
        assert!(!stderr.contains("warning"), "{what}:\n{stderr}");
        let info = run_ok(hookprof().arg("info").arg(&trace));
        let info = String::from_utf8_lossy(&info.stdout);
        let threads: Vec<&str> = info
            .lines()
            .map(str::trim)
            .filter(|l| l.starts_with('#'))
            .collect();
        assert!(threads.len() >= 5, "{what}: threads\n{info}");
        // Named though their creations were written over: the finish's NAME records.
        for task in ["producer", "consumer", "worker", "IDLE"] {
            assert!(
                info.contains(&format!("\"{task}\"")),
                "{what}: {task}?\n{info}"
            );
        }
        for thread in threads {
            assert!(
                thread.contains("unmatched entries 0, unmatched exits 0"),
                "{what}: {thread}"
            );
        }
    }
}

/// The packed buffer taken out by a debugger, as a board's is: gdb-multiarch stops the firmware
/// at `exit`, calls hookcc_trace_packed_finish() in the halted target and dumps the stream up to
/// its end (scripts/baremetal-dump.sh's @packed, `make gdb-dump BREAK=exit BUFFER=@packed`);
/// hookprof record decodes the dump: calls.c's counts exact from a buffer that holds it all,
/// and from a 4 KiB flight recorder kept + written over = made, on every board.
#[test]
fn packed_ram_buffers_dumped_by_gdb_on_every_board() {
    if !have_baremetal_tools() || !have_tool("gdb-multiarch", &["--version"], "gdb-multiarch") {
        return;
    }
    for (board, board_variables) in BOARDS {
        for ring in [false, true] {
            let what = format!(
                "calls.c on {board} {} HOOKS=packed{}, dumped by gdb",
                board_variables.join(" "),
                if ring {
                    " PACKED_RING=1 PACKED_BYTES=4096"
                } else {
                    ""
                }
            );
            let dir = tempfile::tempdir().unwrap();
            let project = copy_baremetal_example(dir.path(), board);
            let mut variables = vec![
                "HOOKS=packed".to_string(),
                "BREAK=exit".to_string(),
                "BUFFER=@packed".to_string(),
                format!("APP={}", program_source("calls.c").display()),
                format!("HOOKCC_FLAGS=--trace {SOURCE_PLACEMENT}"),
            ];
            variables.extend(board_variables.iter().map(|v| v.to_string()));
            if ring {
                variables.push("PACKED_RING=1".into());
                variables.push("PACKED_BYTES=4096".into());
            }
            let out = make_baremetal(&project, "gdb-dump", &variables);
            let output = said(&out);
            assert!(
                out.status.success(),
                "{what}: make gdb-dump failed\n{output}"
            );
            let trace = project.join("firmware.hktrace");
            let (stderr, summary) = record_dump(
                &project.join("@packed.bin"),
                &project.join("firmware.elf"),
                &trace,
                &what,
            );
            assert!(
                summary.contains("end of stream") && !stderr.contains("warning"),
                "{what}:\n{stderr}"
            );
            let kept = number_after(&summary, "bytes, ");
            let made = number_after(&summary, "the firmware made ");
            if ring {
                let overwritten = number_after(&summary, "a flight recorder: ");
                assert!(overwritten > 0, "{what}: {summary}");
                assert_eq!(kept + overwritten, made, "{what}: {summary}");
            } else {
                assert_eq!(kept, made, "{what}: {summary}");
                let counts: std::collections::BTreeMap<String, u64> = call_counts(
                    &trace,
                    &["--exe", project.join("firmware.elf").to_str().unwrap()],
                );
                let expected: std::collections::BTreeMap<String, u64> = CALLS_C
                    .into_iter()
                    .map(|(f, n)| (f.to_string(), n))
                    .collect();
                assert_eq!(counts, expected, "{what}");
            }
        }
    }
}
