//! The Dynamic Call Graph (seeds/ti-dynamic-call-graph.txt): per thread (or task), a gprof-like
//! table in which every function appears once as the *function of interest*, with its
//! immediate parents above it and its immediate children below. Columns are separated by tabs
//! (shown as spaces here):
//!
//! ```text
//! =====
//! Thread: _TSK2
//! =====
//! index    excl_cycles    called    name
//!     4181834    1727/3455    p2 [3]
//!     2110276    1728/3455    p1 [2]
//! [0]    6292110    3455    child [0]
//!     668    4/7    prdfxn0 [4]
//!
//!         <spontaneous>
//! [1]    1159064    1    task [1]
//! ```
//!
//! - the function of interest: `[index]`, its total exclusive cycles, its number of calls,
//!   its name and index; functions are indexed by total exclusive cycles, descending;
//! - a parent line: the exclusive cycles of the function of interest when called from that
//!   parent, calls from that parent / all calls of the function of interest;
//! - a child line: the child's exclusive cycles when called from the function of interest,
//!   calls from here / all calls of the child;
//! - `<spontaneous>` stands above a function that was entered with nothing below it on the
//!   stack (a thread's or task's root).
//!
//! Parents and children are sorted by their cycles, descending. The time column is named
//! after the unit it holds ([`Times`]): `excl_cycles` for a TI dump (the seed's name: its
//! timestamps are the CPU's cycles), `excl_ns` for a native trace with a clock rate,
//! `excl_ticks` for one without. The `=====` and `Thread:` lines end in three tabs, as the
//! seed's do (tools that read it split lines on tabs); an address no symbol names is
//! `UNKNOWN`, as in the seed's FAQ (a TI dump's names come from its analysis: `?function #n`);
//! threads sharing a name get their thread id in the title. A thread (or task) without a call
//! has no section: the seed's tool shows functions, and a task that only ran between
//! switches called none.

use std::collections::HashMap;
use std::io::{self, Write};

use crate::analysis::model::{Arc, ArcStats, Profile};
use crate::input::symbols::{Resolve, UNKNOWN};
use crate::output::report::flat::Unit;

/// What the trace's ticks are, which names the time column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Times {
    /// A TI dump's replay: ticks are CPU cycles, the column the seed's `excl_cycles`.
    Cycles,
    /// A native trace: nanoseconds (`excl_ns`) when it has a clock rate, else raw ticks
    /// (`excl_ticks`).
    Trace,
}

/// Writes the call graph of every thread of `profile`.
pub fn render(
    profile: &Profile,
    names: &mut dyn Resolve,
    times: Times,
    out: &mut dyn Write,
) -> io::Result<()> {
    let (column, unit) = match times {
        Times::Cycles => ("excl_cycles", Unit::Ticks),
        Times::Trace => match profile.summary.ticks_per_second() {
            Some(ticks_per_second) => ("excl_ns", Unit::Nanoseconds { ticks_per_second }),
            None => ("excl_ticks", Unit::Ticks),
        },
    };
    let mut cache: HashMap<u64, String> = HashMap::new();
    let mut name_of = |address: u64| -> String {
        cache
            .entry(address)
            .or_insert_with(|| {
                names
                    .resolve(address)
                    .unwrap_or_else(|| UNKNOWN.to_string())
            })
            .clone()
    };
    // Threads that share a name (threads inherit the program's name unless they set one) are
    // told apart by their thread ids.
    let mut named: HashMap<&str, usize> = HashMap::new();
    for summary in &profile.summary.threads {
        if let Some(name) = summary.name.as_deref().filter(|n| !n.is_empty()) {
            *named.entry(name).or_default() += 1;
        }
    }
    for (thread, summary) in profile.threads.iter().zip(&profile.summary.threads) {
        let table = &thread.table;
        let title = match summary.name.as_deref().filter(|n| !n.is_empty()) {
            Some(name) if named[name] > 1 => format!("{name} (tid {})", summary.tid),
            Some(name) => name.to_string(),
            None => format!("tid {}", summary.tid),
        };
        // Index functions by total exclusive cycles, descending (ties by name).
        let mut order: Vec<(u64, String)> = table
            .functions
            .iter()
            .filter(|(_, s)| s.calls > 0)
            .map(|(&a, _)| (a, name_of(a)))
            .collect();
        if order.is_empty() {
            // No call in this thread (a task that only ran between switches): no section.
            continue;
        }
        // The seed's separator and title lines end in three tabs (four columns).
        writeln!(out, "=====\t\t\t\nThread: {title}\t\t\t\n=====\t\t\t")?;
        writeln!(out, "index\t{column}\tcalled\tname")?;
        order.sort_by(|(a, an), (b, bn)| {
            let (sa, sb) = (&table.functions[a], &table.functions[b]);
            sb.exclusive_ticks
                .cmp(&sa.exclusive_ticks)
                .then_with(|| an.cmp(bn))
                .then(a.cmp(b))
        });
        let index: HashMap<u64, usize> = order
            .iter()
            .enumerate()
            .map(|(i, (a, _))| (*a, i))
            .collect();
        let label = |address: u64, name: &str| match index.get(&address) {
            Some(i) => format!("{name} [{i}]"),
            None => name.to_string(),
        };

        let mut parents: HashMap<u64, Vec<(&Arc, &ArcStats)>> = HashMap::new();
        let mut children: HashMap<u64, Vec<(&Arc, &ArcStats)>> = HashMap::new();
        for (arc, stats) in &table.arcs {
            parents.entry(arc.callee).or_default().push((arc, stats));
            if let Some(caller) = arc.caller {
                children.entry(caller).or_default().push((arc, stats));
            }
        }
        let by_cycles = |list: &mut Vec<(&Arc, &ArcStats)>| {
            list.sort_by(|(a, sa), (b, sb)| {
                sb.exclusive_ticks.cmp(&sa.exclusive_ticks).then(a.cmp(b))
            });
        };

        for (i, (address, name)) in order.iter().enumerate() {
            let stats = &table.functions[address];
            let mut ups = parents.remove(address).unwrap_or_default();
            by_cycles(&mut ups);
            for (arc, arc_stats) in &ups {
                match arc.caller {
                    Some(caller) => {
                        let caller_name = name_of(caller);
                        writeln!(
                            out,
                            "\t{}\t{}/{}\t{}",
                            unit.convert(arc_stats.exclusive_ticks),
                            arc_stats.calls,
                            stats.calls,
                            label(caller, &caller_name)
                        )?
                    }
                    None => writeln!(out, "\t\t<spontaneous>\t")?,
                }
            }
            writeln!(
                out,
                "[{i}]\t{}\t{}\t{}",
                unit.convert(stats.exclusive_ticks),
                stats.calls,
                label(*address, name)
            )?;
            let mut downs = children.remove(address).unwrap_or_default();
            by_cycles(&mut downs);
            for (arc, arc_stats) in &downs {
                let callee_calls = table.functions.get(&arc.callee).map_or(0, |s| s.calls);
                let callee_name = name_of(arc.callee);
                writeln!(
                    out,
                    "\t{}\t{}/{}\t{}",
                    unit.convert(arc_stats.exclusive_ticks),
                    arc_stats.calls,
                    callee_calls,
                    label(arc.callee, &callee_name)
                )?;
            }
            writeln!(out)?;
        }
    }
    Ok(())
}
