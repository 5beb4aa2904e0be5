//! IR tests of the pass: each tests/ir/*.ll names its opt arguments on `; RUN-OPT:` lines and
//! its expectations as FileCheck directives; runs `opt-19 -load-pass-plugin … | FileCheck-19`.

use std::io::Write;
use std::process::{Command, Stdio};

use hookcc_tests::*;

#[test]
fn ir_files_pass_filecheck() {
    let plugin = tool("libhookcc_pass.so");
    let dir = workspace_root().join("tests/ir");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.retain(|p| p.extension().is_some_and(|e| e == "ll"));
    files.sort();
    assert!(!files.is_empty(), "no IR tests in {}", dir.display());
    let mut failures = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        let runs: Vec<&str> = text
            .lines()
            .filter_map(|l| l.strip_prefix("; RUN-OPT:"))
            .collect();
        assert!(!runs.is_empty(), "{}: no `; RUN-OPT:` line", file.display());
        for (n, run) in runs.iter().enumerate() {
            let mut words = run.split_whitespace();
            let mut prefix = "CHECK".to_string();
            let mut opt_args = Vec::new();
            for w in words.by_ref() {
                match w.strip_prefix("--check-prefix=") {
                    Some(p) => prefix = p.to_string(),
                    None => opt_args.push(w),
                }
            }
            let opt = Command::new("opt-19")
                .arg(format!("-load-pass-plugin={}", plugin.display()))
                .args(&opt_args)
                .args(["-S", "-o", "-"])
                .arg(file)
                .output()
                .expect("run opt-19");
            let expect_failure = file
                .file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("wrong_");
            if expect_failure {
                // The diagnostic names the hook and the signature the options call for.
                let err = String::from_utf8_lossy(&opt.stderr);
                let expected = text
                    .lines()
                    .filter_map(|l| l.strip_prefix("; ERROR:"))
                    .map(str::trim)
                    .collect::<Vec<_>>();
                if opt.status.success() || expected.iter().any(|e| !err.contains(e)) {
                    failures.push(format!(
                        "{}: expected opt-19 to fail with {expected:?}; status {}, stderr:\n{err}",
                        file.display(),
                        opt.status
                    ));
                }
                continue;
            }
            if !opt.status.success() {
                failures.push(format!(
                    "{} RUN-OPT #{}: opt-19 failed:\n{}",
                    file.display(),
                    n + 1,
                    String::from_utf8_lossy(&opt.stderr)
                ));
                continue;
            }
            let mut check = Command::new("FileCheck-19")
                .arg(file)
                .arg(format!("--check-prefix={prefix}"))
                .stdin(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("run FileCheck-19");
            check.stdin.take().unwrap().write_all(&opt.stdout).unwrap();
            let out = check.wait_with_output().unwrap();
            if !out.status.success() {
                failures.push(format!(
                    "{} RUN-OPT #{} ({prefix}):\n{}",
                    file.display(),
                    n + 1,
                    String::from_utf8_lossy(&out.stderr)
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
