//! Golden files for every report format, from one synthetic trace (tests/data/).
//!
//! A failure names the golden file and the first differing line. `HOOKPROF_BLESS=1 cargo
//! test -p hookprof --test golden` rewrites the files (and creates missing ones); without
//! it a missing golden file fails.

mod common;

use common::*;
use hookprof::analysis::model::Profile;
use hookprof::commands::report::{render_report, ReportOptions};
use hookprof::input::format::{Endian, Header, Trace};
use hookprof::output::report::Format;

fn render(bytes: &[u8], format: Format, per_thread: bool) -> (String, Vec<String>) {
    let profile = Profile::from_trace(&Trace::new(bytes).unwrap()).unwrap();
    let options = ReportOptions {
        exe: None,
        format,
        per_thread,
        sort: Default::default(),
        top: None,
        percentiles: false,
        callers: false,
        mixed_programs: false,
        text: Default::default(),
        time: Default::default(),
    };
    let out = render_report(&profile, &mut names(), &options);
    (String::from_utf8(out.bytes).unwrap(), out.warnings)
}

#[test]
fn golden_flat_profile() {
    let trace = golden_trace(Endian::Little);
    for format in Format::ALL {
        let (text, warnings) = render(&trace, format, false);
        check_golden(&format!("flat.{}", ext(format)), &text);
        assert_eq!(warnings.len(), 1, "{warnings:?}"); // lost records
        assert!(warnings[0].contains("2 records were lost"), "{warnings:?}");
    }
}

#[test]
fn golden_flat_profile_per_thread() {
    let trace = golden_trace(Endian::Little);
    for format in Format::ALL {
        let (text, _) = render(&trace, format, true);
        check_golden(&format!("flat-per-thread.{}", ext(format)), &text);
    }
}

#[test]
fn golden_flat_profile_in_ticks_when_the_rate_is_unknown() {
    let mut header: Header = header(Endian::Big);
    header.ticks_per_second = 0;
    header.flags = 0;
    let trace = golden_trace_with(header, false);
    for format in Format::ALL {
        let (text, warnings) = render(&trace, format, false);
        check_golden(&format!("flat-ticks.{}", ext(format)), &text);
        assert!(
            warnings.iter().any(|w| w.contains("*_ticks")),
            "{warnings:?}"
        );
        assert!(
            warnings.iter().any(|w| w.contains("incomplete")),
            "{warnings:?}"
        );
    }
}

#[test]
fn big_endian_reports_match_little_endian() {
    for format in Format::ALL {
        assert_eq!(
            render(&golden_trace(Endian::Little), format, true),
            render(&golden_trace(Endian::Big), format, true)
        );
    }
}

#[test]
fn csv_header_is_stable() {
    let (csv, _) = render(&golden_trace(Endian::Little), Format::Csv, false);
    assert_eq!(
        csv.lines().next(),
        Some("function,calls,inclusive_ns,exclusive_ns,min_ns,max_ns,avg_ns,percent")
    );
    let (csv, _) = render(&golden_trace(Endian::Little), Format::Csv, true);
    assert_eq!(
        csv.lines().next(),
        Some("thread,function,calls,inclusive_ns,exclusive_ns,min_ns,max_ns,avg_ns,percent")
    );
}

fn ext(format: Format) -> &'static str {
    match format {
        Format::Text => "txt",
        Format::Csv => "csv",
        Format::Json => "json",
    }
}

/// The Dynamic Call Graph of a native trace: the seed's tab-ended separator and title lines,
/// UNKNOWN for an address no symbol names, and threads that share a name (as threads inherit
/// the program's) told apart by their thread ids.
#[test]
fn golden_call_graph() {
    let mut w = hookprof::input::format::Writer::new(Vec::new(), &header(Endian::Little)).unwrap();
    let (w1, w2) = worker_records();
    w.events(TID_MAIN, &main_thread_records()).unwrap();
    w.events(TID_WORKER, &w1).unwrap();
    w.events(TID_WORKER, &w2).unwrap();
    w.thread(TID_MAIN, 1, "prog").unwrap();
    w.thread(TID_WORKER, 2, "prog").unwrap();
    let trace = w.into_inner();
    let profile = Profile::from_trace(&Trace::new(&trace).unwrap()).unwrap();
    let mut out = Vec::new();
    hookprof::output::callgraph::render(
        &profile,
        &mut names(),
        hookprof::output::callgraph::Times::Trace,
        &mut out,
    )
    .unwrap();
    let text = String::from_utf8(out).unwrap();
    check_golden("callgraph.txt", &text);
    for title in [
        "=====\t\t\t\nThread: prog (tid 100)\t\t\t\n=====\t\t\t\n",
        "=====\t\t\t\nThread: prog (tid 4242)\t\t\t\n=====\t\t\t\n",
    ] {
        assert!(text.contains(title), "{title:?} in\n{text}");
    }
    assert!(
        text.contains("\tUNKNOWN [") && !text.contains("0x8000"),
        "{text}"
    );
}
