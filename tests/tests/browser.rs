//! The views in the viewers they are for, driven like a user would (issue 12): `hookprof
//! speedscope` output and `hookprof timeline`'s Chrome JSON opened in speedscope's web app (its npm package, tests/browser) by
//! headless Chromium (Debian's). scripts/setup.sh installs both; tests/browser/speedscope.js
//! serves the app, loads the file, switches to the Sandwich view and reads the page.
//! The screenshot is kept in `target/test-artifacts/`.

use std::path::Path;
use std::process::Command;

use hookcc_tests::*;

/// A time as speedscope prints it ("41.13µs", "460.00ns", "1.20ms") in nanoseconds.
fn nanoseconds(text: &str) -> f64 {
    let text = text.split_whitespace().next().unwrap_or(text);
    let units = [
        ("ns", 1.0),
        ("µs", 1e3),
        ("us", 1e3),
        ("ms", 1e6),
        ("s", 1e9),
    ];
    for (unit, scale) in units {
        if let Some(number) = text.strip_suffix(unit) {
            return number.parse::<f64>().unwrap_or_else(|_| panic!("{text:?}")) * scale;
        }
    }
    panic!("not a time: {text:?}")
}

/// A program built traced and run: its trace and the report's rows (the reference times).
fn calls_traced(dir: &Path) -> (std::path::PathBuf, Vec<Row>) {
    let program = build_traced(dir, "calls", &["calls.c"], &["-O1"], false);
    let (trace, _) = run_traced(dir, &program, &[]);
    let report = run_ok(hookprof().arg("report").arg(&trace).arg("--format=csv"));
    let rows = parse_report_csv(&String::from_utf8_lossy(&report.stdout));
    (trace, rows)
}

/// Whether speedscope's app and Chromium are here (in CI they must be).
fn have_speedscope() -> bool {
    let browser = workspace_root().join("tests/browser");
    if !have_tool("node", &["--version"], "nodejs")
        || !have_tool("chromium", &["--version"], "chromium")
    {
        return false;
    }
    let app = browser.join("node_modules/speedscope/dist/release/index.html");
    if !app.exists() {
        assert!(
            !in_ci(),
            "{} is missing: scripts/setup.sh runs npm ci in tests/browser",
            app.display()
        );
        eprintln!("skipping: run scripts/setup.sh (npm ci in tests/browser)");
        return false;
    }
    true
}

/// Opens `profile` in speedscope (tests/browser/speedscope.js), keeps the screenshot as
/// `target/test-artifacts/NAME.png`, and returns the page's title and text; the page had no
/// error.
fn open_in_speedscope(profile: &Path, name: &str) -> (String, String) {
    let artifacts = target_dir().join("test-artifacts");
    std::fs::create_dir_all(&artifacts).unwrap();
    let screenshot = artifacts.join(format!("{name}.png"));
    let _ = std::fs::remove_file(&screenshot);
    let out = run_ok(
        Command::new("node")
            .arg(workspace_root().join("tests/browser/speedscope.js"))
            .arg(profile)
            .arg(&screenshot)
            .arg(which("chromium")),
    );
    let page: serde_json::Value =
        serde_json::from_slice(&out.stdout).expect("speedscope.js prints one JSON line");
    assert_eq!(page["errors"], serde_json::json!([]), "{page}");
    let png = std::fs::read(&screenshot).unwrap();
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n") && png.len() > 1000);
    (
        page["title"].as_str().unwrap_or_default().to_string(),
        page["text"].as_str().unwrap().to_string(),
    )
}

/// The Sandwich table on the page has each of calls.c's functions, with the report's total
/// and self times.
fn check_sandwich(text: &str, rows: &[Row]) {
    // After its header, three lines per function: total, self, name.
    let table = text
        .split_once("Total\tSelf\tSymbol Name\n")
        .unwrap_or_else(|| panic!("no Sandwich table:\n{text}"))
        .1;
    let lines: Vec<&str> = table.lines().map(str::trim).collect();
    assert_eq!(lines.len(), 3 * CALLS_C.len(), "{table}");
    for (function, _) in CALLS_C {
        // speedscope shows a trace event's args after its name: `fib {"address":"0x…"}`.
        let at = lines
            .iter()
            .position(|l| *l == function || l.starts_with(&format!("{function} {{\"address\":")))
            .unwrap_or_else(|| panic!("{function} is not on the page:\n{table}"));
        let (total, own) = (nanoseconds(lines[at - 2]), nanoseconds(lines[at - 1]));
        let row = rows.iter().find(|r| r.function == function).unwrap();
        // speedscope prints 4 significant digits, and sums event times the file gives in
        // whole ns (the report rounds each total once): 1 ns per call either way.
        let slack = row.calls as f64;
        let close =
            |shown: f64, reported: f64| (shown - reported).abs() <= reported * 0.005 + slack;
        assert!(
            close(total, row.inclusive_ns),
            "{function}: total {total} vs {row:?}"
        );
        assert!(
            close(own, row.exclusive_ns),
            "{function}: self {own} vs {row:?}"
        );
    }
}

#[test]
fn speedscope_in_chromium_shows_every_function_with_the_reports_times() {
    if !have_speedscope() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (trace, rows) = calls_traced(dir.path());
    let profile = dir.path().join("calls.speedscope.json");
    run_ok(
        hookprof()
            .arg("speedscope")
            .arg(&trace)
            .arg("-o")
            .arg(&profile),
    );
    let (title, text) = open_in_speedscope(&profile, "speedscope-calls");
    assert!(title.contains("calls (hookprof)"), "{title}");
    check_sandwich(&text, &rows);
}

/// The timeline's Chrome trace-event JSON, which speedscope imports too (its Chrome
/// importer: B/E events per thread, `M` events naming them).
#[test]
fn timeline_json_in_chromium_shows_every_function_with_the_reports_times() {
    if !have_speedscope() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (trace, rows) = calls_traced(dir.path());
    let profile = dir.path().join("calls.json");
    run_ok(
        hookprof()
            .arg("timeline")
            .arg(&trace)
            .arg("-o")
            .arg(&profile),
    );
    let (_, text) = open_in_speedscope(&profile, "timeline-calls");
    check_sandwich(&text, &rows);
}

/// The absolute path of `program` on PATH (Chromium is started by the script, not by us).
fn which(program: &str) -> String {
    std::env::var_os("PATH")
        .and_then(|paths| {
            std::env::split_paths(&paths)
                .map(|d| d.join(program))
                .find(|p| Path::new(p).is_file())
        })
        .unwrap_or_else(|| panic!("{program} is not on PATH"))
        .to_string_lossy()
        .into_owned()
}
