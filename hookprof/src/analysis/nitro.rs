//! A NITRO function cost measurement buffer analysed: its calls paired as `OS_CalcStatistics`
//! pairs them ([`FunctionCost::summarize`]). Its conversion for the views is
//! [`crate::input::nitro_trace`]'s.

use std::collections::HashMap;

use crate::input::nitro::{FunctionCost, StatLine, EXIT_TAG};

/// What summarizing a measurement buffer gives: what `OS_CalcStatistics` would add to an
/// empty statistics buffer of unlimited capacity.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    /// In the order functions were first summarized.
    pub lines: Vec<StatLine>,
    /// Exits found without an entry.
    pub unmatched_exits: u64,
    /// Calls in progress at the end of the records (their entries are still open).
    pub open: u64,
    /// The buffer was full (`lost` records): the open calls are dropped, as the runtime does.
    pub lost: u64,
}

impl FunctionCost {
    /// Pairs exits with entries as `OS_CalcStatistics` does (docs/nitro.md, "Function cost
    /// measurement buffer"): a call's cost is its exit tick minus its entry tick minus the
    /// intervals switched out in between, never below 0, and (unless `inclusive`, as a buffer
    /// of `OS_InitStatisticsEx(…, TRUE)` has it) minus the costs of the calls it made. Lines
    /// come in the order of the functions' first entries; a function whose only call is still
    /// in progress has a line with count 0 (the dump leaves it out). The arithmetic wraps as
    /// the runtime's 64-bit unsigned arithmetic does.
    pub fn summarize(&self, inclusive: bool) -> Summary {
        let mut summary = Summary {
            lost: self.lost,
            ..Summary::default()
        };
        let mut index: HashMap<u64, usize> = HashMap::new();
        // Open entries: (line, tick, excluded total before the entry).
        let mut open: Vec<(usize, u64, u64)> = Vec::new();
        // Intervals switched out, and (exclusive costs) the costs of the calls summarized.
        let mut excluded = 0u64;
        for record in &self.records {
            if record.name == EXIT_TAG {
                match open.pop() {
                    None => summary.unmatched_exits += 1,
                    Some((i, tick, before)) => {
                        let elapsed = record.tick.wrapping_sub(tick);
                        let away = excluded.wrapping_sub(before);
                        let cost = elapsed.saturating_sub(away);
                        let line = &mut summary.lines[i];
                        line.count = line.count.wrapping_add(1);
                        line.cost = line.cost.wrapping_add(cost);
                        if !inclusive {
                            excluded = excluded.wrapping_add(cost);
                        }
                    }
                }
            } else {
                let name = record.name;
                let i = *index.entry(name).or_insert_with(|| {
                    summary.lines.push(StatLine {
                        name,
                        count: 0,
                        cost: 0,
                    });
                    summary.lines.len() - 1
                });
                open.push((i, record.tick, excluded));
            }
            excluded = excluded.wrapping_add(record.interval);
        }
        summary.open = open.len() as u64;
        summary
    }
}
