//! Symbolization against real ELF files: tiny C and C++ programs compiled here (PIE and
//! non-PIE), their symbol addresses read with `object`, and traces synthesized with the
//! load bias the runtime would record.

mod common;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::scratch_dir;
use hookprof::analysis::model::Profile;
use hookprof::input::format::{Endian, Header, Module, Record, Trace, Writer, FLAG_COMPLETE};
use hookprof::input::symbols::{Resolve, Symbolizer};
use object::{Object, ObjectSegment, ObjectSymbol};

const C_SOURCE: &str = r#"
#include <stdio.h>
static int __attribute__((noinline)) helper(int x) { return x * 2; }
int __attribute__((noinline)) compute(int x) { return helper(x) + 1; }
int main(void) { printf("%d\n", compute(20)); return 0; }
"#;

const CXX_SOURCE: &str = r#"
struct Shape {
    double w, h;
    __attribute__((noinline)) double area() const { return w * h; }
};
template <class T> __attribute__((noinline)) T add(T a, T b) { return a + b; }
namespace ns { __attribute__((noinline)) int add(int a, int b, int c) { return a + b + c; } }
int main() {
    Shape s{2, 3};
    return (int)s.area() + add<int>(1, 2) + (int)add<double>(1.0, 2.0) + ns::add(1, 2, 3);
}
"#;

/// Compiles `source` with clang-19 (scripts/setup.sh installs it), or the first of clang and
/// the system compiler that works where clang-19 is missing; `None` (test skipped with a
/// message, a failure in CI) if there is none.
fn compile(dir: &Path, name: &str, source: &str, cxx: bool, pie: bool) -> Option<PathBuf> {
    let ext = if cxx { "cc" } else { "c" };
    let src = dir.join(format!("{name}.{ext}"));
    std::fs::write(&src, source).unwrap();
    let out = dir.join(name);
    let compilers: &[&str] = if cxx {
        &["clang++-19", "clang++", "c++"]
    } else {
        &["clang-19", "clang", "cc"]
    };
    let pie_flags: &[&str] = if pie {
        &["-fPIE", "-pie"]
    } else {
        &["-fno-pie", "-no-pie"]
    };
    for compiler in compilers {
        let status = Command::new(compiler)
            // 4-byte aligned functions, as hookcc's pass makes them: format version 2 keeps
            // the exit mark in bit 1 of the address.
            .args(["-O0", "-g0", "-falign-functions=4", "-o"])
            .arg(&out)
            .arg(&src)
            .args(pie_flags)
            .status();
        if matches!(status, Ok(s) if s.success()) {
            return Some(out);
        }
    }
    let ci = std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "0" && v != "false");
    assert!(
        !ci,
        "no working compiler among {compilers:?} (run scripts/setup.sh)"
    );
    eprintln!("skipped: no working compiler among {compilers:?}");
    None
}

struct Elf {
    symbols: HashMap<String, u64>,
    start: u64,
    end: u64,
    pie: bool,
}

fn read_elf(path: &Path) -> Elf {
    let data = std::fs::read(path).unwrap();
    let file = object::File::parse(&*data).unwrap();
    let symbols = file
        .symbols()
        .filter(|s| s.kind() == object::SymbolKind::Text && s.is_definition())
        .map(|s| (s.name().unwrap().to_string(), s.address()))
        .collect();
    let start = file.segments().map(|s| s.address()).min().unwrap();
    let end = file
        .segments()
        .map(|s| s.address() + s.size())
        .max()
        .unwrap();
    let pie = file.kind() == object::ObjectKind::Dynamic;
    Elf {
        symbols,
        start,
        end,
        pie,
    }
}

const PIE_BIAS: u64 = 0x5555_5555_4000;
const LIB_START: u64 = 0x7f00_0000_1000;
const OUTSIDE: u64 = 0xdead_0000;

/// A trace of `calls` (entry addresses, nested then all exited) in a program loaded at
/// `bias`, plus one call into a library that does not exist and one outside every module.
fn trace_for(exe: &Path, elf: &Elf, bias: u64, calls: &[u64]) -> Vec<u8> {
    let mut header = Header::new(Endian::native());
    header.flags = FLAG_COMPLETE;
    header.ticks_per_second = 1_000_000_000;
    let mut w = Writer::new(Vec::new(), &header).unwrap();
    w.exe(exe).unwrap();
    w.module(&Module {
        bias,
        start: elf.start + bias,
        end: elf.end + bias,
        path: None,
    })
    .unwrap();
    w.module(&Module {
        bias: LIB_START - 0x1000,
        start: LIB_START,
        end: LIB_START + 0x8000,
        path: Some(PathBuf::from("/nonexistent/libfake.so")),
    })
    .unwrap();
    let mut records = Vec::new();
    let mut t = 0;
    for &address in calls.iter().chain([LIB_START + 0x10, OUTSIDE].iter()) {
        records.push(Record::entry(t, address));
        t += 10;
    }
    for &address in calls.iter().chain([LIB_START + 0x10, OUTSIDE].iter()).rev() {
        records.push(Record::exit(t, address));
        t += 10;
    }
    w.events(1, &records).unwrap();
    w.into_inner()
}

fn symbolize(
    bytes: &[u8],
    exe: Option<&Path>,
    addresses: &[u64],
) -> (Vec<Option<String>>, Vec<String>) {
    let profile = Profile::from_trace(&Trace::new(bytes).unwrap()).unwrap();
    let mut symbolizer = Symbolizer::new(&profile.summary, exe).unwrap();
    let names = addresses.iter().map(|&a| symbolizer.resolve(a)).collect();
    (names, symbolizer.take_warnings())
}

fn check_c_program(pie: bool) {
    let dir = scratch_dir(if pie {
        "symbols-c-pie"
    } else {
        "symbols-c-nopie"
    });
    let Some(exe) = compile(&dir, "prog", C_SOURCE, false, pie) else {
        return;
    };
    let elf = read_elf(&exe);
    assert_eq!(elf.pie, pie, "{}: PIE-ness", exe.display());
    let bias = if pie { PIE_BIAS } else { 0 };
    let functions = ["main", "compute", "helper"];
    let calls: Vec<u64> = functions.iter().map(|f| elf.symbols[*f] + bias).collect();
    let bytes = trace_for(&exe, &elf, bias, &calls);
    let mut addresses = calls.clone();
    addresses.extend([LIB_START + 0x10, OUTSIDE]);
    let (names, warnings) = symbolize(&bytes, None, &addresses);
    assert_eq!(
        names,
        vec![
            Some("main".to_string()),
            Some("compute".to_string()),
            Some("helper".to_string()), // static: from .symtab
            None,
            None
        ]
    );
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("/nonexistent/libfake.so") && w.contains("shown as addresses")),
        "{warnings:?}"
    );
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("1 traced addresses lie in no module")),
        "{warnings:?}"
    );
    assert!(
        !warnings.iter().any(|w| w.contains("not the start")),
        "{warnings:?}"
    );

    // The same through the command line, as the end-to-end tests will use it.
    let trace_path = dir.join("prog.hktrace");
    std::fs::write(&trace_path, &bytes).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_hookprof"))
        .args(["report", "--format", "csv"])
        .arg(&trace_path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let csv = String::from_utf8(out.stdout).unwrap();
    let mut rows: Vec<&str> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').next().unwrap())
        .collect();
    rows.sort();
    let lib_hex = format!("0x{:x}", LIB_START + 0x10);
    let outside_hex = format!("0x{OUTSIDE:x}");
    let mut expected = vec![
        "compute",
        "helper",
        "main",
        lib_hex.as_str(),
        outside_hex.as_str(),
    ];
    expected.sort();
    assert_eq!(rows, expected, "{csv}");
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains("hookprof: warning: /nonexistent/libfake.so"),
        "{stderr}"
    );
}

#[test]
fn c_program_pie() {
    check_c_program(true);
}

#[test]
fn c_program_no_pie() {
    check_c_program(false);
}

#[test]
fn cxx_names_are_demangled_with_parameters() {
    let dir = scratch_dir("symbols-cxx");
    let Some(exe) = compile(&dir, "prog", CXX_SOURCE, true, true) else {
        return;
    };
    let elf = read_elf(&exe);
    let expected = [
        ("main", "main"),
        ("_ZNK5Shape4areaEv", "Shape::area() const"),
        ("_Z3addIiET_S0_S0_", "add<int>(int, int)"),
        ("_Z3addIdET_S0_S0_", "add<double>(double, double)"),
        ("_ZN2ns3addEiii", "ns::add(int, int, int)"),
    ];
    let calls: Vec<u64> = expected
        .iter()
        .map(|(m, _)| {
            elf.symbols
                .get(*m)
                .unwrap_or_else(|| panic!("no symbol {m}"))
                + PIE_BIAS
        })
        .collect();
    let bytes = trace_for(&exe, &elf, PIE_BIAS, &calls);
    let (names, _) = symbolize(&bytes, None, &calls);
    let names: Vec<String> = names.into_iter().map(Option::unwrap).collect();
    assert_eq!(names, expected.map(|(_, d)| d.to_string()));
}

#[test]
fn exe_option_overrides_the_path_and_a_mismatch_is_reported() {
    let dir = scratch_dir("symbols-exe-option");
    let Some(exe) = compile(&dir, "prog", C_SOURCE, false, true) else {
        return;
    };
    let elf = read_elf(&exe);
    let moved = dir.join("moved-prog");
    std::fs::rename(&exe, &moved).unwrap();
    let calls: Vec<u64> = ["main", "compute"]
        .iter()
        .map(|f| elf.symbols[*f] + PIE_BIAS)
        .collect();
    let bytes = trace_for(&exe, &elf, PIE_BIAS, &calls);
    let trace_path = dir.join("prog.hktrace");
    std::fs::write(&trace_path, &bytes).unwrap();

    // The recorded path is gone: an error naming it and suggesting --exe.
    let out = Command::new(env!("CARGO_BIN_EXE_hookprof"))
        .arg("report")
        .arg(&trace_path)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.starts_with(&format!("hookprof: error: {}: cannot read:", exe.display())),
        "{stderr}"
    );
    assert!(stderr.contains("--exe"), "{stderr}");

    // --exe with the moved file works.
    let (names, warnings) = symbolize(&bytes, Some(&moved), &calls);
    assert_eq!(
        names,
        vec![Some("main".to_string()), Some("compute".to_string())]
    );
    assert!(
        !warnings.iter().any(|w| w.contains("not the start")),
        "{warnings:?}"
    );

    // Addresses that are not function starts: the build does not match.
    let shifted: Vec<u64> = calls.iter().map(|a| a + 1).collect();
    let bytes = trace_for(&exe, &elf, PIE_BIAS, &shifted);
    let (_, warnings) = symbolize(&bytes, Some(&moved), &shifted);
    assert!(
        warnings.iter().any(|w| w.starts_with(&format!(
            "--exe {}: none of the 2 traced addresses",
            moved.display()
        ))),
        "{warnings:?}"
    );

    // --exe naming a file that is not ELF.
    let source = dir.join("prog.c");
    let out = Command::new(env!("CARGO_BIN_EXE_hookprof"))
        .arg("report")
        .arg(&trace_path)
        .arg("--exe")
        .arg(&source)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.starts_with(&format!(
            "hookprof: error: {}: not an ELF file",
            source.display()
        )),
        "{stderr}"
    );
}
