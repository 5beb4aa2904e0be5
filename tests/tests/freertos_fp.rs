//! Floating point under interrupts on the hard-float Cortex-M boards (issue 38, item 3;
//! docs/baremetal.md, "FreeRTOS"): examples/baremetal/freertos/fp_app.c on FreeRTOS's
//! GCC/ARM_CM4F port, qemu's mps2-an386 (Cortex-M4F) and mps2-an500 (Cortex-M7), with the
//! native trace. Two time-sliced tasks compute fp_series() while a timer interrupt, more urgent
//! than anything the kernel masks, computes irq_fp() every 331 clocks, its hooks in the
//! interrupt: every result of the tasks and of the handler is the one main computed before,
//! bit for bit (the core's lazy stacking of s0-s15, the port's s16-s31); the interrupts came
//! with the interrupted code's FP state still to be saved (FPCCR's LSPACT); and the trace is
//! exact: each task's fp_series calls, the handler's calls summed over the tasks they
//! interrupted, every thread's entries and exits matched.
//!
//! Needs what tests/tests/baremetal.rs needs (scripts/setup.sh): qemu-system-arm,
//! arm-none-eabi-gcc, picolibc, make.

use std::collections::BTreeMap;

use hookcc_tests::*;

/// The number after `key ` in fp_app.c's line that starts with `prefix`.
fn printed(what: &str, stdout: &str, prefix: &str, key: &str) -> u64 {
    let line = stdout
        .lines()
        .find(|l| l.starts_with(prefix))
        .unwrap_or_else(|| panic!("{what}: no line {prefix:?} in\n{stdout}"));
    let fields: Vec<&str> = line.split(' ').collect();
    let at = fields
        .iter()
        .position(|f| *f == key)
        .unwrap_or_else(|| panic!("{what}: no {key} in {line:?}"));
    fields[at + 1].parse().expect(line)
}

fn fp_tasks_under_interrupts(machine: &str) {
    let what = format!("fp_app.c on cortex-m4f MACHINE={machine}, --trace");
    let dir = tempfile::tempdir().unwrap();
    let project = copy_baremetal_example(dir.path(), "freertos");
    let variables = [
        "BOARD=cortex-m4f".to_string(),
        format!("MACHINE={machine}"),
        "APP=fp_app.c".to_string(),
        "HOOKS=trace".to_string(),
        format!("HOOKCC_FLAGS=--trace {SOURCE_PLACEMENT}"),
    ];
    let out = make_baremetal(&project, "run", &variables);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{what}: make run failed with {} (exit status 1: a result was not exact)\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        printed(&what, &stdout, "fp mismatches", "mismatches"),
        0,
        "{what}:\n{stdout}"
    );
    let irq_calls = printed(&what, &stdout, "irq calls", "calls");
    let during_fp = printed(&what, &stdout, "irq calls", "during_fp");
    assert!(irq_calls >= 300, "{what}: only {irq_calls} interrupts");
    assert!(
        during_fp >= irq_calls / 2,
        "{what}: {during_fp} of {irq_calls} interrupts came with FP state to save"
    );
    eprintln!("{what}: {irq_calls} interrupts, {during_fp} with FP state to save, all exact");

    // "count TASK FUNCTION N"
    let mut expected = BTreeMap::new();
    for line in stdout.lines() {
        if let Some(rest) = line.strip_prefix("count ") {
            let fields: Vec<&str> = rest.split(' ').collect();
            expected.insert(
                (fields[0].to_string(), fields[1].to_string()),
                fields[2].parse::<u64>().expect(line),
            );
        }
    }
    assert_eq!(expected.len(), 4, "{what}: the program's counts\n{stdout}");

    let trace = project.join("firmware.hktrace");
    let elf = project.join("firmware.elf");
    let (names, rows) = per_task_report(&what, &trace, &elf);
    let mut traced = BTreeMap::new();
    let mut irq_work_in = BTreeMap::new();
    let (mut irq_work, mut irq_fp) = (0, 0);
    for row in rows {
        let thread = row.thread.as_ref().expect("a thread column");
        let name = names
            .get(thread)
            .unwrap_or_else(|| panic!("{what}: thread {thread} of the report has no name"))
            .clone();
        match row.function.as_str() {
            "fp_series" => {
                traced.insert((name, row.function.clone()), row.calls);
            }
            "irq_work" => {
                irq_work += row.calls;
                irq_work_in.insert(name, row.calls);
            }
            "irq_fp" => {
                irq_fp += row.calls;
                if name == "main" {
                    traced.insert((name, row.function.clone()), row.calls);
                }
            }
            _ => {}
        }
    }
    // main's irq_fp: its own 8 and any interrupt that came before the scheduler started.
    let main_irq_fp = expected[&("main".to_string(), "irq_fp".to_string())];
    let main_irq_work = irq_work_in.get("main").copied().unwrap_or(0);
    traced.insert(
        ("main".to_string(), "irq_fp".to_string()),
        traced[&("main".to_string(), "irq_fp".to_string())] - main_irq_work,
    );
    assert_eq!(
        traced, expected,
        "{what}: calls per task, traced vs counted"
    );
    assert_eq!(irq_work, irq_calls, "{what}: the handler's calls, traced");
    assert_eq!(
        irq_fp,
        irq_calls + main_irq_fp,
        "{what}: irq_fp's calls, traced"
    );
    for task in ["fpa", "fpb"] {
        assert!(
            irq_work_in.get(task).is_some_and(|n| *n > 0),
            "{what}: no interrupt in task {task}: {irq_work_in:?}"
        );
    }
}

/// fp_app.c on the Cortex-M4F and the Cortex-M7: see the module's comment.
#[test]
fn an_interrupt_during_floating_point_leaves_the_results_and_the_trace_exact() {
    if !have_baremetal_tools() {
        return;
    }
    for machine in ["mps2-an386", "mps2-an500"] {
        fp_tasks_under_interrupts(machine);
    }
}
