//! Aligned columns for people: percent first, function name last (names vary in width).

use std::io;

use super::flat::{cpu_columns, percent, sampled_columns, time_columns, FlatReport, ReportFormat};

pub struct TextFormat;

impl ReportFormat for TextFormat {
    fn write(&self, report: &FlatReport, out: &mut dyn io::Write) -> io::Result<()> {
        let [inclusive, exclusive, min, max, avg] = time_columns(report.summary.unit);
        let mut header: Vec<String> = Vec::new();
        if report.per_thread {
            header.push("thread".into());
        }
        header.extend([
            "percent".into(),
            exclusive,
            inclusive,
            "calls".into(),
            min,
            max,
            avg,
        ]);
        let percentiles = report.has_percentiles();
        if percentiles {
            header.extend(["p50".into(), "p90".into(), "p99".into()]);
        }
        let cpu = report.summary.switches.is_some();
        if cpu {
            header.extend(cpu_columns(report.summary.unit.suffix()));
        }
        let sampled = report.summary.samples.is_some();
        if sampled {
            header.extend(sampled_columns(report.summary.unit.suffix()));
        }
        let mut lines: Vec<Vec<String>> = report
            .rows
            .iter()
            .map(|r| {
                let mut cells = Vec::new();
                if let Some(thread) = r.thread {
                    cells.push(thread.to_string());
                }
                cells.extend([
                    percent(r.percent),
                    r.exclusive.to_string(),
                    r.inclusive.to_string(),
                    r.calls.to_string(),
                    r.min.to_string(),
                    r.max.to_string(),
                    r.avg.to_string(),
                ]);
                if percentiles {
                    cells.extend(r.percentiles.unwrap_or_default().map(|p| p.to_string()));
                }
                if cpu {
                    cells.extend(r.cpu_columns().unwrap_or_default().map(|t| t.to_string()));
                }
                if sampled {
                    cells.extend(r.sampled_cells());
                }
                cells
            })
            .collect();
        lines.insert(0, header);
        let columns = lines[0].len();
        let widths: Vec<usize> = (0..columns)
            .map(|c| {
                lines
                    .iter()
                    .map(|l| l.get(c).map_or(0, |s| s.len()))
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let with_callers = report.has_callers();
        let named: Vec<String> = report
            .rows
            .iter()
            .map(|r| {
                if with_callers {
                    format!("{}  <- {}", r.function, FlatReport::callers_text(r, ", "))
                } else {
                    r.function.clone()
                }
            })
            .collect();
        let functions = std::iter::once("function").chain(named.iter().map(String::as_str));
        for (cells, function) in lines.iter().zip(functions) {
            let mut line = String::new();
            for (cell, width) in cells.iter().zip(&widths) {
                line.push_str(&format!("{cell:>width$}  "));
            }
            line.push_str(function);
            writeln!(out, "{line}")?;
        }
        if report.rows.is_empty() {
            writeln!(out, "(no function calls in the trace)")?;
        }
        writeln!(out, "{}", report.summary_line())
    }
}
