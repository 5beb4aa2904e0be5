//! What the text report shows and how: its columns ([`Column`], `--columns`, `--wide`), times
//! in human units ([`human_time`]), and long C++/Rust names shortened ([`short_name`],
//! `--full-names` keeps them). CSV and JSON keep every column, raw, whatever these say.

use std::fmt;
use std::str::FromStr;

/// A column of the text report. The names are the CSV columns' without their unit (`self`,
/// `total` and `per_call` are also taken for `exclusive`, `inclusive` and `avg`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Column {
    /// The sort key's share of the whole (the exclusive share where the key has none).
    Percent,
    /// The sampled self time (shown beside the traced ones when the rows are in its order).
    SampledSelf,
    Exclusive,
    Inclusive,
    Calls,
    Avg,
    Min,
    Max,
    P50,
    P90,
    P99,
    ExclusiveOncpu,
    ExclusiveOffcpu,
    InclusiveOncpu,
    InclusiveOffcpu,
    SampledTotal,
    SampledPercent,
}

impl Column {
    /// Every column, in the order `--wide` shows them.
    pub const ALL: [Column; 17] = [
        Column::Percent,
        Column::SampledSelf,
        Column::Exclusive,
        Column::Inclusive,
        Column::Calls,
        Column::Avg,
        Column::Min,
        Column::Max,
        Column::P50,
        Column::P90,
        Column::P99,
        Column::ExclusiveOncpu,
        Column::ExclusiveOffcpu,
        Column::InclusiveOncpu,
        Column::InclusiveOffcpu,
        Column::SampledTotal,
        Column::SampledPercent,
    ];

    /// The name `--columns` takes.
    pub fn name(self) -> &'static str {
        match self {
            Column::Percent => "percent",
            Column::SampledSelf => "sampled_self",
            Column::Exclusive => "exclusive",
            Column::Inclusive => "inclusive",
            Column::Calls => "calls",
            Column::Avg => "avg",
            Column::Min => "min",
            Column::Max => "max",
            Column::P50 => "p50",
            Column::P90 => "p90",
            Column::P99 => "p99",
            Column::ExclusiveOncpu => "exclusive_oncpu",
            Column::ExclusiveOffcpu => "exclusive_offcpu",
            Column::InclusiveOncpu => "inclusive_oncpu",
            Column::InclusiveOffcpu => "inclusive_offcpu",
            Column::SampledTotal => "sampled_total",
            Column::SampledPercent => "sampled_percent",
        }
    }

    /// The column's heading in the text report.
    pub fn heading(self) -> &'static str {
        match self {
            Column::Percent => "%",
            Column::SampledSelf => "sampled",
            Column::Exclusive => "self",
            Column::Inclusive => "total",
            Column::Calls => "calls",
            Column::Avg => "per call",
            Column::Min => "min",
            Column::Max => "max",
            Column::P50 => "p50",
            Column::P90 => "p90",
            Column::P99 => "p99",
            Column::ExclusiveOncpu => "self on-CPU",
            Column::ExclusiveOffcpu => "self off-CPU",
            Column::InclusiveOncpu => "total on-CPU",
            Column::InclusiveOffcpu => "total off-CPU",
            Column::SampledTotal => "sampled total",
            Column::SampledPercent => "sampled%",
        }
    }

    /// The columns' names, for messages and `--help`.
    pub fn names() -> String {
        Column::ALL.map(Column::name).join(", ")
    }

    /// Parses `--columns`' comma-separated list.
    pub fn parse_list(text: &str) -> Result<Vec<Column>, String> {
        let list = text
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(Column::from_str)
            .collect::<Result<Vec<_>, _>>()?;
        if list.is_empty() {
            return Err(format!(
                "--columns needs at least one column of: {}",
                Column::names()
            ));
        }
        Ok(list)
    }
}

impl fmt::Display for Column {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Column {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let key = s.to_ascii_lowercase().replace('-', "_");
        let key = key
            .strip_suffix("_ns")
            .or_else(|| key.strip_suffix("_ticks"))
            .unwrap_or(&key);
        let alias = match key {
            "self" => Some(Column::Exclusive),
            "total" => Some(Column::Inclusive),
            "per_call" => Some(Column::Avg),
            _ => None,
        };
        alias
            .or_else(|| Column::ALL.into_iter().find(|c| c.name() == key))
            .ok_or_else(|| {
                format!(
                    "unknown column {s:?} in --columns: expected some of {} (self, total and \
                     per_call are also taken)",
                    Column::names()
                )
            })
    }
}

/// How the text report is laid out (`hookprof report`'s `--columns`, `--wide`,
/// `--full-names`); the CSV and JSON formats ignore it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TextOptions {
    /// These columns, in this order (`--columns`), instead of the default set.
    pub columns: Option<Vec<Column>>,
    /// Every column the report has data for (`--wide`).
    pub wide: bool,
    /// Names as demangled, not shortened.
    pub full_names: bool,
    /// The width a line should fit in (names are shortened to fit it); `None`: 100.
    pub width: Option<usize>,
}

impl TextOptions {
    /// The width lines are fitted to when none is given.
    pub const DEFAULT_WIDTH: usize = 100;
}

/// A duration for people, in three or four significant digits: `456 ns`, `1.23 us`,
/// `45.6 ms`, `2.50 s`, `1234 s`.
pub fn human_time(ns: u64) -> String {
    if ns < 1000 {
        return format!("{ns} ns");
    }
    const UNITS: [(&str, f64); 3] = [("us", 1e3), ("ms", 1e6), ("s", 1e9)];
    for (i, (unit, scale)) in UNITS.iter().enumerate() {
        let v = ns as f64 / scale;
        let text = if v < 9.995 {
            format!("{v:.2}")
        } else if v < 99.95 {
            format!("{v:.1}")
        } else {
            format!("{v:.0}")
        };
        // 999.6 us rounds to 1000: the next unit says it in three digits.
        if text.parse::<f64>().unwrap_or(v) < 1000.0 || i == UNITS.len() - 1 {
            return format!("{text} {unit}");
        }
    }
    unreachable!("the last unit always returns")
}

/// `name` shortened for the text report: template and generic arguments elided (`<…>`),
/// then, if it is still longer than `budget` characters, its parameter list (`(…)`), then
/// its beginning (`…` and the last `budget` characters, where the most specific part is).
pub fn short_name(name: &str, budget: usize) -> String {
    let mut short = elide_brackets(name);
    if short.chars().count() > budget {
        short = unqualify_self(&short);
    }
    if short.chars().count() > budget {
        short = elide_parameters(&short);
    }
    let n = short.chars().count();
    if n > budget && budget > 1 {
        let tail: String = short.chars().skip(n - (budget - 1)).collect();
        short = format!("…{tail}");
    }
    short
}

/// Arguments of templates and generics this long or shorter are kept (`Vec<u8>`,
/// `largest::<i32>`: they tell instances apart at little cost).
const SHORT_ARGUMENTS: usize = 16;

/// Template and generic arguments longer than [`SHORT_ARGUMENTS`] replaced by `…`:
/// `std::vector<std::pair<int, int>>::push_back(int const&)` → `std::vector<…>::push_back(int
/// const&)`. A qualified self (`<T as Trait>::f`, Rust) keeps its outer brackets, its own
/// arguments elided alike: `<Foo<…> as Debug>::fmt`. C++'s `operator<`, `operator<<`,
/// `operator->` … are operators, not brackets.
fn elide_brackets(name: &str) -> String {
    let chars: Vec<char> = name.chars().collect();
    let mut out = String::with_capacity(name.len());
    let mut i = 0;
    while i < chars.len() {
        if let Some(len) = operator_at(&chars, i) {
            out.extend(&chars[i..i + len]);
            i += len;
            continue;
        }
        if chars[i] != '<' {
            out.push(chars[i]);
            i += 1;
            continue;
        }
        let Some(close) = matching(&chars, i) else {
            // Unbalanced (a name this does not understand): as it was.
            return name.to_string();
        };
        let inner: String = chars[i + 1..close].iter().collect();
        if i == 0 {
            out.push('<');
            out.push_str(&elide_brackets(&inner));
            out.push('>');
        } else if close - i - 1 <= SHORT_ARGUMENTS {
            out.extend(&chars[i..=close]);
        } else {
            out.push_str("<…>");
        }
        i = close + 1;
    }
    out
}

/// The `>` that closes the `<` at `open` (operators inside skipped).
fn matching(chars: &[char], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut i = open;
    while i < chars.len() {
        if let Some(len) = operator_at(chars, i) {
            i += len;
            continue;
        }
        match chars[i] {
            '<' => depth += 1,
            '>' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// A qualified self's paths cut to their last segment: `<core::slice::iter::Iter<i32> as
/// core::iter::traits::iterator::Iterator>::next` → `<Iter<i32> as Iterator>::next`.
fn unqualify_self(name: &str) -> String {
    let chars: Vec<char> = name.chars().collect();
    let Some(close) = (chars.first() == Some(&'<'))
        .then(|| matching(&chars, 0))
        .flatten()
    else {
        return name.to_string();
    };
    let mut out = String::from("<");
    let mut ident = String::new();
    let mut i = 1;
    while i < close {
        let c = chars[i];
        if c == ':' && chars.get(i + 1) == Some(&':') {
            ident.clear();
            i += 2;
            continue;
        }
        ident.push(c);
        if !(c.is_alphanumeric() || c == '_') {
            out.push_str(&ident);
            ident.clear();
        }
        i += 1;
    }
    out.push_str(&ident);
    out.extend(&chars[close..]);
    out
}

/// The length of a C++ operator name starting at `i` whose symbol holds `<` or `>`.
fn operator_at(chars: &[char], i: usize) -> Option<usize> {
    const WORD: &str = "operator";
    let word: Vec<char> = WORD.chars().collect();
    if !chars[i..].starts_with(&word) {
        return None;
    }
    // A word of its own (not `my_operator`).
    if i > 0 && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '_') {
        return None;
    }
    let rest: String = chars[i + word.len()..].iter().take(4).collect();
    for op in [
        "<<=", ">>=", "<=>", "->*", "<<", ">>", "<=", ">=", "->", "<", ">",
    ] {
        if rest.starts_with(op) {
            return Some(word.len() + op.chars().count());
        }
    }
    None
}

/// The last top-level parameter list replaced by `(…)`: `f(int, char const*) const` →
/// `f(…) const`. Names without one are returned as they are.
fn elide_parameters(name: &str) -> String {
    let Some(close) = name.rfind(')') else {
        return name.to_string();
    };
    let mut depth = 0usize;
    for (i, c) in name[..=close].char_indices().rev() {
        match c {
            ')' => depth += 1,
            '(' => {
                depth -= 1;
                if depth == 0 {
                    if close == i + 1 {
                        return name.to_string();
                    }
                    return format!("{}(…){}", &name[..i], &name[close + 1..]);
                }
            }
            _ => {}
        }
    }
    name.to_string()
}

/// The width of `text` in a terminal's columns (one a character: the names and units here
/// have no wide characters).
pub fn width(text: &str) -> usize {
    text.chars().count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn human_times() {
        for (ns, text) in [
            (0, "0 ns"),
            (456, "456 ns"),
            (999, "999 ns"),
            (1000, "1.00 us"),
            (1234, "1.23 us"),
            (12_345, "12.3 us"),
            (123_456, "123 us"),
            (999_600, "1.00 ms"),
            (6_400_000, "6.40 ms"),
            (2_500_000_000, "2.50 s"),
            (1_234_000_000_000, "1234 s"),
        ] {
            assert_eq!(human_time(ns), text, "{ns}");
        }
    }

    #[test]
    fn names_shortened() {
        let long = "std::vector<std::pair<int, int>, std::allocator<std::pair<int, int> > >::push_back(std::pair<int, int> const&)";
        assert_eq!(
            short_name(long, 200),
            "std::vector<…>::push_back(std::pair<int, int> const&)"
        );
        assert_eq!(short_name(long, 30), "std::vector<…>::push_back(…)");
        assert_eq!(short_name(long, 20), "…or<…>::push_back(…)");
        assert_eq!(
            short_name("<alloc::vec::Vec<T,A> as core::ops::drop::Drop>::drop", 100),
            "<alloc::vec::Vec<T,A> as core::ops::drop::Drop>::drop"
        );
        assert_eq!(
            short_name("core::ptr::drop_in_place<jaq_core::val::Val>", 100),
            "core::ptr::drop_in_place<…>"
        );
        assert_eq!(
            short_name(
                "<core::iter::adapters::map::Map<I,F> as Iterator>::next",
                100
            ),
            "<core::iter::adapters::map::Map<I,F> as Iterator>::next"
        );
        assert_eq!(
            short_name(
                "<std::collections::HashMap<alloc::string::String,u64> as X>::f",
                100
            ),
            "<std::collections::HashMap<…> as X>::f"
        );
        assert_eq!(
            short_name("calls::largest::<i32>", 100),
            "calls::largest::<i32>"
        );
        assert_eq!(
            short_name(
                "<core::slice::iter::Iter<i32> as core::iter::traits::iterator::Iterator>::next",
                40
            ),
            "<Iter<i32> as Iterator>::next"
        );
        assert_eq!(
            short_name("Big::operator<<(Big const&)", 100),
            "Big::operator<<(Big const&)"
        );
        assert_eq!(
            short_name(
                "bool std::operator< <char, std::char_traits<char>>(std::string const&)",
                100
            ),
            "bool std::operator< <…>(std::string const&)"
        );
        assert_eq!(short_name("parse_expr", 100), "parse_expr");
        assert_eq!(short_name("a<b", 100), "a<b");
    }

    #[test]
    fn columns_parse() {
        assert_eq!(
            Column::parse_list("self,total,calls,per-call,p99,exclusive_oncpu_ns"),
            Ok(vec![
                Column::Exclusive,
                Column::Inclusive,
                Column::Calls,
                Column::Avg,
                Column::P99,
                Column::ExclusiveOncpu
            ])
        );
        assert!(Column::parse_list("self,bogus")
            .unwrap_err()
            .contains("\"bogus\""));
        assert!(Column::parse_list(",").is_err());
    }
}
