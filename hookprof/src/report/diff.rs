//! `hookprof diff A B`: two flat profiles side by side, function by function (matched by
//! name, since addresses change between builds), with the change in calls, exclusive and
//! inclusive time, sorted by the largest change of exclusive time.

use std::io::{self, Write};

use crate::model::HashMap;
use crate::report::{FlatReport, Unit};

/// One function in either profile. Times in the profiles' unit.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DiffRow {
    pub function: String,
    pub calls: [u64; 2],
    pub exclusive: [u64; 2],
    pub inclusive: [u64; 2],
}

impl DiffRow {
    pub fn exclusive_delta(&self) -> i128 {
        i128::from(self.exclusive[1]) - i128::from(self.exclusive[0])
    }
}

/// The two profiles, matched.
#[derive(Clone, Debug, PartialEq)]
pub struct Diff {
    pub unit: Unit,
    pub rows: Vec<DiffRow>,
    pub totals: [u64; 2],
}

impl Diff {
    /// Matches the rows of `a` and `b` (flat profiles of all threads) by function name;
    /// functions sharing a name (static functions of several files) are added together.
    pub fn new(a: &FlatReport, b: &FlatReport) -> Diff {
        let mut rows: Vec<DiffRow> = Vec::new();
        let mut index: HashMap<String, usize> = HashMap::default();
        for (side, report) in [a, b].into_iter().enumerate() {
            for r in &report.rows {
                let i = *index.entry(r.function.clone()).or_insert_with(|| {
                    rows.push(DiffRow {
                        function: r.function.clone(),
                        ..DiffRow::default()
                    });
                    rows.len() - 1
                });
                let row = &mut rows[i];
                row.calls[side] += r.calls;
                row.exclusive[side] += r.exclusive;
                row.inclusive[side] += r.inclusive;
            }
        }
        rows.sort_by(|x, y| {
            y.exclusive_delta()
                .abs()
                .cmp(&x.exclusive_delta().abs())
                .then_with(|| x.function.cmp(&y.function))
        });
        Diff {
            unit: a.summary.unit,
            rows,
            totals: [a.summary.total_exclusive, b.summary.total_exclusive],
        }
    }

    /// Aligned columns, the function last; `top` keeps the first N rows.
    pub fn write_text(&self, top: Option<usize>, out: &mut dyn Write) -> io::Result<()> {
        let u = self.unit.suffix();
        let header: Vec<String> = vec![
            "calls_a".into(),
            "calls_b".into(),
            "calls_delta".into(),
            format!("exclusive_{u}_a"),
            format!("exclusive_{u}_b"),
            format!("exclusive_{u}_delta"),
            "change".into(),
            format!("inclusive_{u}_a"),
            format!("inclusive_{u}_b"),
        ];
        let rows = &self.rows[..top.unwrap_or(usize::MAX).min(self.rows.len())];
        let mut lines: Vec<Vec<String>> = vec![header];
        for r in rows {
            lines.push(vec![
                r.calls[0].to_string(),
                r.calls[1].to_string(),
                signed(i128::from(r.calls[1]) - i128::from(r.calls[0])),
                r.exclusive[0].to_string(),
                r.exclusive[1].to_string(),
                signed(r.exclusive_delta()),
                change(r.exclusive[0], r.exclusive[1]),
                r.inclusive[0].to_string(),
                r.inclusive[1].to_string(),
            ]);
        }
        let widths: Vec<usize> = (0..lines[0].len())
            .map(|c| lines.iter().map(|l| l[c].len()).max().unwrap_or(0))
            .collect();
        let names = std::iter::once("function").chain(rows.iter().map(|r| r.function.as_str()));
        for (cells, name) in lines.iter().zip(names) {
            for (cell, width) in cells.iter().zip(&widths) {
                write!(out, "{cell:>width$}  ")?;
            }
            writeln!(out, "{name}")?;
        }
        writeln!(
            out,
            "total exclusive {u}: a {}, b {}, delta {} ({})",
            self.totals[0],
            self.totals[1],
            signed(i128::from(self.totals[1]) - i128::from(self.totals[0])),
            change(self.totals[0], self.totals[1])
        )
    }

    /// CSV with a header row, the same columns with the function first.
    pub fn write_csv(&self, top: Option<usize>, out: &mut dyn Write) -> io::Result<()> {
        let u = self.unit.suffix();
        let mut w = csv::Writer::from_writer(out);
        w.write_record([
            "function".to_string(),
            "calls_a".into(),
            "calls_b".into(),
            "calls_delta".into(),
            format!("exclusive_{u}_a"),
            format!("exclusive_{u}_b"),
            format!("exclusive_{u}_delta"),
            format!("inclusive_{u}_a"),
            format!("inclusive_{u}_b"),
            format!("inclusive_{u}_delta"),
        ])?;
        for r in self.rows.iter().take(top.unwrap_or(usize::MAX)) {
            w.write_record([
                r.function.clone(),
                r.calls[0].to_string(),
                r.calls[1].to_string(),
                (i128::from(r.calls[1]) - i128::from(r.calls[0])).to_string(),
                r.exclusive[0].to_string(),
                r.exclusive[1].to_string(),
                r.exclusive_delta().to_string(),
                r.inclusive[0].to_string(),
                r.inclusive[1].to_string(),
                (i128::from(r.inclusive[1]) - i128::from(r.inclusive[0])).to_string(),
            ])?;
        }
        w.flush()
    }
}

fn signed(v: i128) -> String {
    if v > 0 {
        format!("+{v}")
    } else {
        v.to_string()
    }
}

/// The relative change from `a` to `b`: `+12.5%`, `new` when `a` is 0, `gone` when `b` is.
fn change(a: u64, b: u64) -> String {
    match (a, b) {
        (0, 0) => "0.0%".to_string(),
        (0, _) => "new".to_string(),
        (_, 0) => "gone".to_string(),
        (a, b) => {
            let pct = (b as f64 - a as f64) * 100.0 / a as f64;
            if pct > 0.0 {
                format!("+{pct:.1}%")
            } else {
                format!("{pct:.1}%")
            }
        }
    }
}
