//! `hookprof top --gdb` on the FreeRTOS example (docs/baremetal.md, "Watching the stream
//! live"): `make top HOOKS=stream APP=stream_app.c` boots the firmware under qemu and watches
//! its stream through qemu's gdb stub, driven in tmux (`send-keys`, `capture-pane`). The view
//! shows stream_app.c's functions and its three tasks with their open functions, no loss, sorts
//! by calls on `c`, and quits on `q` (and `make top` stops qemu then).
//!
//! Needs what tests/tests/baremetal.rs needs (scripts/setup.sh), and tmux.

use hookcc_tests::tmux::{pane_showing, start_view, tmux, wait_until_quit, TmuxGuard};
use hookcc_tests::*;

/// The rows of the functions table of a `top` screen.
fn function_rows(pane: &str) -> Vec<&str> {
    pane.lines()
        .skip_while(|l| !l.contains("function"))
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .collect()
}

#[test]
fn top_watches_the_freertos_stream_through_qemus_gdb_stub_in_tmux() {
    if !have_baremetal_tools() || !have_tool("tmux", &["-V"], "tmux") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let project = copy_baremetal_example(dir.path(), "freertos");
    let variables = [
        "HOOKS=stream".to_string(),
        "APP=stream_app.c".to_string(),
        format!("HOOKCC_FLAGS=--trace {SOURCE_PLACEMENT}"),
    ];
    // Built first, where a failure shows make's output.
    let out = make_baremetal(&project, "firmware.elf", &variables);
    assert!(
        out.status.success(),
        "make firmware.elf failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    // Without sleep=off, idle time passes as on the wall clock: the firmware's 60 s of ticks
    // outlast the test. TOP_TIMEOUT bounds qemu if the view never quits.
    let command = format!(
        "cd {} && env PATH={}:\"$PATH\" HOOKCC_CACHE_DIR={} make -s top {} HOOKCC_SCRIPTS={} \
         HOOKPROF={} GDB_PORT={} TOP_TIMEOUT=120 TOP_FLAGS='--interval 300ms --windows 4 --rows 60'",
        project.display(),
        target_dir().display(),
        target_dir().join("hookcc-test-cache").display(),
        variables
            .iter()
            .map(|v| format!("'{v}'"))
            .collect::<Vec<_>>()
            .join(" "),
        workspace_root().join("scripts").display(),
        tool("hookprof").display(),
        free_port()
    );
    let tmux_server = format!("hookcc-top-gdb-test-{}", std::process::id());
    let _tmux = TmuxGuard(tmux_server.clone());
    start_view(&tmux_server, (120, 90), &command);
    // The producer's and the worker's rounds are 10 ticks apart: a window has them all.
    let pane = pane_showing(&tmux_server, "checksum");
    let pane = if ["produce", "consume", "work"]
        .iter()
        .all(|f| function_rows(&pane).iter().any(|r| r.ends_with(f)))
    {
        pane
    } else {
        std::thread::sleep(std::time::Duration::from_secs(1));
        pane_showing(&tmux_server, "checksum")
    };
    assert!(
        pane.contains("hookprof top: firmware.elf through 127.0.0.1:")
            && pane.contains("sorted by self time")
            && pane.contains("lost 0 "),
        "{pane}"
    );
    for function in ["checksum", "produce", "consume", "work"] {
        assert!(
            function_rows(&pane).iter().any(|r| r.ends_with(function)),
            "no row of {function}:\n{pane}"
        );
    }
    // Each task's open functions, its own function outermost: blocked in the kernel between
    // rounds, or running.
    for task in ["producer", "consumer", "worker"] {
        assert!(
            pane.lines()
                .any(|l| l.trim_start().starts_with(task) && l.contains(&format!(": {task}"))),
            "no open functions of the task {task}:\n{pane}"
        );
    }
    tmux(&tmux_server, &["send-keys", "-t", "top", "c"]);
    let pane = pane_showing(&tmux_server, "sorted by calls");
    // Sorted by calls a second: none below is larger than one above.
    let calls: Vec<f64> = function_rows(&pane)
        .iter()
        // The columns are fixed: self% (6), self/s, total/s, calls/s (10 each).
        .filter_map(|r| r.get(29..39)?.trim().parse().ok())
        .collect();
    assert!(
        calls.len() > 3 && calls.windows(2).all(|w| w[0] >= w[1]),
        "{pane}"
    );
    tmux(&tmux_server, &["send-keys", "-t", "top", "q"]);
    // make top waits for qemu, which it stops when the view quits: the session ends only
    // when both have.
    wait_until_quit(&tmux_server, "top --gdb (or qemu after it)");
}
