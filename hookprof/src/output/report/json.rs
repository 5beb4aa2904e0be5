//! One JSON object: `{"summary": {...}, "threads": [...], "functions": [...]}`. Time fields
//! are named `*_ns`, or `*_ticks` when the trace has no clock rate (`summary.unit` says
//! which). When the trace has the threads' context switches (Linux), the summary has
//! `context_switches` and `context_switches_dropped`, and every function the four on-CPU and
//! off-CPU times (`inclusive_oncpu_ns`, `inclusive_offcpu_ns`, `exclusive_oncpu_ns`,
//! `exclusive_offcpu_ns`). When it has samples of the threads' CPU time, the summary has
//! `samples` (`in_functions`, `outside`, `in_hooks`, `period_ns`) and every function
//! `sampled_self_ns`, `sampled_total_ns` and `sampled_percent`.

use std::io;

use serde::ser::{SerializeMap, Serializer};
use serde::Serialize;

use super::flat::{
    cpu_columns, sampled_columns, FlatReport, ReportFormat, Row, Summary, ThreadLine,
};

pub struct JsonFormat;

impl ReportFormat for JsonFormat {
    fn write(&self, report: &FlatReport, out: &mut dyn io::Write) -> io::Result<()> {
        let mut out = out;
        serde_json::to_writer_pretty(&mut out, &Document(report))?;
        writeln!(out)
    }
}

struct Document<'a>(&'a FlatReport);

impl Serialize for Document<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let report = self.0;
        let mut map = serializer.serialize_map(Some(3))?;
        map.serialize_entry("summary", &SummaryJson(&report.summary))?;
        let threads: Vec<ThreadJson> = report.summary.thread_list.iter().map(ThreadJson).collect();
        map.serialize_entry("threads", &threads)?;
        let unit = report.summary.unit.suffix();
        let rows: Vec<RowJson> = report
            .rows
            .iter()
            .map(|row| RowJson { row, unit })
            .collect();
        map.serialize_entry("functions", &rows)?;
        map.end()
    }
}

struct SummaryJson<'a>(&'a Summary);

impl Serialize for SummaryJson<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let s = self.0;
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("complete", &s.complete)?;
        map.serialize_entry("unit", s.unit.suffix())?;
        match s.unit {
            super::flat::Unit::Nanoseconds { ticks_per_second } => {
                map.serialize_entry("ticks_per_second", &ticks_per_second)?
            }
            super::flat::Unit::Ticks => map.serialize_entry("ticks_per_second", &None::<u64>)?,
        }
        map.serialize_entry("threads", &s.threads)?;
        map.serialize_entry("records", &s.records)?;
        map.serialize_entry("lost", &s.lost)?;
        map.serialize_entry("unmatched_entries", &s.unmatched_entries)?;
        map.serialize_entry("unmatched_exits", &s.unmatched_exits)?;
        map.serialize_entry("closed_at_end", &s.closed_at_end)?;
        map.serialize_entry("unknown_addresses", &s.unknown_addresses)?;
        // The hooks' time subtracted per call: [inside its window, per call made inside it].
        map.serialize_entry(
            &format!("hook_time_subtracted_{}", s.unit.suffix()),
            &s.compensation.map(|(inside, outside)| [inside, outside]),
        )?;
        map.serialize_entry(
            &format!("total_exclusive_{}", s.unit.suffix()),
            &s.total_exclusive,
        )?;
        if let Some((switches, dropped)) = s.switches {
            map.serialize_entry("context_switches", &switches)?;
            map.serialize_entry("context_switches_dropped", &dropped)?;
        }
        // What the time fields count (`--time`): "wall", or "cpu" (switched-out time left out).
        map.serialize_entry(
            "time",
            match s.time {
                super::flat::TimeBasis::Wall => "wall",
                super::flat::TimeBasis::Cpu => "cpu",
            },
        )?;
        if let Some(samples) = s.samples {
            let mut fields = serde_json::Map::new();
            fields.insert("in_functions".into(), samples.in_functions.into());
            fields.insert("outside".into(), samples.outside.into());
            fields.insert("in_hooks".into(), samples.in_hooks.into());
            fields.insert(format!("period_{}", s.unit.suffix()), samples.period.into());
            map.serialize_entry("samples", &fields)?;
        }
        map.end()
    }
}

struct ThreadJson<'a>(&'a ThreadLine);

impl Serialize for ThreadJson<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let t = self.0;
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("thread", &t.thread)?;
        map.serialize_entry("tid", &t.tid)?;
        map.serialize_entry("name", &t.name)?;
        map.serialize_entry("records", &t.records)?;
        map.serialize_entry("lost", &t.lost)?;
        map.serialize_entry("unmatched_entries", &t.unmatched_entries)?;
        map.serialize_entry("unmatched_exits", &t.unmatched_exits)?;
        map.serialize_entry("closed_at_end", &t.closed_at_end)?;
        map.end()
    }
}

struct RowJson<'a> {
    row: &'a Row,
    unit: &'static str,
}

impl Serialize for RowJson<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let r = self.row;
        let u = self.unit;
        let mut map = serializer.serialize_map(None)?;
        if let Some(thread) = r.thread {
            map.serialize_entry("thread", &thread)?;
        }
        map.serialize_entry("function", &r.function)?;
        map.serialize_entry("address", &format!("0x{:x}", r.entry_point))?;
        map.serialize_entry("calls", &r.calls)?;
        if r.counted > 0 {
            map.serialize_entry("timed_calls", &(r.calls - r.counted))?;
            map.serialize_entry("counted_calls", &r.counted)?;
        }
        map.serialize_entry(&format!("inclusive_{u}"), &r.inclusive)?;
        map.serialize_entry(&format!("exclusive_{u}"), &r.exclusive)?;
        map.serialize_entry(&format!("min_{u}"), &r.min)?;
        map.serialize_entry(&format!("max_{u}"), &r.max)?;
        map.serialize_entry(&format!("avg_{u}"), &r.avg)?;
        map.serialize_entry("percent", &r.percent)?;
        if let Some([p50, p90, p99]) = r.percentiles {
            map.serialize_entry(&format!("p50_{u}"), &p50)?;
            map.serialize_entry(&format!("p90_{u}"), &p90)?;
            map.serialize_entry(&format!("p99_{u}"), &p99)?;
        }
        if let Some(sampled) = r.sampled {
            let [self_time, total, percent] = sampled_columns(u);
            map.serialize_entry(&self_time, &sampled.self_time)?;
            map.serialize_entry(&total, &sampled.total)?;
            map.serialize_entry(&percent, &sampled.percent)?;
        }
        if let Some(times) = r.cpu_columns() {
            for (name, value) in cpu_columns(u).iter().zip(times) {
                map.serialize_entry(name, &value)?;
            }
        }
        if let Some(callers) = &r.callers {
            let list: Vec<serde_json::Value> = callers
                .iter()
                .map(|(function, calls)| serde_json::json!({"function": function, "calls": calls}))
                .collect();
            map.serialize_entry("callers", &list)?;
        }
        map.serialize_entry("unmatched_entries", &r.unmatched_entries)?;
        map.serialize_entry("unmatched_exits", &r.unmatched_exits)?;
        map.serialize_entry("closed_at_end", &r.closed_at_end)?;
        map.end()
    }
}
