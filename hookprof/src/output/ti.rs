//! The outputs of `hookprof ti` (docs/ti-post.md): the two CSV files of an [`Analysis`], its
//! status report, and its Dynamic Call Graph.

use std::io::{self, Write};

use crate::input::ti::{Dump, DumpFormat, LayoutChoice};
use crate::input::ti_calls::{Analysis, Bias, FunctionStats, TaskStats};

impl Analysis {
    /// `PREFIX_call_list.csv`: one line per completed call, in order of completion.
    pub fn write_call_list(&self, out: &mut dyn Write) -> io::Result<()> {
        let mut w = csv::Writer::from_writer(out);
        w.write_record([
            "Function",
            "EnterTSC",
            "ExitTSC",
            "InclusiveCycles",
            "ExclusiveCycles",
            "Task",
            "Depth",
            "Address",
        ])?;
        for c in &self.calls {
            w.write_record([
                self.function_name(c.address),
                c.enter_time.to_string(),
                c.exit_time.to_string(),
                c.inclusive.to_string(),
                c.exclusive.to_string(),
                c.task.map_or(String::new(), |_| self.task_name(c.task)),
                c.depth.to_string(),
                self.elf_address(c.address),
            ])?;
        }
        w.flush()
    }

    /// `PREFIX_profile.csv`: the totals line, the functions' part and the tasks' part.
    pub fn write_profile(&self, out: &mut dyn Write) -> io::Result<()> {
        let total = self.total_cycles();
        let mut buf = Vec::new();
        {
            let mut w = csv::WriterBuilder::new()
                .flexible(true)
                .from_writer(&mut buf);
            let (first, last) = (self.first_time.unwrap_or(0), self.last_time.unwrap_or(0));
            w.write_record([
                "FirstTSC".to_string(),
                first.to_string(),
                "LastTSC".to_string(),
                last.to_string(),
                "TotalCycles".to_string(),
                total.to_string(),
            ])?;
            let valid = self.function_valid_cycles();
            w.write_record([
                "Functions ValidCycles".to_string(),
                valid.to_string(),
                "TotalCycles".to_string(),
                total.to_string(),
                "Valid/Total %".to_string(),
                percent(valid, total),
            ])?;
            w.write_record([
                "Function",
                "ExecuteTimes",
                "TotalExcluCycle",
                "AverageExcluCycle",
                "MaxExcluCycle",
                "MinExcluCycle",
                "AverageIncluCycle",
                "MaxIncluCycle",
                "Percentage",
                "Address",
            ])?;
            let mut rows: Vec<(String, u64, &FunctionStats)> = self
                .functions
                .iter()
                .map(|(&a, s)| (self.function_name(a), a, s))
                .collect();
            rows.sort_by(|(na, aa, a), (nb, ab, b)| {
                b.total_exclusive
                    .cmp(&a.total_exclusive)
                    .then_with(|| na.cmp(nb))
                    .then(aa.cmp(ab))
            });
            for (name, address, s) in rows {
                w.write_record([
                    name,
                    s.calls.to_string(),
                    s.total_exclusive.to_string(),
                    average(s.total_exclusive, s.calls).to_string(),
                    s.max_exclusive.to_string(),
                    s.min_exclusive.to_string(),
                    average(s.total_inclusive, s.calls).to_string(),
                    s.max_inclusive.to_string(),
                    percent(s.total_exclusive, valid),
                    self.elf_address(address),
                ])?;
            }
            w.flush()?;
        }
        buf.push(b'\n');
        {
            let mut w = csv::WriterBuilder::new()
                .flexible(true)
                .from_writer(&mut buf);
            let valid = self.task_valid_cycles();
            w.write_record([
                "Tasks ValidCycles".to_string(),
                valid.to_string(),
                "TotalCycles".to_string(),
                total.to_string(),
                "Valid/Total %".to_string(),
                percent(valid, total),
            ])?;
            w.write_record([
                "Task",
                "ExecuteTimes",
                "TotalCycle",
                "AverageCycle",
                "MaxCycle",
                "MinCycle",
                "Percentage",
            ])?;
            let mut rows: Vec<(String, &TaskStats)> = self
                .tasks
                .iter()
                .filter(|(k, _)| k.is_some())
                .map(|(k, s)| (self.task_name(*k), s))
                .collect();
            rows.sort_by(|(na, a), (nb, b)| b.total.cmp(&a.total).then_with(|| na.cmp(nb)));
            for (name, s) in rows {
                w.write_record([
                    name,
                    s.runs.to_string(),
                    s.total.to_string(),
                    average(s.total, s.runs).to_string(),
                    s.max.to_string(),
                    s.min.to_string(),
                    percent(s.total, valid),
                ])?;
            }
            w.flush()?;
        }
        out.write_all(&buf)
    }
}

/// Mean rounded to the nearest integer.
fn average(total: u64, n: u64) -> u64 {
    if n == 0 {
        0
    } else {
        ((u128::from(total) + u128::from(n) / 2) / u128::from(n)) as u64
    }
}

/// `part` as a percentage of `whole`, two decimals.
fn percent(part: u64, whole: u64) -> String {
    if whole == 0 {
        "0.00".to_string()
    } else {
        format!("{:.2}", part as f64 * 100.0 / whole as f64)
    }
}

/// The status report of a dump read with `layout_choice` and replayed into `a` with `bias`:
/// what the seed's tool shows in its status window.
pub fn status(d: &Dump, layout_choice: &LayoutChoice, bias: &(u64, Bias), a: &Analysis) -> String {
    let format = match d.format {
        DumpFormat::Binary => "binary".to_string(),
        DumpFormat::CcsHex { start_address, .. } => {
            format!("CCS hex, saved from 0x{start_address:x}")
        }
    };
    let how = match layout_choice {
        LayoutChoice::Elf => "as the ELF file says".to_string(),
        LayoutChoice::Given => "--record-words".to_string(),
        LayoutChoice::Detected {
            other_backward_steps: Some(steps),
        } => format!(
            "the seed's Hook_Record, detected: read as 4-word records the timestamps step \
             back {steps} times"
        ),
        LayoutChoice::Detected {
            other_backward_steps: None,
        } => "the seed's Hook_Record, detected: the dump is no whole number of 4-word \
              records, and its timestamps run in order"
            .to_string(),
    };
    let mut s = format!(
        "Records: {} valid, {} invalid ({format}, {} records: {how})\n",
        d.records.len(),
        d.invalid,
        d.layout
    );
    if let Some(slot) = d.oldest_slot {
        s.push_str(&format!(
            "Circular buffer wrapped: the oldest record is record {slot} of the dump\n"
        ));
    }
    match &bias.1 {
        Bias::Fixed => {}
        Bias::FromProfileData { runtime, given } => s.push_str(&format!(
            "Load bias: 0x{:x} (ProfileData at 0x{runtime:x}, {})\n",
            bias.0,
            if *given {
                "--profile-data"
            } else {
                "the CCS header"
            }
        )),
        Bias::Inferred {
            matched,
            considered,
        } => s.push_str(&format!(
            "Load bias: 0x{:x} (inferred: {matched} of {considered} function addresses are \
             symbols with it)\n",
            bias.0
        )),
        Bias::Unknown => s.push_str("Load bias: unknown\n"),
    }
    s.push_str(&format!("Functions found: {}\n", a.functions_found));
    s.push_str(&format!("Tasks found: {}\n", a.tasks_found));
    s.push_str(&format!(
        "Enter records without exit: {}\n",
        a.enters_without_exit
    ));
    s.push_str(&format!(
        "Exit records without enter: {}\n",
        a.exits_without_enter
    ));
    s.push_str(&format!("Maximum call stack depth: {}\n", a.max_depth));
    s
}

/// The Dynamic Call Graph of an analysis: its calls through the replay layer, tasks as
/// threads, cycles of task time.
pub fn callgraph(analysis: &Analysis) -> Vec<u8> {
    let profile = analysis.profile();
    let mut names = analysis.function_names();
    let mut out = Vec::new();
    crate::output::callgraph::render(
        &profile,
        &mut names,
        crate::output::callgraph::Times::Cycles,
        &mut out,
    )
    .expect("writing to a Vec cannot fail");
    out
}
