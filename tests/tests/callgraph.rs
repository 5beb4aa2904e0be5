//! `hookprof callgraph`: the Dynamic Call Graph of a traced program whose call structure is the
//! seed's example (thread _TSK2: task → p1 ×1728, p2 ×1727 → child ×3455; prdfxn0 ×4 in child,
//! ×3 in task).

use std::collections::BTreeMap;

use hookcc_tests::*;

/// One section: the function of interest (name, index, excl, calls) with its parent and child
/// lines as (name, excl, "n/total").
#[derive(Debug, Default)]
struct Section {
    index: usize,
    excl: u64,
    calls: u64,
    parents: Vec<(String, u64, String)>,
    children: Vec<(String, u64, String)>,
    spontaneous: bool,
}

/// Parses the sections of the thread titled `thread`.
fn sections(text: &str, thread: &str) -> BTreeMap<String, Section> {
    let start = text
        .find(&format!("Thread: {thread}\t\t\t\n"))
        .expect("thread section");
    let body = &text[start..];
    let body = &body[..body[10..]
        .find("=====\t\t\t\nThread:")
        .map_or(body.len(), |e| e + 10)];
    let mut result = BTreeMap::new();
    for block in body.split("\n\n") {
        let mut section = Section::default();
        let mut name = None;
        for line in block.lines().filter(|l| {
            !l.starts_with("=====") && !l.starts_with("Thread:") && !l.starts_with("index")
        }) {
            let fields: Vec<&str> = line.split('\t').collect();
            let strip = |s: &str| {
                s.rsplit_once(" [")
                    .map_or(s.to_string(), |(n, _)| n.to_string())
            };
            if fields[0].starts_with('[') {
                section.index = fields[0]
                    .trim_matches(|c| c == '[' || c == ']')
                    .parse()
                    .unwrap();
                section.excl = fields[1].parse().unwrap();
                section.calls = fields[2].parse().unwrap();
                name = Some(strip(fields[3]));
            } else if fields.get(2) == Some(&"<spontaneous>") {
                section.spontaneous = true;
            } else if fields.len() == 4 {
                let entry = (
                    strip(fields[3]),
                    fields[1].parse().unwrap(),
                    fields[2].to_string(),
                );
                if name.is_none() {
                    section.parents.push(entry)
                } else {
                    section.children.push(entry)
                }
            }
        }
        if let Some(name) = name {
            result.insert(name, section);
        }
    }
    result
}

#[test]
fn dynamic_call_graph_of_the_seed_example() {
    let dir = tempfile::tempdir().unwrap();
    let program = build_traced(
        dir.path(),
        "callgraph",
        &["callgraph.c"],
        &["-O1", "-pthread"],
        false,
    );
    let (trace, _) = run_traced(dir.path(), &program, &[]);
    let out = run_ok(hookprof().arg("callgraph").arg(&trace));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(
            "=====\t\t\t\nThread: _TSK2\t\t\t\n=====\t\t\t\nindex\texcl_ns\tcalled\tname\n"
        ),
        "{text}"
    );
    let s = sections(&text, "_TSK2");
    assert_eq!(s.len(), 5, "{text}");
    let calls = |f: &str| s[f].calls;
    assert_eq!(
        (
            calls("task"),
            calls("p1"),
            calls("p2"),
            calls("child"),
            calls("prdfxn0")
        ),
        (1, 1728, 1727, 3455, 7)
    );
    assert!(s["task"].spontaneous && s["task"].parents.is_empty());
    let arcs = |list: &[(String, u64, String)]| -> Vec<(String, String)> {
        let mut v: Vec<_> = list
            .iter()
            .map(|(n, _, c)| (n.clone(), c.clone()))
            .collect();
        v.sort();
        v
    };
    let pair = |n: &str, c: &str| (n.to_string(), c.to_string());
    assert_eq!(
        arcs(&s["child"].parents),
        [pair("p1", "1728/3455"), pair("p2", "1727/3455")]
    );
    assert_eq!(arcs(&s["child"].children), [pair("prdfxn0", "4/7")]);
    assert_eq!(
        arcs(&s["task"].children),
        [
            pair("p1", "1728/1728"),
            pair("p2", "1727/1727"),
            pair("prdfxn0", "3/7")
        ]
    );
    assert_eq!(
        arcs(&s["prdfxn0"].parents),
        [pair("child", "4/7"), pair("task", "3/7")]
    );
    // Each function's parent lines split its exclusive time: exactly in ticks, so in ns up to
    // each line's rounding.
    for (name, section) in &s {
        if !section.parents.is_empty() {
            let sum: u64 = section.parents.iter().map(|(_, c, _)| c).sum();
            assert!(
                sum.abs_diff(section.excl) <= section.parents.len() as u64,
                "{name}: parents' times ({sum}) add up to the total ({})",
                section.excl
            );
        }
    }
    // The column holds what its name says: the flat report's exclusive_ns (child and
    // prdfxn0 run in _TSK2 only).
    let csv = run_ok(hookprof().args(["report", "--format", "csv"]).arg(&trace));
    let csv = String::from_utf8_lossy(&csv.stdout);
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let column = header.iter().position(|c| *c == "exclusive_ns").unwrap();
    for f in ["child", "prdfxn0"] {
        let row: Vec<&str> = csv
            .lines()
            .map(|l| l.split(',').collect::<Vec<_>>())
            .find(|r| r[0] == f)
            .unwrap_or_else(|| panic!("no {f} in\n{csv}"));
        let report_ns: u64 = row[column].parse().unwrap();
        assert!(
            report_ns.abs_diff(s[f].excl) <= 1,
            "{f}: call graph {} ns, report {report_ns} ns",
            s[f].excl
        );
    }
    // Indices follow exclusive cycles, descending.
    let mut by_index: Vec<_> = s.values().collect();
    by_index.sort_by_key(|x| x.index);
    assert!(
        by_index.windows(2).all(|w| w[0].excl >= w[1].excl),
        "{text}"
    );
    // The main thread is listed too, with main as its root.
    assert!(
        text.contains("\t\t<spontaneous>\t\n[0]\t") && text.contains("\tmain [0]\n"),
        "{text}"
    );
}
