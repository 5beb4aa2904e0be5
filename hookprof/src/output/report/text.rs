//! The flat profile for people, in the manner of uftrace's `report` and gprof's flat profile:
//! a line saying what the times are and how the rows are sorted, then the sort key's share
//! first, self and total time, calls and time per call in human units, and the function's
//! name last, shortened to fit the line (`--full-names` keeps it whole); the other columns
//! on request (`--columns`, `--wide`: [`Column`]). The summary line ends it.

use std::io;

use super::columns::{human_time, short_name, width, Column, TextOptions};
use super::flat::{percent, FlatReport, ReportFormat, Row, SortKey, TimeBasis, Unit};

pub struct TextFormat;

/// The columns `report`'s text shows, in order: `--columns`' (each one the report has data
/// for, else an error naming it and why), `--wide`'s (every one it has data for), or the
/// default set.
pub fn text_columns(report: &FlatReport) -> Result<Vec<Column>, String> {
    let options = &report.text;
    if let Some(asked) = &options.columns {
        for &c in asked {
            if let Some(why) = missing(report, c) {
                return Err(format!("--columns: no {c} column in this report: {why}"));
            }
        }
        return Ok(asked.clone());
    }
    if options.wide {
        return Ok(Column::ALL
            .into_iter()
            .filter(|&c| missing(report, c).is_none())
            .collect());
    }
    let mut columns = vec![Column::Percent];
    if report.sort == SortKey::Sampled && report.summary.samples.is_some() {
        columns.push(Column::SampledSelf);
    }
    columns.extend([
        Column::Exclusive,
        Column::Inclusive,
        Column::Calls,
        Column::Avg,
    ]);
    if report.has_percentiles() {
        columns.extend([Column::P50, Column::P90, Column::P99]);
    }
    Ok(columns)
}

/// Why `report` has no data for column `c`, or `None` if it has.
fn missing(report: &FlatReport, c: Column) -> Option<String> {
    let s = &report.summary;
    let lacking = || {
        s.lacking
            .clone()
            .unwrap_or_else(|| "the trace has none".to_string())
    };
    match c {
        Column::P50 | Column::P90 | Column::P99 if !report.has_percentiles() => {
            Some("add --percentiles".to_string())
        }
        Column::ExclusiveOncpu
        | Column::ExclusiveOffcpu
        | Column::InclusiveOncpu
        | Column::InclusiveOffcpu
            if s.switches.is_none() =>
        {
            Some(format!("the trace has no context switches ({})", lacking()))
        }
        Column::SampledSelf | Column::SampledTotal | Column::SampledPercent
            if s.samples.is_none() =>
        {
            Some(format!("the trace has no samples ({})", lacking()))
        }
        _ => None,
    }
}

/// The heading of the percent column: the share of what the rows are sorted by.
fn percent_heading(sort: SortKey) -> &'static str {
    match sort {
        SortKey::Sampled => "sampled%",
        SortKey::Inclusive => "total%",
        SortKey::Calls => "calls%",
        SortKey::Exclusive | SortKey::Avg | SortKey::Max | SortKey::Name => "self%",
    }
}

/// A row's share of the sort key's whole, in percent.
fn sort_share(report: &FlatReport, r: &Row) -> f64 {
    let s = &report.summary;
    let share = |part: u64, whole: u64| {
        if whole == 0 {
            0.0
        } else {
            part as f64 * 100.0 / whole as f64
        }
    };
    match report.sort {
        SortKey::Sampled => r.sampled.map_or(0.0, |x| x.percent),
        SortKey::Inclusive => share(r.inclusive, s.total_exclusive),
        SortKey::Calls => share(r.calls, s.total_calls),
        SortKey::Exclusive | SortKey::Avg | SortKey::Max | SortKey::Name => r.percent,
    }
}

/// The first line (two where one would pass `width`): how the rows are sorted and what the
/// times are.
pub fn heading_lines(report: &FlatReport, width: usize) -> Vec<String> {
    let s = &report.summary;
    let order = match (report.sort, s.samples) {
        (SortKey::Sampled, Some(samples)) => format!(
            "Sorted by sampled self time: {} samples, one every {} of CPU time (\"sampled\"); \
             the other times are traced.",
            samples.in_functions,
            time(s.unit, samples.period)
        ),
        (SortKey::Sampled | SortKey::Exclusive, _) => "Sorted by self time.".to_string(),
        (SortKey::Inclusive, _) => "Sorted by total time.".to_string(),
        (SortKey::Calls, _) => "Sorted by calls.".to_string(),
        (SortKey::Avg, _) => "Sorted by time per call.".to_string(),
        (SortKey::Max, _) => "Sorted by the longest call.".to_string(),
        (SortKey::Name, _) => "Sorted by name.".to_string(),
    };
    // --time=cpu: the rows count the time the threads ran, their switched-out time left out.
    let clock = match s.time {
        TimeBasis::Wall => "wall clock",
        TimeBasis::Cpu => "CPU time (switched-out time left out)",
    };
    let times = match (s.unit, s.compensation) {
        (Unit::Ticks, _) => format!(
            "Times in clock ticks (the trace has no clock rate){}.",
            if s.time == TimeBasis::Cpu {
                ", on the CPU"
            } else {
                ""
            }
        ),
        (_, Some((inside, _))) => format!(
            "Times: {clock}, less the hooks' own ({} a call).",
            time(s.unit, inside)
        ),
        (_, None) => format!("Times: {clock}, raw (the hooks' own time in them)."),
    };
    if self::width(&order) + 1 + self::width(&times) <= width {
        vec![format!("{order} {times}")]
    } else {
        vec![order, times]
    }
}

/// A time cell: human units, or the tick count when the trace has no clock rate.
fn time(unit: Unit, value: u64) -> String {
    match unit {
        Unit::Nanoseconds { .. } => human_time(value),
        Unit::Ticks => value.to_string(),
    }
}

/// A row's cell of column `c`.
fn cell(report: &FlatReport, r: &Row, c: Column) -> String {
    let unit = report.summary.unit;
    let t = |v: u64| time(unit, v);
    let cpu = r.cpu_columns().unwrap_or_default();
    let sampled = r.sampled.unwrap_or_default();
    let p = r.percentiles.unwrap_or_default();
    match c {
        Column::Percent => percent(sort_share(report, r)),
        Column::SampledSelf => t(sampled.self_time),
        Column::Exclusive => t(r.exclusive),
        Column::Inclusive => t(r.inclusive),
        Column::Calls => r.calls.to_string(),
        Column::Avg => t(r.avg),
        Column::Min => t(r.min),
        Column::Max => t(r.max),
        Column::P50 => t(p[0]),
        Column::P90 => t(p[1]),
        Column::P99 => t(p[2]),
        Column::InclusiveOncpu => t(cpu[0]),
        Column::InclusiveOffcpu => t(cpu[1]),
        Column::ExclusiveOncpu => t(cpu[2]),
        Column::ExclusiveOffcpu => t(cpu[3]),
        Column::SampledTotal => t(sampled.total),
        Column::SampledPercent => percent(sampled.percent),
    }
}

/// Columns that cannot be shown were refused before rendering ([`text_columns`]); here they
/// fall back to the default set.
impl ReportFormat for TextFormat {
    fn write(&self, report: &FlatReport, out: &mut dyn io::Write) -> io::Result<()> {
        let columns = text_columns(report).unwrap_or_else(|_| {
            let mut plain = report.clone();
            plain.text = TextOptions::default();
            text_columns(&plain).expect("the default columns always exist")
        });
        let mut header: Vec<String> = Vec::new();
        if report.per_thread {
            header.push("thread".into());
        }
        header.extend(columns.iter().map(|&c| match c {
            Column::Percent => percent_heading(report.sort).to_string(),
            c => c.heading().to_string(),
        }));
        let mut lines: Vec<Vec<String>> = vec![header];
        for r in &report.rows {
            let mut cells = Vec::new();
            if let Some(thread) = r.thread {
                cells.push(thread.to_string());
            }
            cells.extend(columns.iter().map(|&c| cell(report, r, c)));
            lines.push(cells);
        }
        let widths: Vec<usize> = (0..lines[0].len())
            .map(|c| lines.iter().map(|l| width(&l[c])).max().unwrap_or(0))
            .collect();
        let prefix: usize = widths.iter().map(|w| w + 2).sum();
        let line_width = report.text.width.unwrap_or(TextOptions::DEFAULT_WIDTH);
        // What is left of the line for the name (at least a readable part of it).
        let budget = line_width.saturating_sub(prefix).max(24);
        let with_callers = report.has_callers();
        for line in heading_lines(report, line_width) {
            writeln!(out, "{line}")?;
        }
        let names = std::iter::once("function".to_string()).chain(report.rows.iter().map(|r| {
            // A throttled function says how many of its calls were timed.
            let mark = if r.counted > 0 {
                format!(" [timed first {}]", r.calls - r.counted)
            } else {
                String::new()
            };
            let mut name = if report.text.full_names {
                r.function.clone()
            } else {
                short_name(&r.function, budget.saturating_sub(mark.len()).max(24))
            };
            name.push_str(&mark);
            if with_callers {
                format!("{name}  <- {}", FlatReport::callers_text(r, ", "))
            } else {
                name
            }
        }));
        for (cells, name) in lines.iter().zip(names) {
            let mut line = String::new();
            for (cell, w) in cells.iter().zip(&widths) {
                let pad = w - width(cell);
                line.extend(std::iter::repeat_n(' ', pad));
                line.push_str(cell);
                line.push_str("  ");
            }
            line.push_str(&name);
            writeln!(out, "{line}")?;
        }
        if report.rows.is_empty() {
            writeln!(out, "(no function calls in the trace)")?;
        }
        for line in wrap_items(&report.summary_items(), line_width) {
            writeln!(out, "{line}")?;
        }
        Ok(())
    }
}

/// `items` joined by `, ` into lines of at most `width` characters, each line but the last
/// ending with `,`. An item is kept on one line where it fits; one wider than the line is
/// broken at its spaces, its later lines indented by two, and the next item starts a line.
fn wrap_items(items: &[String], width: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    // The last item was broken: the next starts a line of its own, not its indented tail's.
    let mut after_broken = false;
    for item in items {
        let pieces = break_item(item, width);
        let first = &pieces[0];
        if !line.is_empty()
            && (after_broken || self::width(&line) + 2 + self::width(first) + 1 > width)
        {
            line.push(',');
            lines.push(std::mem::take(&mut line));
        } else if !line.is_empty() {
            line.push_str(", ");
        }
        line.push_str(first);
        for piece in &pieces[1..] {
            lines.push(std::mem::take(&mut line));
            line = format!("  {piece}");
        }
        after_broken = pieces.len() > 1;
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}

/// An item as the pieces of its lines: itself when it fits in `width` (with the `,` after
/// it), else broken at spaces into pieces that fit (the later ones with two spaces before
/// them); a word longer than a line stays whole.
fn break_item(item: &str, width: usize) -> Vec<String> {
    if self::width(item) < width {
        return vec![item.to_string()];
    }
    let mut pieces = vec![String::new()];
    for word in item.split(' ') {
        let room = if pieces.len() == 1 {
            width
        } else {
            width.saturating_sub(2)
        };
        let piece = pieces.last_mut().unwrap();
        if !piece.is_empty() && self::width(piece) + 1 + self::width(word) + 1 > room {
            pieces.push(word.to_string());
        } else {
            if !piece.is_empty() {
                piece.push(' ');
            }
            piece.push_str(word);
        }
    }
    pieces
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Items join on a line while they fit; one wider than the line is broken at its spaces
    /// (its later lines indented), and the next item goes on after it; nothing is lost.
    #[test]
    fn summary_items_fit_the_width_and_a_long_one_is_broken_at_spaces() {
        let items: Vec<String> = [
            "threads: 1",
            "records: 394236",
            "throttled [timed first N]: 1 function, 65157 later calls counted untimed \
             (HOOKCC_THROTTLE=0 times all)",
            "context switches: 6",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert_eq!(
            wrap_items(&items, 60),
            [
                "threads: 1, records: 394236,",
                "throttled [timed first N]: 1 function, 65157 later calls",
                "  counted untimed (HOOKCC_THROTTLE=0 times all),",
                "context switches: 6",
            ]
        );
        // Wide enough: every item whole, as before.
        assert_eq!(wrap_items(&items, 200), [items.join(", ")]);
    }
}
