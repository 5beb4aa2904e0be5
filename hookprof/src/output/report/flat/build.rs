//! [`FlatReport`]: a flat profile built from a replay's profile.

use std::collections::HashMap;

use crate::analysis::model::{FunctionStats, Profile};
use crate::analysis::replay::TimeBasis;
use crate::analysis::replay::TraceSummary;
use crate::input::symbols::{function_labels, hex_name, Resolve};
use crate::output::report::columns::{human_time, TextOptions};

use super::rows::*;

/// A flat profile ready to be rendered.
#[derive(Clone, Debug, PartialEq)]
pub struct FlatReport {
    pub summary: Summary,
    pub per_thread: bool,
    /// Sorted by exclusive time descending, ties by function name then address; with
    /// `per_thread`, grouped by thread first (threads in sequence order).
    pub rows: Vec<Row>,
    /// The order the rows are in ([`FlatReport::sort_and_limit`]'s, after its fall-back from
    /// sampled to exclusive time when samples are too few).
    pub sort: SortKey,
    /// How the text format lays the rows out.
    pub text: TextOptions,
}

impl FlatReport {
    /// Builds the flat profile of `profile`, naming addresses with `names`.
    pub fn build(profile: &Profile, names: &mut dyn Resolve, per_thread: bool) -> FlatReport {
        let s = &profile.summary;
        let unit = match s.ticks_per_second() {
            Some(ticks_per_second) => Unit::Nanoseconds { ticks_per_second },
            None => Unit::Ticks,
        };
        // Same-named functions (static ones of different files) told apart.
        let (named, unknown) = function_labels(profile.addresses(), names);
        // Samples: their period in the report's unit (they need the trace's clock rate).
        let (samples, sampled_in_functions) = s.samples();
        let sample_period = match unit {
            Unit::Nanoseconds { .. } if s.sample_period_ns != 0 => Some(s.sample_period_ns),
            _ => None,
        };
        // Sampled self time: each sample to the traced function at its address, else to the
        // top frame then (code without hooks is its caller's).
        let mut owners = SampleOwners::new(profile, names);
        // Calls of throttled functions counted without records: the process's (THROTTLE
        // chunks) in the merged rows, each thread's (its COUNTED chunks) in its rows.
        let counted = s.counted_calls();
        let mut rows = Vec::new();
        let mut push_rows = |functions: &crate::analysis::ids::HashMap<u64, FunctionStats>,
                             samples: &crate::analysis::ids::HashMap<(u64, u64), u64>,
                             counted: &crate::analysis::ids::HashMap<u64, u64>,
                             thread: Option<u64>,
                             group: usize| {
            let self_samples = owners.self_samples(samples);
            // A thread may have only counted calls of a function timed in other threads.
            let untimed = FunctionStats::default();
            let counted_only = counted
                .keys()
                .filter(|a| !functions.contains_key(a))
                .map(|a| (a, &untimed));
            for (&address, stats) in functions.iter().chain(counted_only) {
                if stats.calls == 0 && counted.get(&address).is_none_or(|&c| c == 0) {
                    // Only unmatched exits: counted in the summary, no time to show.
                    continue;
                }
                let function = named
                    .get(&address)
                    .cloned()
                    .unwrap_or_else(|| hex_name(address));
                let mut r = row(unit, thread, function, address, stats);
                r.counted = counted.get(&address).copied().unwrap_or(0);
                r.calls = r.calls.saturating_add(r.counted);
                r.on_cpu = s.time == TimeBasis::Cpu;
                if s.has_switches {
                    r.offcpu = Some(OffCpu {
                        inclusive: unit.convert(stats.inclusive_offcpu_ticks),
                        exclusive: unit.convert(stats.exclusive_offcpu_ticks),
                    });
                }
                if let Some(period) = sample_period {
                    // Self by the samples' addresses, total by their instants, which come up
                    // to microseconds later: a short function on top at a sample's address
                    // can be closed at its instant. Its total is at least its self.
                    let own = self_samples.get(&address).copied().unwrap_or(0);
                    r.sampled = Some(Sampled {
                        self_time: own.saturating_mul(period),
                        total: stats.sampled_total.max(own).saturating_mul(period),
                        percent: share(own, sampled_in_functions),
                    });
                }
                rows.push((group, r));
            }
        };
        if per_thread {
            for (group, (thread, summary)) in profile.threads.iter().zip(&s.threads).enumerate() {
                let table = &thread.table;
                push_rows(
                    &table.functions,
                    &table.samples,
                    &summary.counted,
                    Some(summary.label()),
                    group,
                );
            }
        } else {
            push_rows(
                &profile.merged_functions(),
                &profile.merged_samples(),
                &counted,
                None,
                0,
            );
        }
        rows.sort_by(|(ga, a), (gb, b)| {
            ga.cmp(gb)
                .then(b.exclusive_ticks.cmp(&a.exclusive_ticks))
                .then_with(|| a.function.cmp(&b.function))
                .then(a.address.cmp(&b.address))
        });
        let mut rows: Vec<Row> = rows.into_iter().map(|(_, r)| r).collect();
        let total_ticks: u128 = rows.iter().map(|r| u128::from(r.exclusive_ticks)).sum();
        for r in &mut rows {
            r.entry_point = names.entry_point(r.address);
            r.percent = if total_ticks == 0 {
                0.0
            } else {
                let p = r.exclusive_ticks as f64 * 100.0 / total_ticks as f64;
                (p * 100.0).round() / 100.0
            };
        }
        let total_exclusive = unit.convert(u64::try_from(total_ticks).unwrap_or(u64::MAX));
        let thread_list = s
            .threads
            .iter()
            .map(|t| ThreadLine {
                thread: t.label(),
                tid: t.tid,
                name: t.name.clone(),
                records: t.records,
                lost: t.lost,
                unmatched_entries: t.unmatched_entries,
                unmatched_exits: t.unmatched_exits,
                closed_at_end: t.closed_at_end,
            })
            .collect();
        FlatReport {
            summary: Summary {
                complete: s.finished(),
                unit,
                threads: s.threads.len(),
                records: s.records,
                lost: s.lost(),
                unmatched_entries: s.unmatched_entries(),
                unmatched_exits: s.unmatched_exits(),
                closed_at_end: s.closed_at_end(),
                closed_by_longjmp: s.closed_by_longjmp(),
                ring: (s.ring_windows > 0).then(|| {
                    (
                        s.ring_windows,
                        s.ring_dropped,
                        s.entered_before_window(),
                        s.closed_at_gap(),
                    )
                }),
                stream_loss: (s.lost_markers > 0)
                    .then(|| (s.lost_markers, s.closed_at_gap(), s.entered_before_window())),
                folded: (s.folded_calls > 0 || s.folded_min_ticks > 0)
                    .then(|| (s.folded_calls, unit.convert(s.folded_min_ticks))),
                unknown_addresses: unknown,
                throttled: s
                    .throttle
                    .as_ref()
                    .filter(|t| !t.functions.is_empty())
                    .map(|t| Throttled {
                        functions: t.functions.iter().filter(|f| f.counted > 0).count() as u64,
                        counted: t.functions.iter().map(|f| f.counted).sum(),
                        min_calls: t.min_calls,
                        factor: t.factor,
                        count_cost: s
                            .overhead
                            .filter(|o| s.compensated && o.count_calls > 0 && s.count_marks() > 0)
                            .map(|o| (unit.convert(o.count_ticks), o.count_calls)),
                    }),
                compensation: s
                    .overhead
                    .filter(|_| s.compensated)
                    .map(|o| (unit.convert(o.self_ticks), unit.convert(o.child_ticks))),
                total_exclusive,
                total_calls: rows.iter().map(|r| r.calls).sum(),
                switches: s.has_switches.then_some((s.switches, s.switches_lost)),
                samples: sample_period.map(|period| SampleSummary {
                    in_functions: sampled_in_functions,
                    outside: samples - sampled_in_functions,
                    in_hooks: s.samples_in_hooks,
                    period,
                }),
                thread_list,
                lacking: lacking(s),
                time: s.time,
            },
            per_thread,
            rows,
            sort: SortKey::Exclusive,
            text: TextOptions::default(),
        }
    }

    /// The flat profile of several traces together (`hookprof report A B …`, all threads of
    /// all processes): rows of the same function name added up (calls, times, callers,
    /// unmatched counts; shortest and longest call), the summaries' counts added. The traces
    /// must share a unit (all with a clock rate, or none); times are in that unit already, so
    /// traces of different clock rates add up. Not for `per_thread` or percentiles reports.
    pub fn merge(reports: Vec<FlatReport>) -> FlatReport {
        let mut reports = reports.into_iter();
        let mut merged = reports.next().expect("at least one report");
        let mut index: HashMap<String, usize> = merged
            .rows
            .iter()
            .enumerate()
            .map(|(i, r)| (r.function.clone(), i))
            .collect();
        let ns_unit = |u: Unit| match u {
            Unit::Nanoseconds { .. } => Unit::Nanoseconds {
                ticks_per_second: 1_000_000_000,
            },
            Unit::Ticks => Unit::Ticks,
        };
        for row in &mut merged.rows {
            row.exclusive_ticks = row.exclusive;
        }
        for report in reports {
            let (s, t) = (&mut merged.summary, report.summary);
            if s.unit != t.unit {
                s.unit = ns_unit(s.unit);
            }
            s.complete &= t.complete;
            s.threads += t.threads;
            s.records += t.records;
            s.lost += t.lost;
            s.unmatched_entries += t.unmatched_entries;
            s.unmatched_exits += t.unmatched_exits;
            s.closed_at_end += t.closed_at_end;
            s.closed_by_longjmp += t.closed_by_longjmp;
            s.ring = add4(s.ring, t.ring);
            s.stream_loss = add3(s.stream_loss, t.stream_loss);
            s.folded = match (s.folded, t.folded) {
                (Some(a), Some(b)) => Some((a.0 + b.0, a.1.max(b.1))),
                (a, b) => a.or(b),
            };
            s.unknown_addresses += t.unknown_addresses;
            s.throttled = match (s.throttled, t.throttled) {
                (Some(a), Some(b)) => Some(Throttled {
                    functions: a.functions + b.functions,
                    counted: a.counted + b.counted,
                    ..a
                }),
                (a, b) => a.or(b),
            };
            if s.compensation != t.compensation {
                s.compensation = None;
            }
            s.total_exclusive += t.total_exclusive;
            s.total_calls += t.total_calls;
            s.switches = match (s.switches, t.switches) {
                (Some(a), Some(b)) => Some((a.0 + b.0, a.1 + b.1)),
                (a, b) => a.or(b),
            };
            s.samples = match (s.samples, t.samples) {
                (Some(a), Some(b)) => Some(SampleSummary {
                    in_functions: a.in_functions + b.in_functions,
                    outside: a.outside + b.outside,
                    in_hooks: a.in_hooks + b.in_hooks,
                    period: a.period.max(b.period),
                }),
                (a, b) => a.or(b),
            };
            s.thread_list.extend(t.thread_list);
            s.lacking = s.lacking.take().filter(|_| t.lacking.is_some());
            for mut row in report.rows {
                row.exclusive_ticks = row.exclusive;
                let Some(&i) = index.get(&row.function) else {
                    index.insert(row.function.clone(), merged.rows.len());
                    merged.rows.push(row);
                    continue;
                };
                let m = &mut merged.rows[i];
                m.min = if m.calls == 0 {
                    row.min
                } else {
                    m.min.min(row.min)
                };
                m.max = m.max.max(row.max);
                m.calls += row.calls;
                m.inclusive += row.inclusive;
                m.exclusive += row.exclusive;
                m.exclusive_ticks += row.exclusive;
                m.unmatched_entries += row.unmatched_entries;
                m.unmatched_exits += row.unmatched_exits;
                m.closed_at_end += row.closed_at_end;
                m.percentiles = None;
                m.offcpu = match (m.offcpu, row.offcpu) {
                    (Some(a), Some(b)) => Some(OffCpu {
                        inclusive: a.inclusive + b.inclusive,
                        exclusive: a.exclusive + b.exclusive,
                    }),
                    (a, b) => a.or(b),
                };
                m.sampled = match (m.sampled, row.sampled) {
                    (Some(a), Some(b)) => Some(Sampled {
                        self_time: a.self_time + b.self_time,
                        total: a.total + b.total,
                        percent: 0.0,
                    }),
                    (a, b) => a.or(b),
                };
                if let (Some(into), Some(from)) = (&mut m.callers, row.callers) {
                    for (caller, calls) in from {
                        match into.iter_mut().find(|(n, _)| *n == caller) {
                            Some(entry) => entry.1 += calls,
                            None => into.push((caller, calls)),
                        }
                    }
                    into.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
                }
            }
        }
        let total: u128 = merged.rows.iter().map(|r| u128::from(r.exclusive)).sum();
        let sampled_total: u64 = merged
            .rows
            .iter()
            .filter_map(|r| r.sampled)
            .map(|s| s.self_time)
            .sum();
        for r in &mut merged.rows {
            if let Some(sampled) = &mut r.sampled {
                sampled.percent = share(sampled.self_time, sampled_total);
            }
            r.avg = r.inclusive.checked_div(r.calls).unwrap_or(0);
            r.percent = if total == 0 {
                0.0
            } else {
                ((r.exclusive as f64 * 100.0 / total as f64) * 100.0).round() / 100.0
            };
        }
        merged.rows.sort_by(|a, b| {
            b.exclusive
                .cmp(&a.exclusive)
                .then_with(|| a.function.cmp(&b.function))
                .then(a.address.cmp(&b.address))
        });
        merged
    }

    /// Sorts the rows by `key` (within each thread with `per_thread`; ties by name, then
    /// address) and keeps the first `top` (of each thread). Percentages stay shares of the
    /// whole profile.
    pub fn sort_and_limit(&mut self, key: SortKey, top: Option<usize>) {
        // Too few samples rank functions by chance: then the exclusive order.
        let key = match (key, self.summary.samples) {
            (SortKey::Sampled, Some(s)) if s.in_functions < SampleSummary::TO_ORDER => {
                SortKey::Exclusive
            }
            (SortKey::Sampled, None) => SortKey::Exclusive,
            (key, _) => key,
        };
        self.sort = key;
        let mut groups: Vec<Option<u64>> = Vec::new();
        for r in &self.rows {
            if !groups.contains(&r.thread) {
                groups.push(r.thread);
            }
        }
        let group = |r: &Row| groups.iter().position(|g| *g == r.thread).unwrap_or(0);
        // Sampled: rows of as many samples (none, in a short run) by exclusive time.
        let value = |r: &Row| match key {
            SortKey::Exclusive => (r.exclusive_ticks, 0),
            SortKey::Sampled => r
                .sampled
                .map_or((r.exclusive_ticks, 0), |s| (s.self_time, r.exclusive_ticks)),
            SortKey::Inclusive => (r.inclusive, 0),
            SortKey::Calls => (r.calls, 0),
            SortKey::Avg => (r.avg, 0),
            SortKey::Max => (r.max, 0),
            SortKey::Name => (0, 0),
        };
        self.rows.sort_by(|a, b| {
            group(a)
                .cmp(&group(b))
                .then(value(b).cmp(&value(a)))
                .then_with(|| a.function.cmp(&b.function))
                .then(a.address.cmp(&b.address))
        });
        if let Some(top) = top {
            let mut kept: Vec<usize> = vec![0; groups.len()];
            self.rows.retain(|r| {
                let g = group(r);
                kept[g] += 1;
                kept[g] <= top
            });
        }
    }

    /// Fills every row's `callers` from the arcs of `profile` (of the row's thread with
    /// `per_thread`).
    pub fn add_callers(&mut self, profile: &Profile, names: &mut dyn Resolve) {
        // (thread, callee) → (caller, calls).
        type Callers = HashMap<(Option<u64>, u64), Vec<(String, u64)>>;
        let mut callers: Callers = HashMap::new();
        // The rows' labels, so a caller reads as its own row does.
        let (labels, _) = function_labels(profile.addresses(), names);
        let name = |address: Option<u64>| match address {
            None => "<spontaneous>".to_string(),
            Some(a) => labels.get(&a).cloned().unwrap_or_else(|| hex_name(a)),
        };
        let mut add = |thread: Option<u64>,
                       arcs: &crate::analysis::ids::HashMap<
            crate::analysis::model::Arc,
            crate::analysis::model::ArcStats,
        >| {
            for (arc, stats) in arcs {
                let list = callers.entry((thread, arc.callee)).or_default();
                let caller = name(arc.caller);
                match list.iter_mut().find(|(n, _)| *n == caller) {
                    Some(entry) => entry.1 += stats.calls,
                    None => list.push((caller, stats.calls)),
                }
            }
        };
        if self.per_thread {
            for (thread, summary) in profile.threads.iter().zip(&profile.summary.threads) {
                add(Some(summary.label()), &thread.table.arcs);
            }
        } else {
            add(None, &profile.merged().arcs);
        }
        for row in &mut self.rows {
            let mut list = callers
                .remove(&(row.thread, row.address))
                .unwrap_or_default();
            list.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
            row.callers = Some(list);
        }
    }

    /// Whether the rows carry the callers.
    pub fn has_callers(&self) -> bool {
        self.rows.iter().any(|r| r.callers.is_some())
    }

    /// `caller×calls, …` of a row.
    pub fn callers_text(row: &Row, separator: &str) -> String {
        row.callers
            .iter()
            .flatten()
            .map(|(name, calls)| format!("{name}×{calls}"))
            .collect::<Vec<_>>()
            .join(separator)
    }

    /// Whether the rows carry percentiles.
    pub fn has_percentiles(&self) -> bool {
        self.rows.iter().any(|r| r.percentiles.is_some())
    }

    /// The summary as one line: [`FlatReport::summary_items`] joined.
    pub fn summary_line(&self) -> String {
        self.summary_items().join(", ")
    }

    /// The summary's items (the text format's last lines, wrapped between them): counts,
    /// then what the times are made of and what the trace lacks. Times in human units.
    pub fn summary_items(&self) -> Vec<String> {
        let s = &self.summary;
        let t = |v: u64| match s.unit {
            Unit::Nanoseconds { .. } => human_time(v),
            Unit::Ticks => format!("{v} ticks"),
        };
        let mut items = vec![
            format!("threads: {}", s.threads),
            format!("records: {}", s.records),
            format!("lost: {}", s.lost),
            format!("unmatched entries: {}", s.unmatched_entries),
            format!("unmatched exits: {}", s.unmatched_exits),
            format!("closed at end: {}", s.closed_at_end),
        ];
        // Shown only when a longjmp closed frames.
        if s.closed_by_longjmp != 0 {
            items.push(format!("closed by longjmp: {}", s.closed_by_longjmp));
        }
        items.push(format!("unknown addresses: {}", s.unknown_addresses));
        if let Some((inside, outside)) = s.compensation {
            items.push(format!(
                "hook time subtracted: {} per call and {} per call made inside it",
                t(inside),
                t(outside)
            ));
        }
        if let Some((windows, dropped, before, gap)) = s.ring {
            items.push(format!(
                "ring: {windows} windows ({dropped} records dropped before them, {before} calls entered before them not counted, {gap} closed at a gap)"
            ));
        }
        if let Some((places, closed, before)) = s.stream_loss {
            items.push(format!(
                "the stream lost records at {places} places ({closed} frames closed there, {before} calls entered before them not counted)"
            ));
        }
        if let Some((calls, below)) = s.folded {
            items.push(format!(
                "{calls} calls under {} left out of the trace's records \
                 (HOOKCC_MIN_DURATION; counted here, not in a timeline)",
                t(below)
            ));
        }
        if let Some(th) = s.throttled {
            // Its settings are in docs/recording.md and `hookprof info`.
            items.push(format!(
                "throttled [timed first N]: {} {}, {} later calls counted untimed \
                 (HOOKCC_THROTTLE=0 times all)",
                th.functions,
                if th.functions == 1 {
                    "function"
                } else {
                    "functions"
                },
                th.counted
            ));
            // An item of its own: the line breaks between items.
            if let Some((time, calls)) = th.count_cost {
                items.push(format!(
                    "counted calls' cost subtracted: {} per {calls}",
                    t(time)
                ));
            }
        }
        if s.time == TimeBasis::Cpu {
            items.push("times on CPU (switched-out time left out)".to_string());
        }
        if let Some((switches, lost)) = s.switches {
            let mut item = format!("context switches: {switches}");
            if lost != 0 {
                item.push_str(&format!(
                    " ({lost} more dropped by the kernel: off-CPU times are lower bounds)"
                ));
            }
            items.push(item);
        }
        if let Some(samples) = s.samples {
            items.push(format!(
                "samples: {} in functions, one every {} of CPU time ({} with no function open, {} in the hooks, left out)",
                samples.in_functions,
                t(samples.period),
                samples.outside,
                samples.in_hooks
            ));
            if samples.in_functions < SampleSummary::TO_ORDER {
                items.push(format!(
                    "too few to rank functions by (under {}: --sort=sampled orders by exclusive time)",
                    SampleSummary::TO_ORDER
                ));
            }
        }
        if let Some(lacking) = &s.lacking {
            items.push(lacking.clone());
        }
        if !s.complete {
            items.push("trace incomplete".to_string());
        }
        items
    }
}

/// Why a trace's report has neither on/off-CPU nor sampled columns, if it has neither.
fn lacking(s: &TraceSummary) -> Option<String> {
    if s.has_switches || s.sample_period_ns != 0 {
        return None;
    }
    let why = if s.profile_chunks > 0 {
        "HOOKCC_MODE=profile records no context switches or samples"
    } else if s.ring_windows > 0 {
        "HOOKCC_MODE=ring records no context switches or samples"
    } else if s.records_skipped {
        "a HOOKCC_MIN_DURATION report comes from call trees, without switches or samples"
    } else {
        "no context switch or sample in the trace (none in a short run; Linux only)"
    };
    Some(format!("no on/off-CPU or sampled columns: {why}"))
}

fn row(unit: Unit, thread: Option<u64>, function: String, address: u64, s: &FunctionStats) -> Row {
    Row {
        thread,
        function,
        address,
        entry_point: address,
        calls: s.calls,
        inclusive: unit.convert(s.inclusive_ticks),
        exclusive: unit.convert(s.exclusive_ticks),
        min: unit.convert(s.min_ticks),
        max: unit.convert(s.max_ticks),
        avg: unit.convert(s.avg_ticks()),
        percent: 0.0,
        unmatched_entries: s.unmatched_entries,
        unmatched_exits: s.unmatched_exits,
        closed_at_end: s.closed_at_end,
        counted: 0,
        percentiles: None,
        callers: None,
        offcpu: None,
        sampled: None,
        exclusive_ticks: s.exclusive_ticks,
        on_cpu: false,
    }
}

/// Which traced function each sampled address is in: the function whose symbol holds it
/// (the same ELF symbol as a traced entry point's), by the symbols of the report.
struct SampleOwners<'a> {
    names: &'a mut dyn Resolve,
    /// A traced function's entry point by its symbol (ELF file, symbol address).
    traced: HashMap<(std::path::PathBuf, u64), u64>,
    /// Addresses looked up so far: the traced function they are in, if any.
    cache: HashMap<u64, Option<u64>>,
}

impl<'a> SampleOwners<'a> {
    fn new(profile: &Profile, names: &'a mut dyn Resolve) -> Self {
        let mut traced = HashMap::new();
        if profile.summary.sample_period_ns != 0 {
            for address in profile.addresses() {
                if let Some(o) = names.origin(address) {
                    traced.insert((o.module, o.symbol_address), address);
                }
            }
        }
        SampleOwners {
            names,
            traced,
            cache: HashMap::new(),
        }
    }

    /// Samples per function entry point, from samples by (address, top frame's entry point).
    fn self_samples(
        &mut self,
        samples: &crate::analysis::ids::HashMap<(u64, u64), u64>,
    ) -> HashMap<u64, u64> {
        let mut by_function = HashMap::new();
        for (&(ip, top), &n) in samples {
            let owner = match self.cache.get(&ip) {
                Some(&owner) => owner,
                None => {
                    let owner = self
                        .names
                        .origin(ip)
                        .and_then(|o| self.traced.get(&(o.module, o.symbol_address)).copied());
                    self.cache.insert(ip, owner);
                    owner
                }
            };
            *by_function.entry(owner.unwrap_or(top)).or_default() += n;
        }
        by_function
    }
}

/// `part` of `whole` in percent, to two decimals (0 of nothing).
fn share(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        ((part as f64 * 100.0 / whole as f64) * 100.0).round() / 100.0
    }
}

fn add3(a: Option<(u64, u64, u64)>, b: Option<(u64, u64, u64)>) -> Option<(u64, u64, u64)> {
    match (a, b) {
        (Some(a), Some(b)) => Some((a.0 + b.0, a.1 + b.1, a.2 + b.2)),
        (a, b) => a.or(b),
    }
}

fn add4(
    a: Option<(u64, u64, u64, u64)>,
    b: Option<(u64, u64, u64, u64)>,
) -> Option<(u64, u64, u64, u64)> {
    match (a, b) {
        (Some(a), Some(b)) => Some((a.0 + b.0, a.1 + b.1, a.2 + b.2, a.3 + b.3)),
        (a, b) => a.or(b),
    }
}
