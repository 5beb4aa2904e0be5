//! The values the commands' arguments share, parsed: durations, time ranges, sizes, hex
//! addresses, and which time a view counts.

use clap::ValueEnum;

/// `--time`: which time the views count.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum TimeArg {
    /// The wall clock: from a call's entry to its exit, running or waiting.
    Wall,
    /// Only the time the thread ran: switched-out time (blocked, preempted) left out.
    Cpu,
}

impl From<TimeArg> for crate::analysis::replay::TimeBasis {
    fn from(t: TimeArg) -> Self {
        match t {
            TimeArg::Wall => Self::Wall,
            TimeArg::Cpu => Self::Cpu,
        }
    }
}

/// `START..END` with either side optional, each a duration as [`parse_duration`] takes it.
pub fn parse_time_range(text: &str) -> Result<(u64, u64), String> {
    let Some((start, end)) = text.split_once("..") else {
        return Err(format!(
            "{text:?} is not a time range such as 10ms..20ms, 2s.. or ..500us"
        ));
    };
    let start = if start.trim().is_empty() {
        0
    } else {
        parse_duration(start)?
    };
    let end = if end.trim().is_empty() {
        u64::MAX
    } else {
        parse_duration(end)?
    };
    if end <= start {
        return Err(format!("{text:?}: the range ends before it starts"));
    }
    Ok((start, end))
}

/// A size in bytes, with an optional unit: K, M, G, T (powers of 1024; `B` or `iB` may follow).
pub fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let unit = unit.trim();
    let unit = unit
        .strip_suffix("iB")
        .or_else(|| unit.strip_suffix('B'))
        .or_else(|| unit.strip_suffix('b'))
        .unwrap_or(unit);
    let shift = match unit {
        "" => 0,
        "k" | "K" => 10,
        "m" | "M" => 20,
        "g" | "G" => 30,
        "t" | "T" => 40,
        other => {
            return Err(format!(
                "{text:?}: unknown unit {other:?} (use K, M, G or T)"
            ))
        }
    };
    let value: u64 = number
        .parse()
        .map_err(|_| format!("{text:?} is not a size such as 512M, 2G or 1000000"))?;
    value
        .checked_mul(1 << shift)
        .ok_or_else(|| format!("{text:?} is too large"))
}

/// A duration with its unit (`ns`, `us`, `ms`, `s`; only `0` without) in nanoseconds.
pub fn parse_duration(text: &str) -> Result<u64, String> {
    crate::analysis::view::parse_duration(text)
}

pub fn parse_hex(s: &str) -> Result<u64, String> {
    let digits = s
        .strip_prefix("0x")
        .or_else(|| s.strip_prefix("0X"))
        .unwrap_or(s);
    u64::from_str_radix(digits, 16).map_err(|e| format!("{s:?} is not a hex address: {e}"))
}
