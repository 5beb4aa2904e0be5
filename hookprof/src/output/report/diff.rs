//! `hookprof diff A B`: two flat profiles side by side, function by function (matched by
//! name, since addresses change between builds), with the change in calls, exclusive and
//! inclusive time, sorted by the largest change of exclusive time; and the regression gate
//! (`--fail-if RULE`, [`Rule`]): the functions whose change breaks a rule, as Markdown.

use std::io::{self, Write};

use crate::analysis::ids::HashMap;
use crate::output::report::flat::{FlatReport, TimeBasis, Unit};

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

    fn metric(&self, metric: Metric) -> [u64; 2] {
        match metric {
            Metric::Calls => self.calls,
            Metric::Exclusive => self.exclusive,
            Metric::Inclusive => self.inclusive,
        }
    }
}

/// What a rule compares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Metric {
    Calls,
    Exclusive,
    Inclusive,
}

/// How much a metric may grow from A to B.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Limit {
    /// Percent of A's value (a function new in B exceeds any percentage).
    Percent(f64),
    /// An amount: calls, or nanoseconds for the times.
    Amount(u64),
}

/// `METRIC > +LIMIT`: `exclusive > +10%`, `calls > +1000`, `inclusive > +2ms`. A function breaks
/// the rule when its METRIC in B exceeds A's by more than LIMIT.
#[derive(Clone, Debug, PartialEq)]
pub struct Rule {
    pub metric: Metric,
    pub limit: Limit,
    /// As the user wrote it, for the report.
    pub text: String,
}

impl std::str::FromStr for Rule {
    type Err = String;

    fn from_str(text: &str) -> Result<Rule, String> {
        let usage = || {
            format!(
                "{text:?}: a rule is METRIC > +LIMIT, METRIC one of calls, exclusive, inclusive \
                 and LIMIT a percentage (+10%), a count of calls (+1000) or a time (+2ms)"
            )
        };
        let (metric, limit) = text.split_once('>').ok_or_else(usage)?;
        let metric = match metric.trim() {
            "calls" => Metric::Calls,
            "exclusive" => Metric::Exclusive,
            "inclusive" => Metric::Inclusive,
            _ => return Err(usage()),
        };
        let limit = limit.trim();
        let limit = limit.strip_prefix('+').unwrap_or(limit).trim();
        if limit.starts_with('-') {
            return Err(format!(
                "{text:?}: the gate catches increases; the limit must not be negative"
            ));
        }
        let limit = if let Some(percent) = limit.strip_suffix('%') {
            let p: f64 = percent.trim().parse().map_err(|_| usage())?;
            if !p.is_finite() || p < 0.0 {
                return Err(usage());
            }
            Limit::Percent(p)
        } else if metric == Metric::Calls {
            Limit::Amount(limit.parse().map_err(|_| usage())?)
        } else {
            Limit::Amount(parse_time(limit).ok_or_else(usage)?)
        };
        Ok(Rule {
            metric,
            limit,
            text: text.trim().to_string(),
        })
    }
}

/// A time with its unit (ns, us, ms, s) in nanoseconds: a bare number is refused here (is
/// `+2` two calls' worth of time, or 2 ns?).
fn parse_time(text: &str) -> Option<u64> {
    if !text.trim_end().ends_with(|c: char| c.is_alphabetic()) {
        return None;
    }
    crate::analysis::view::parse_duration(text).ok()
}

/// A function that broke a rule.
#[derive(Clone, Debug, PartialEq)]
pub struct Breach<'a> {
    pub row: &'a DiffRow,
    pub rule: &'a Rule,
}

/// The two profiles, matched.
#[derive(Clone, Debug, PartialEq)]
pub struct Diff {
    pub unit: Unit,
    pub rows: Vec<DiffRow>,
    pub totals: [u64; 2],
    /// Which time the times are and why (`--time`), for the gate's verdict: "CPU time (…)".
    pub time_note: Option<String>,
    /// The profiles' times are CPU time (`--time=cpu`): the totals' lines say so.
    pub cpu_time: bool,
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
            time_note: None,
            cpu_time: a.summary.time == TimeBasis::Cpu,
        }
    }

    /// The functions that break `rules`, in the rows' order (largest change of exclusive time
    /// first), once for each rule they break. Noise is left out: a function is judged
    /// only if its time — the rule's metric, or its inclusive time for `calls` — reaches
    /// `min_time` (the profiles' unit) in A or in B.
    pub fn breaches<'a>(&'a self, rules: &'a [Rule], min_time: u64) -> Vec<Breach<'a>> {
        let mut found = Vec::new();
        for row in &self.rows {
            for rule in rules {
                let time = match rule.metric {
                    Metric::Calls => row.inclusive,
                    metric => row.metric(metric),
                };
                if time[0].max(time[1]) < min_time {
                    continue;
                }
                let [a, b] = row.metric(rule.metric);
                let broken = b > a
                    && match rule.limit {
                        Limit::Amount(limit) => b - a > limit,
                        Limit::Percent(p) => a == 0 || (b - a) as f64 * 100.0 > p * a as f64,
                    };
                if broken {
                    found.push(Breach { row, rule });
                }
            }
        }
        found
    }

    /// The gate's verdict as Markdown (a CI job posts it): a heading with the number of
    /// functions that broke a rule, the breaches (function, rule, A, B, change), then the `top`
    /// largest changes of exclusive time for context. Returns the number of functions.
    pub fn write_gate(
        &self,
        rules: &[Rule],
        min_time: u64,
        top: Option<usize>,
        out: &mut dyn Write,
    ) -> io::Result<usize> {
        let breaches = self.breaches(rules, min_time);
        let mut functions: Vec<&str> = breaches.iter().map(|b| b.row.function.as_str()).collect();
        functions.dedup(); // a function's breaches are adjacent
        let rule_list: Vec<String> = rules.iter().map(|r| format!("`{}`", r.text)).collect();
        let noise = if min_time > 0 {
            format!(", functions under {} left out", self.amount(min_time))
        } else {
            String::new()
        };
        match functions.len() {
            0 => writeln!(out, "### hookprof diff: no regression")?,
            1 => writeln!(out, "### hookprof diff: 1 regression")?,
            n => writeln!(out, "### hookprof diff: {n} regressions")?,
        }
        writeln!(out)?;
        writeln!(out, "Rules: {}{noise}.", rule_list.join(", "))?;
        if let Some(note) = &self.time_note {
            writeln!(out)?;
            writeln!(out, "Times: {note}.")?;
        }
        if !breaches.is_empty() {
            writeln!(out)?;
            writeln!(out, "| function | rule | A | B | change |")?;
            writeln!(out, "|---|---|---:|---:|---:|")?;
            for b in &breaches {
                let [x, y] = b.row.metric(b.rule.metric);
                let show = |v: u64| match b.rule.metric {
                    Metric::Calls => v.to_string(),
                    _ => self.amount(v),
                };
                writeln!(
                    out,
                    "| {} | `{}` | {} | {} | {} |",
                    markdown_code(&b.row.function),
                    b.rule.text,
                    show(x),
                    show(y),
                    change(x, y)
                )?;
            }
        }
        writeln!(out)?;
        self.write_markdown(top.or(Some(10)), out)?;
        Ok(functions.len())
    }

    /// `CPU ` in the totals' lines of CPU times, else nothing.
    fn cpu_words(&self) -> &'static str {
        if self.cpu_time {
            "CPU "
        } else {
            ""
        }
    }

    /// The largest changes as a Markdown table, with the totals.
    pub fn write_markdown(&self, top: Option<usize>, out: &mut dyn Write) -> io::Result<()> {
        let rows = &self.rows[..top.unwrap_or(usize::MAX).min(self.rows.len())];
        writeln!(
            out,
            "| function | calls A | calls B | exclusive A | exclusive B | change | inclusive A | inclusive B |"
        )?;
        writeln!(out, "|---|---:|---:|---:|---:|---:|---:|---:|")?;
        for r in rows {
            writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} | {} | {} |",
                markdown_code(&r.function),
                r.calls[0],
                r.calls[1],
                self.amount(r.exclusive[0]),
                self.amount(r.exclusive[1]),
                change(r.exclusive[0], r.exclusive[1]),
                self.amount(r.inclusive[0]),
                self.amount(r.inclusive[1]),
            )?;
        }
        writeln!(out)?;
        writeln!(
            out,
            "Total exclusive {}time: A {}, B {} ({}).",
            self.cpu_words(),
            self.amount(self.totals[0]),
            self.amount(self.totals[1]),
            change(self.totals[0], self.totals[1])
        )
    }

    /// A time for people: `1.25 ms`, `830 ns`, or `1234 ticks` without a clock rate.
    fn amount(&self, v: u64) -> String {
        match self.unit {
            Unit::Ticks => format!("{v} ticks"),
            Unit::Nanoseconds { .. } => {
                let v = v as f64;
                if v >= 1e9 {
                    format!("{:.3} s", v / 1e9)
                } else if v >= 1e6 {
                    format!("{:.3} ms", v / 1e6)
                } else if v >= 1e3 {
                    format!("{:.3} us", v / 1e3)
                } else {
                    format!("{v} ns")
                }
            }
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
            "total exclusive {}{u}: a {}, b {}, delta {} ({})",
            self.cpu_words(),
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

/// A name as Markdown code: backticks (doubled around a name that has one), pipes escaped.
fn markdown_code(name: &str) -> String {
    let name = name.replace('|', "\\|");
    if name.contains('`') {
        format!("`` {name} ``")
    } else {
        format!("`{name}`")
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

#[cfg(test)]
mod tests {
    use super::*;

    fn row(function: &str, calls: [u64; 2], exclusive: [u64; 2], inclusive: [u64; 2]) -> DiffRow {
        DiffRow {
            function: function.to_string(),
            calls,
            exclusive,
            inclusive,
        }
    }

    #[test]
    fn rules_are_read_as_written_and_bad_ones_say_why() {
        let r: Rule = "exclusive > +10%".parse().unwrap();
        assert_eq!(
            (r.metric, r.limit),
            (Metric::Exclusive, Limit::Percent(10.0))
        );
        let r: Rule = "calls>1000".parse().unwrap();
        assert_eq!((r.metric, r.limit), (Metric::Calls, Limit::Amount(1000)));
        let r: Rule = " inclusive > +2.5ms ".parse().unwrap();
        assert_eq!(
            (r.metric, r.limit),
            (Metric::Inclusive, Limit::Amount(2_500_000))
        );
        assert_eq!(r.text, "inclusive > +2.5ms");
        for bad in [
            "exclusive < 10%",
            "wall > 10%",
            "exclusive > 2",
            "calls > 1ms",
            "calls > x%",
        ] {
            let e = bad.parse::<Rule>().unwrap_err();
            assert!(e.contains("METRIC > +LIMIT"), "{bad}: {e}");
        }
        let e = "exclusive > -5%".parse::<Rule>().unwrap_err();
        assert!(e.contains("must not be negative"), "{e}");
    }

    #[test]
    fn the_gate_judges_each_function_above_the_minimum_time() {
        let diff = Diff {
            unit: Unit::Nanoseconds {
                ticks_per_second: 1_000_000_000,
            },
            rows: vec![
                row(
                    "slower",
                    [10, 10],
                    [1_000_000, 1_150_000],
                    [2_000_000, 2_150_000],
                ),
                row(
                    "steady",
                    [10, 10],
                    [1_000_000, 1_050_000],
                    [1_000_000, 1_050_000],
                ),
                row("new", [0, 5], [0, 3_000_000], [0, 3_000_000]),
                row("tiny", [1, 9], [100, 900], [100, 900]),
                row(
                    "faster",
                    [10, 10],
                    [2_000_000, 1_000_000],
                    [2_000_000, 1_000_000],
                ),
            ],
            totals: [4_000_100, 6_200_900],
            time_note: Some("CPU time (--time=cpu)".to_string()),
            cpu_time: true,
        };
        let rules: Vec<Rule> = ["exclusive > +10%", "calls > +50%"]
            .iter()
            .map(|r| r.parse().unwrap())
            .collect();
        let names = |min_time| -> Vec<(&str, &str)> {
            diff.breaches(&rules, min_time)
                .iter()
                .map(|b| (b.row.function.as_str(), b.rule.text.as_str()))
                .collect()
        };
        // "tiny" grew 9x in calls and time, but stays under a microsecond.
        assert_eq!(
            names(1_000_000),
            [
                ("slower", "exclusive > +10%"),
                ("new", "exclusive > +10%"),
                ("new", "calls > +50%")
            ]
        );
        assert_eq!(
            names(0),
            [
                ("slower", "exclusive > +10%"),
                ("new", "exclusive > +10%"),
                ("new", "calls > +50%"),
                ("tiny", "exclusive > +10%"),
                ("tiny", "calls > +50%")
            ]
        );
        let mut out = Vec::new();
        assert_eq!(
            diff.write_gate(&rules, 1_000_000, None, &mut out).unwrap(),
            2
        );
        let text = String::from_utf8(out).unwrap();
        assert!(
            text.starts_with("### hookprof diff: 2 regressions\n"),
            "{text}"
        );
        assert!(
            text.contains("| `slower` | `exclusive > +10%` | 1.000 ms | 1.150 ms | +15.0% |"),
            "{text}"
        );
        assert!(
            text.contains("| `new` | `exclusive > +10%` | 0 ns | 3.000 ms | new |"),
            "{text}"
        );
        assert!(text.contains("functions under 1.000 ms left out"), "{text}");
        // The verdict says which time it judged.
        assert!(
            text.contains("\n\nTimes: CPU time (--time=cpu).\n"),
            "{text}"
        );
    }

    #[test]
    fn names_stay_one_markdown_cell() {
        assert_eq!(markdown_code("a|b"), "`a\\|b`");
        assert_eq!(markdown_code("operator`"), "`` operator` ``");
    }
}
