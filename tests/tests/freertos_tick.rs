//! The FreeRTOS kernel's tick against the trace's clock (issue 38; docs/baremetal.md,
//! "FreeRTOS", "The tick under -icount"): examples/baremetal/freertos/tick_app.c waits 1 000
//! ticks of vTaskDelay in wait_ticks(), and wait_ticks' inclusive time in the trace is
//! 1.00 s ± 1 % by the trace's clock (the board's counter and the frequency its trace
//! announces) — on the Cortex-M3 (mps2-an385), Cortex-M4F (mps2-an386) and RV32 (virt) boards,
//! in a RAM trace written at exit (`make run HOOKS=trace`, qemu's `-icount shift=0` and with
//! `sleep=off`) and streamed while it runs (`make stream HOOKS=stream`, `-icount
//! shift=0,sleep=off` as the docs run it). Before the Cortex-M3 board counted the periods its tick interrupt had missed,
//! the streamed wait took 2.0 s.
//!
//! Needs what tests/tests/baremetal.rs needs (scripts/setup.sh): qemu-system-arm,
//! qemu-system-misc, arm-none-eabi-gcc, riscv64-unknown-elf-gcc, picolibc for both, make.

use hookcc_tests::*;

/// How the firmware is run and its trace taken out.
enum Way {
    /// `make run HOOKS=trace` with this ICOUNT: the RAM trace written at exit.
    Run(&'static str),
    /// `make stream HOOKS=stream`, `-icount shift=0,sleep=off`: read by hookprof record --gdb.
    Stream,
}

/// tick_app.c on `board`, run the `way`: the ticks the kernel counted during the wait, and
/// wait_ticks' calls and inclusive time in the trace.
fn wait_in_trace(board: &str, way: &Way) -> (String, u64, u64, f64) {
    let dir = tempfile::tempdir().unwrap();
    let project = copy_baremetal_example(dir.path(), "freertos");
    let hookcc_flags = format!("HOOKCC_FLAGS=--trace {SOURCE_PLACEMENT}");
    let mut variables = vec![
        format!("BOARD={board}"),
        "APP=tick_app.c".to_string(),
        hookcc_flags,
    ];
    let (target, what) = match way {
        Way::Run(icount) => {
            variables.push("HOOKS=trace".into());
            variables.push(format!("ICOUNT={icount}"));
            (
                "run",
                format!("tick_app.c on {board}, make run ICOUNT={icount}"),
            )
        }
        Way::Stream => {
            variables.push("HOOKS=stream".into());
            variables.push("ICOUNT=-icount shift=0,sleep=off".into());
            variables.push(format!("GDB_PORT={}", free_port()));
            ("stream", format!("tick_app.c on {board}, make stream"))
        }
    };
    let out = make_baremetal(&project, target, &variables);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{what}: make {target} failed with {}\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    // "waited 1000 ticks, the kernel counted N"
    let counted: u64 = stdout
        .lines()
        .find_map(|l| l.strip_prefix("waited 1000 ticks, the kernel counted "))
        .unwrap_or_else(|| panic!("{what}: no count in\n{stdout}"))
        .trim()
        .parse()
        .unwrap();
    let elf = project.join("firmware.elf");
    let (rows, _) = report_csv(
        &project.join("firmware.hktrace"),
        &["--exe", elf.to_str().unwrap()],
    );
    let wait = rows
        .iter()
        .find(|r| r.function == "wait_ticks")
        .unwrap_or_else(|| panic!("{what}: no wait_ticks in the report"));
    (what, counted, wait.calls, wait.inclusive_ns)
}

/// 1 000 ticks of vTaskDelay are 1.00 s ± 1 % by the trace's clock, run and streamed, on the
/// Cortex-M3, Cortex-M4F and RV32 boards; the kernel counted the 1 000 ticks (one more when qemu
/// delivered the last one together with the next: see rtos_board.c).
#[test]
fn a_thousand_ticks_of_vtaskdelay_are_one_second_of_the_trace() {
    if !have_baremetal_tools() {
        return;
    }
    for board in ["cortex-m3", "cortex-m4f", "riscv32"] {
        for way in [
            Way::Run("-icount shift=0"),
            Way::Run("-icount shift=0,sleep=off"),
            Way::Stream,
        ] {
            let (what, counted, calls, inclusive_ns) = wait_in_trace(board, &way);
            assert!(
                (1000..=1001).contains(&counted),
                "{what}: the kernel counted {counted} ticks"
            );
            assert_eq!(calls, 1, "{what}: calls of wait_ticks");
            let seconds = inclusive_ns / 1e9;
            assert!(
                (0.99..=1.01).contains(&seconds),
                "{what}: 1 000 ticks took {seconds:.4} s by the trace's clock"
            );
            eprintln!("{what}: 1 000 ticks took {seconds:.6} s by the trace's clock");
        }
    }
}
