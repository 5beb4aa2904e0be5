//! Machine-readable rows, a stable interface for scripts and the end-to-end tests.
//!
//! Header: `function,calls,inclusive_ns,exclusive_ns,min_ns,max_ns,avg_ns,percent`
//! (`*_ticks` instead of `*_ns` when the trace has no clock rate); with `--per-thread` a
//! first column `thread`: the thread's sequence number from its THREAD chunk (1 = first
//! thread), or its Linux TID when the trace has no THREAD chunk for it. `avg` is the mean
//! inclusive time per call; `percent` is the row's share of the total exclusive time of
//! all rows, with two decimals. With `--percentiles`, three more columns
//! `p50_ns,p90_ns,p99_ns`: percentiles of the inclusive time of a single call. When the
//! trace has the threads' context switches (Linux), four more columns
//! `inclusive_oncpu_ns,inclusive_offcpu_ns,exclusive_oncpu_ns,exclusive_offcpu_ns`: each time
//! split into the part the thread ran and the part it was switched out. When the trace has
//! samples of the threads' CPU time (Linux), three more: `sampled_self_ns,sampled_total_ns,
//! sampled_percent` (docs/views.md, "Sampled times"). With
//! `--callers`, a last column `callers`: `caller×calls` separated by `;`, most calls first. No summary line: it is in the text and JSON formats.

use std::io;

use super::flat::{cpu_columns, percent, sampled_columns, time_columns, FlatReport, ReportFormat};

pub struct CsvFormat;

impl ReportFormat for CsvFormat {
    fn write(&self, report: &FlatReport, out: &mut dyn io::Write) -> io::Result<()> {
        let mut w = csv::Writer::from_writer(out);
        let [inclusive, exclusive, min, max, avg] = time_columns(report.summary.unit);
        let mut header = Vec::new();
        if report.per_thread {
            header.push("thread".to_string());
        }
        header.extend([
            "function".to_string(),
            "calls".to_string(),
            inclusive,
            exclusive,
            min,
            max,
            avg,
            "percent".to_string(),
        ]);
        let percentiles = report.has_percentiles();
        if percentiles {
            let u = report.summary.unit.suffix();
            header.extend(["p50", "p90", "p99"].map(|p| format!("{p}_{u}")));
        }
        let cpu = report.summary.switches.is_some();
        if cpu {
            header.extend(cpu_columns(report.summary.unit.suffix()));
        }
        let sampled = report.summary.samples.is_some();
        if sampled {
            header.extend(sampled_columns(report.summary.unit.suffix()));
        }
        let callers = report.has_callers();
        if callers {
            header.push("callers".to_string());
        }
        w.write_record(&header)?;
        for r in &report.rows {
            let mut record = Vec::with_capacity(header.len());
            if report.per_thread {
                record.push(r.thread.unwrap_or(0).to_string());
            }
            record.extend([
                r.function.clone(),
                r.calls.to_string(),
                r.inclusive.to_string(),
                r.exclusive.to_string(),
                r.min.to_string(),
                r.max.to_string(),
                r.avg.to_string(),
                percent(r.percent),
            ]);
            if percentiles {
                record.extend(r.percentiles.unwrap_or_default().map(|p| p.to_string()));
            }
            if cpu {
                record.extend(r.cpu_columns().unwrap_or_default().map(|t| t.to_string()));
            }
            if sampled {
                record.extend(r.sampled_cells());
            }
            if callers {
                record.push(FlatReport::callers_text(r, ";"));
            }
            w.write_record(&record)?;
        }
        w.flush()
    }
}
