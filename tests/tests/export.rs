//! `hookprof export --format=parquet` read by DuckDB (docs/export.md): two builds of
//! tests/programs/family.c, five processes each (a parent and four forked children), exported
//! as two runs of one dataset; every SQL question docs/export.md shows is run by DuckDB's own
//! Python package and its answers compared with `hookprof report` on the same traces.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use hookcc_tests::*;

/// DuckDB's Python package as scripts/setup.sh unpacks it, or `None` outside CI without it.
fn duckdb_available() -> bool {
    let package = workspace_root().join("tests/duckdb/python/duckdb");
    if package.is_dir() {
        return true;
    }
    assert!(
        !in_ci(),
        "{}: missing: scripts/setup.sh unpacks DuckDB's Python package there",
        package.display()
    );
    eprintln!("skipping: run scripts/setup.sh (DuckDB's Python package)");
    false
}

/// The rows of `sql`, each a JSON array.
fn query(sql: &str) -> Vec<Vec<serde_json::Value>> {
    let out = run_ok(
        Command::new("python3")
            .arg(workspace_root().join("tests/duckdb/query.py"))
            .arg(sql),
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l}: {e}")))
        .collect()
}

/// docs/export.md's SQL blocks by their `-- question: NAME` line, DATASET replaced.
fn questions(dataset: &Path) -> BTreeMap<String, String> {
    let doc = std::fs::read_to_string(workspace_root().join("docs/export.md")).unwrap();
    let mut found = BTreeMap::new();
    for block in doc.split("```sql\n").skip(1) {
        let sql = block.split("```").next().unwrap();
        if let Some(name) = sql
            .lines()
            .next()
            .and_then(|l| l.strip_prefix("-- question: "))
        {
            found.insert(
                name.to_string(),
                sql.replace("DATASET", &dataset.display().to_string()),
            );
        }
    }
    found
}

/// Runs family built with `flags` in its own directory: its five traces.
fn family_traces(dir: &Path, flags: &[&str]) -> Vec<PathBuf> {
    std::fs::create_dir_all(dir).unwrap();
    let program = build_traced(dir, "family", &["family.c"], flags, false);
    run_traced(dir, &program, &[]);
    let traces = traces_in(dir);
    assert_eq!(traces.len(), 5, "{traces:?}");
    traces
}

/// `hookprof report` of each trace, summed by function: (calls, exclusive ns).
fn reported(traces: &[PathBuf]) -> BTreeMap<String, (u64, u64)> {
    let mut sums = BTreeMap::new();
    for t in traces {
        let out = run_ok(hookprof().arg("report").arg(t).arg("--format=csv"));
        for row in parse_report_csv(&String::from_utf8_lossy(&out.stdout)) {
            let e = sums.entry(row.function.clone()).or_insert((0, 0));
            e.0 += row.calls;
            e.1 += row.exclusive_ns as u64;
        }
    }
    sums
}

/// The dataset of docs/export.md's questions under `dir`: two builds of family.c (five
/// processes each), exported as run `a` on host `alpha` and `b` on `beta`. Returns each run's
/// traces and the dataset's directory.
fn two_builds(dir: &Path) -> (Vec<PathBuf>, Vec<PathBuf>, PathBuf) {
    let a = family_traces(&dir.join("a"), &["-O1", "-g"]);
    let b = family_traces(&dir.join("b"), &["-O1", "-g", "-DCHILD_SPINS=400000"]);
    let dataset = dir.join("dataset");
    for (run, host, traces) in [("a", "alpha", &a), ("b", "beta", &b)] {
        let out = run_ok(
            hookprof()
                .args(["export", "--run", run, "--host", host, "-o"])
                .arg(&dataset)
                .args(traces.iter()),
        );
        assert_eq!(String::from_utf8_lossy(&out.stdout), format!("run={run}\n"));
    }
    (a, b, dataset)
}

fn int(v: &serde_json::Value) -> u64 {
    v.as_u64()
        .or_else(|| v.as_f64().map(|f| f as u64))
        .unwrap_or_else(|| panic!("{v} is not a number"))
}

#[test]
fn duckdb_answers_the_documented_questions_with_the_reports_counts() {
    if !duckdb_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (a, b, dataset) = two_builds(dir.path());
    // Exporting a run again never overwrites it.
    run_fails(
        hookprof()
            .args(["export", "--run", "a", "-o"])
            .arg(&dataset)
            .arg(&a[0]),
        "already exported",
    );

    let (report_a, report_b) = (reported(&a), reported(&b));
    let mut both = report_a.clone();
    for (f, (calls, exclusive)) in &report_b {
        let e = both.entry(f.clone()).or_insert((0, 0));
        e.0 += calls;
        e.1 += exclusive;
    }
    let q = questions(&dataset);
    assert_eq!(
        q.keys().map(String::as_str).collect::<Vec<_>>(),
        [
            "percentiles per host",
            "slowest calls",
            "top functions",
            "what changed"
        ]
    );

    // Top functions: every function of both runs, with the reports' calls; exclusive times
    // summed per call (each rounded to the ns) within a nanosecond a call of the reports'.
    let top = query(&q["top functions"]);
    assert_eq!(top.len(), both.len(), "{top:?}");
    for row in &top {
        let function = row[0].as_str().unwrap();
        let (calls, exclusive) = both[function];
        assert_eq!(int(&row[1]), calls, "{function}");
        assert!(
            int(&row[2]).abs_diff(exclusive) <= calls,
            "{function}: {} ns in DuckDB, {exclusive} in the reports",
            int(&row[2])
        );
    }
    let exclusive_order: Vec<u64> = top.iter().map(|r| int(&r[2])).collect();
    assert!(exclusive_order.windows(2).all(|w| w[0] >= w[1]), "{top:?}");

    // Percentiles per host: child_work's calls of each run (1 + 2 + 3 + 4), p50 <= p99.
    let hosts = query(&q["percentiles per host"]);
    assert_eq!(hosts.len(), 2, "{hosts:?}");
    for (row, host) in hosts.iter().zip(["alpha", "beta"]) {
        assert_eq!(row[0], host);
        assert_eq!(int(&row[1]), 10, "{row:?}");
        assert!(
            row[2].as_f64().unwrap() <= row[3].as_f64().unwrap(),
            "{row:?}"
        );
    }

    // What changed: the functions table's calls and exclusive times are the reports', run by
    // run (both sum ticks, then convert).
    let changed = query(&q["what changed"]);
    assert_eq!(changed.len(), both.len(), "{changed:?}");
    for row in &changed {
        let function = row[0].as_str().unwrap();
        for (report, calls, exclusive) in
            [(&report_a, &row[1], &row[3]), (&report_b, &row[2], &row[4])]
        {
            let (c, e) = report[function];
            assert_eq!(int(calls), c, "{function}");
            assert!(
                int(exclusive).abs_diff(e) <= 1,
                "{function}: {exclusive} vs {e}"
            );
        }
    }

    // Slowest calls: the parents are the program's callers.
    let slowest = query(&q["slowest calls"]);
    assert_eq!(slowest.len(), 5, "{slowest:?}");
    let durations: Vec<u64> = slowest.iter().map(|r| int(&r[3])).collect();
    assert!(durations.windows(2).all(|w| w[0] >= w[1]), "{slowest:?}");
    // Every call's parent, by function, over the whole dataset (the call graph of family.c:
    // main calls parent_work and run_child, both work functions call spin; a child's calls
    // start at its fork, at depth 0).
    let edges = query(
        &q["slowest calls"]
            .replace(
                "SELECT c.run, c.pid, c.function, c.duration_ns, p.function AS parent",
                "SELECT DISTINCT c.function, p.function AS parent, c.depth",
            )
            .replace("ORDER BY c.duration_ns DESC\nLIMIT 5;", "ORDER BY ALL;"),
    );
    let edges: Vec<(String, String, u64)> = edges
        .iter()
        .map(|r| {
            (
                r[0].as_str().unwrap().to_string(),
                r[1].as_str().unwrap_or("-").to_string(),
                int(&r[2]),
            )
        })
        .collect();
    let expected: Vec<(String, String, u64)> = [
        ("child_work", "-", 0),
        ("main", "-", 0),
        ("parent_work", "main", 1),
        ("run_child", "main", 1),
        ("spin", "child_work", 1),
        ("spin", "parent_work", 2),
    ]
    .iter()
    .map(|(f, p, d)| (f.to_string(), p.to_string(), *d))
    .collect();
    assert_eq!(edges, expected);

    // The source lines DWARF gives.
    let lines = query(&format!(
        "SELECT DISTINCT file, line FROM read_parquet('{}/functions/*/*.parquet') WHERE function = 'spin'",
        dataset.display()
    ));
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(
        lines[0][0].as_str().unwrap().ends_with("family.c"),
        "{lines:?}"
    );
}

/// The rows of the Parquet file `path`: each row's columns by name, as text (`null` for null).
fn parquet_rows(path: &Path) -> Rows {
    use parquet::file::reader::SerializedFileReader;
    use parquet::record::Field;
    let file = std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let reader = SerializedFileReader::new(file).unwrap();
    reader
        .into_iter()
        .map(|row| {
            row.unwrap()
                .get_column_iter()
                .map(|(name, field)| {
                    let value = match field {
                        Field::Str(s) => s.clone(),
                        Field::Null => "null".to_string(),
                        other => other.to_string(),
                    };
                    (name.clone(), value)
                })
                .collect()
        })
        .collect()
}

/// Rows of a Parquet table, each its columns by name, as text.
type Rows = Vec<BTreeMap<String, String>>;

/// Exports `trace` as run `r` into `dataset`: the `calls` and `functions` rows, and stderr.
fn export_one(dataset: &Path, trace: &Path) -> (Rows, Rows, String) {
    let out = run_ok(
        hookprof()
            .args(["export", "--run", "r", "-o"])
            .arg(dataset)
            .arg(trace),
    );
    let table = |name: &str| {
        let dir = dataset.join(name).join("run=r");
        let files: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        assert_eq!(files.len(), 1, "{files:?}");
        parquet_rows(&files[0])
    };
    (
        table("calls"),
        table("functions"),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Calls per function: the `functions` table's sums, and the `calls` table's rows.
fn exported_calls(
    calls: &[BTreeMap<String, String>],
    functions: &[BTreeMap<String, String>],
) -> (BTreeMap<String, u64>, BTreeMap<String, u64>) {
    let mut summed = BTreeMap::new();
    for f in functions {
        *summed.entry(f["function"].clone()).or_default() += f["calls"].parse::<u64>().unwrap();
    }
    let mut rows = BTreeMap::new();
    for c in calls {
        *rows.entry(c["function"].clone()).or_default() += 1;
    }
    (summed, rows)
}

#[test]
fn export_tells_apart_the_functions_the_report_tells_apart() {
    // Before: two `static int helper()` of two files, built without -g, were two rows named
    // `helper` with `file` null, which a query grouping by function added up (3 + 5 = 8); two
    // functions whose names are not UTF-8 and read alike (`caf\xe9`, `caf\xe8`) the same
    // (issue 37 item 10). The report names them `helper (static_one.c)`, `caf�@0x…`.
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let statics = build_traced(
        d,
        "statics",
        &["static_one.c", "static_two.c", "static_main.c"],
        &["-O1"],
        false,
    );
    let non_utf8 = build_traced(d, "non_utf8", &["non_utf8_names.c"], &["-O1"], false);
    for (program, expected) in [
        (
            &statics,
            &[("helper (static_one.c)", 3), ("helper (static_two.c)", 5)][..],
        ),
        (&non_utf8, &[("caf\u{FFFD}@", 4), ("caf\u{FFFD}@", 2)][..]),
    ] {
        let (trace, _) = run_traced(d, program, &[]);
        let report = call_counts(&trace, &[]);
        let dataset = d.join(format!(
            "dataset-{}",
            program.file_name().unwrap().to_string_lossy()
        ));
        let (calls, functions, _) = export_one(&dataset, &trace);
        let (summed, rows) = exported_calls(&calls, &functions);
        assert_eq!(summed, report, "the functions table, by the report's names");
        assert_eq!(rows, report, "the calls table, by the report's names");
        for &(prefix, count) in expected {
            assert!(
                report
                    .iter()
                    .any(|(name, &calls)| name.starts_with(prefix) && calls == count),
                "{prefix}: {report:?}"
            );
        }
        std::fs::remove_file(&trace).unwrap();
    }
}

#[test]
fn export_of_a_min_duration_trace_has_its_long_calls_and_says_so() {
    // Before: HOOKCC_MIN_DURATION=20ns left every call in the trees and the long ones in the
    // records, and export read only the trees: 0 `calls` rows, without a word (issue 37
    // item 10). Now `calls` has the calls the trace kept, `functions` every call.
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let program = build_traced(d, "calls", &["calls.c"], &["-O1"], false);
    let trace = d.join("calls.hktrace");
    run_ok(
        Command::new(&program)
            .current_dir(d)
            .env("HOOKCC_OUTPUT", &trace)
            .env("HOOKCC_MIN_DURATION", "1us")
            .env("HOOKCC_SWITCHES", "0")
            .env("HOOKCC_SAMPLE_HZ", "0"),
    );
    let report = call_counts(&trace, &[]);
    let (calls, functions, stderr) = export_one(&d.join("dataset"), &trace);
    let (summed, _) = exported_calls(&calls, &functions);
    assert_eq!(summed, report, "functions: every call");
    let all: u64 = report.values().sum();
    assert!(
        !calls.is_empty() && (calls.len() as u64) < all,
        "{} calls rows of {all} calls",
        calls.len()
    );
    assert!(
        stderr.contains(&format!(
            "the trace keeps the records of its long calls only (HOOKCC_MIN_DURATION): `calls` \
             has the {} calls it kept",
            calls.len()
        )),
        "{stderr}"
    );
}

#[test]
fn export_of_a_throttled_trace_counts_every_call_in_its_thread_and_says_so() {
    // Before: a throttled function's counted calls (issue 35's throttle, on by default) were
    // in the report's calls and in no table: DuckDB summed 5 % of `tiny`'s calls. Now each
    // thread's COUNTED chunk gives its calls, and `functions` has them, thread by thread.
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let program = build_traced(d, "throttle", &["throttle.c"], &["-O2", "-pthread"], false);
    let trace = d.join("throttle.hktrace");
    run_ok(
        Command::new(&program)
            .current_dir(d)
            .arg("3")
            .env("HOOKCC_OUTPUT", &trace)
            .env("HOOKCC_BUFFER_RECORDS", "4096"),
    );
    let report = call_counts(&trace, &[]);
    assert_eq!(report["tiny"], 4 * 200 * 100, "{report:?}");
    let (calls, functions, stderr) = export_one(&d.join("dataset"), &trace);
    let (summed, rows) = exported_calls(&calls, &functions);
    assert_eq!(summed, report, "functions: every call");
    assert!(
        rows["tiny"] < report["tiny"] / 2,
        "calls: the timed ones: {rows:?}"
    );
    // Every thread made 200 rounds of 100 tiny calls.
    let tiny: Vec<u64> = functions
        .iter()
        .filter(|f| f["function"] == "tiny")
        .map(|f| f["calls"].parse().unwrap())
        .collect();
    assert_eq!(tiny, [20_000; 4], "{functions:?}");
    let counted = report["tiny"] - rows["tiny"];
    assert!(
        stderr.contains(&format!(
            "{counted} calls of throttled functions were counted, not recorded: `functions` \
             counts them"
        )),
        "{stderr}"
    );
}

/// PySpark as scripts/setup.sh installs it, and a Java runtime, or `None` outside CI without
/// them.
fn spark_available() -> bool {
    let package = workspace_root().join("tests/spark/python/pyspark");
    if !package.is_dir() {
        assert!(
            !in_ci(),
            "{}: missing: scripts/setup.sh installs PySpark there",
            package.display()
        );
        eprintln!("skipping: run scripts/setup.sh (PySpark)");
        return false;
    }
    have_tool("java", &["-version"], "openjdk-17-jre-headless")
}

/// docs/export.md's SQL blocks whose first line is `-- PREFIX: NAME` (`prefix` is `-- PREFIX: `),
/// `placeholder` replaced by `dir`, in the document's order.
fn sql_blocks(prefix: &str, placeholder: &str, dir: &Path) -> Vec<(String, String)> {
    let doc = std::fs::read_to_string(workspace_root().join("docs/export.md")).unwrap();
    doc.split("```sql\n")
        .skip(1)
        .filter_map(|block| {
            let sql = block.split("```").next().unwrap();
            let name = sql.lines().next()?.strip_prefix(prefix)?;
            Some((
                name.to_string(),
                sql.replace(placeholder, &dir.display().to_string()),
            ))
        })
        .collect()
}

/// The fleet of docs/export.md's worked example under `dir`: tests/programs/fleet.c built as
/// v1 and v2, run twice on each of the hosts alpha and beta (beta sets FLEET_TABLE, which v2
/// reads), each host's runs of a build exported as run `BUILD@HOST`. Returns the traces by
/// (host, build) and the dataset's directory.
fn fleet(dir: &Path) -> (BTreeMap<(String, String), Vec<PathBuf>>, PathBuf) {
    let dataset = dir.join("fleet");
    let mut traces = BTreeMap::new();
    for (build, flags) in [("v1", &["-O1"][..]), ("v2", &["-O1", "-DV2"][..])] {
        let build_dir = dir.join(build);
        std::fs::create_dir_all(&build_dir).unwrap();
        let program = build_traced(&build_dir, "fleet", &["fleet.c"], flags, false);
        for host in ["alpha", "beta"] {
            let host_dir = dir.join("traces").join(host).join(build);
            std::fs::create_dir_all(&host_dir).unwrap();
            let mut these = Vec::new();
            for process in 0..2 {
                let trace = host_dir.join(format!("fleet.{process}.hktrace"));
                let mut cmd = Command::new(&program);
                cmd.current_dir(&host_dir)
                    .env("HOOKCC_OUTPUT", &trace)
                    .env("HOOKCC_SWITCHES", "0")
                    .env("HOOKCC_SAMPLE_HZ", "0");
                if host == "beta" {
                    cmd.env("FLEET_TABLE", "40000");
                }
                run_ok(&mut cmd);
                these.push(trace);
            }
            run_ok(
                hookprof()
                    .args([
                        "export",
                        "--run",
                        &format!("{build}@{host}"),
                        "--host",
                        host,
                    ])
                    .arg("-o")
                    .arg(&dataset)
                    .args(&these),
            );
            traces.insert((host.to_string(), build.to_string()), these);
        }
    }
    (traces, dataset)
}

/// The fleet question's rule over `hookprof report`: (host, function) where v2's exclusive
/// time a call is over 1.5 times v1's and the difference over v2's calls over 1 ms.
fn fleet_answer_of_reports(
    traces: &BTreeMap<(String, String), Vec<PathBuf>>,
) -> Vec<(String, String)> {
    let mut slower = Vec::new();
    for host in ["alpha", "beta"] {
        let v1 = reported(&traces[&(host.to_string(), "v1".to_string())]);
        let v2 = reported(&traces[&(host.to_string(), "v2".to_string())]);
        for (function, (calls, exclusive)) in &v2 {
            let Some((old_calls, old_exclusive)) = v1.get(function) else {
                continue;
            };
            let per_call = *exclusive as f64 / *calls as f64;
            let old_per_call = *old_exclusive as f64 / *old_calls as f64;
            if per_call > 1.5 * old_per_call && (per_call - old_per_call) * *calls as f64 > 1e6 {
                slower.push((host.to_string(), function.clone()));
            }
        }
    }
    slower
}

/// Runs `blocks` in one Spark session (tests/spark/query.py): each block's rows by name.
fn spark_query(blocks: &[(String, String)]) -> BTreeMap<String, Vec<Vec<serde_json::Value>>> {
    use std::io::Write;
    let mut child = Command::new("python3")
        .arg(workspace_root().join("tests/spark/query.py"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(serde_json::to_string(blocks).unwrap().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "query.py failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l}: {e}")))
        .collect()
}

/// Two answers are the same: strings and nulls equal, numbers within 10⁻⁹ of each other
/// (relative: Spark and DuckDB interpolate percentiles in doubles of their own).
fn same_rows(spark: &[Vec<serde_json::Value>], duckdb: &[Vec<serde_json::Value>], what: &str) {
    assert_eq!(spark.len(), duckdb.len(), "{what}: {spark:?} vs {duckdb:?}");
    for (s, d) in spark.iter().zip(duckdb) {
        assert_eq!(s.len(), d.len(), "{what}: {s:?} vs {d:?}");
        for (x, y) in s.iter().zip(d) {
            let same = match (x.as_f64(), y.as_f64()) {
                (Some(x), Some(y)) => (x - y).abs() <= 1e-9 * x.abs().max(y.abs()).max(1.0),
                _ => x == y,
            };
            assert!(same, "{what}: Spark {s:?}, DuckDB {d:?}");
        }
    }
}

#[test]
fn spark_answers_the_documented_questions_as_duckdb_and_the_reports_do() {
    if !duckdb_available() || !spark_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (a, b, dataset) = two_builds(dir.path());
    let blocks = sql_blocks("-- spark: ", "DATASET", &dataset);
    let names: Vec<&str> = blocks.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names[0], "tables", "the tables' block comes first");
    let duckdb = questions(&dataset);
    let mut asked: Vec<&str> = names[1..].to_vec();
    asked.sort();
    assert_eq!(
        asked,
        duckdb.keys().map(String::as_str).collect::<Vec<_>>(),
        "a Spark block for every DuckDB question"
    );
    // The fleet's worked example, in the same Spark session (one JVM start).
    let (fleet_traces, fleet_dataset) = fleet(dir.path());
    let fleet_spark = sql_blocks("-- fleet spark: ", "FLEET", &fleet_dataset);
    let fleet_duckdb = sql_blocks("-- fleet question: ", "FLEET", &fleet_dataset);
    assert_eq!(fleet_spark.len(), 2, "{fleet_spark:?}");
    assert_eq!(fleet_duckdb.len(), 1, "{fleet_duckdb:?}");
    let mut all_blocks = blocks.clone();
    all_blocks.extend(
        fleet_spark
            .iter()
            .map(|(n, sql)| (format!("fleet {n}"), sql.clone())),
    );
    let started = std::time::Instant::now();
    let spark = spark_query(&all_blocks);
    eprintln!(
        "Spark: {} blocks on local[2] in {:.1} s",
        all_blocks.len(),
        started.elapsed().as_secs_f64()
    );
    let fleet_name = &fleet_duckdb[0].0;
    let fleet_rows = &spark[&format!("fleet {fleet_name}")];
    same_rows(fleet_rows, &query(&fleet_duckdb[0].1), fleet_name);
    let answer: Vec<(String, String)> = fleet_rows
        .iter()
        .map(|r| {
            (
                r[0].as_str().unwrap().to_string(),
                r[1].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        answer,
        fleet_answer_of_reports(&fleet_traces),
        "{fleet_rows:?}"
    );
    let lookup = fleet_rows
        .iter()
        .find(|r| r[0] == "beta" && r[1] == "lookup")
        .unwrap_or_else(|| panic!("beta's lookup is not slower: {fleet_rows:?}"));
    eprintln!("fleet: {fleet_rows:?}");
    assert!(
        lookup[3].as_f64().unwrap() > 5.0 * lookup[2].as_f64().unwrap(),
        "{lookup:?}"
    );
    for (name, sql) in &duckdb {
        same_rows(&spark[name], &query(sql), name);
    }
    // And the reports': every function's calls and exclusive time over both runs.
    let (report_a, report_b) = (reported(&a), reported(&b));
    let top = &spark["top functions"];
    assert_eq!(top.len(), report_a.len().max(report_b.len()), "{top:?}");
    for row in top {
        let function = row[0].as_str().unwrap();
        let (calls, exclusive) = [&report_a, &report_b]
            .iter()
            .filter_map(|r| r.get(function))
            .fold((0, 0), |(c, e), (rc, re)| (c + rc, e + re));
        assert_eq!(int(&row[1]), calls, "{function}");
        assert!(
            int(&row[2]).abs_diff(exclusive) <= calls,
            "{function}: {} ns in Spark, {exclusive} in the reports",
            int(&row[2])
        );
    }
    // The partition column Spark discovered, and the hosts.
    let hosts = &spark["percentiles per host"];
    assert_eq!(
        hosts.iter().map(|r| r[0].clone()).collect::<Vec<_>>(),
        ["alpha", "beta"]
    );
}
