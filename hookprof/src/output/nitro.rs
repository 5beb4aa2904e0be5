//! The text `hookprof nitro` prints: what the program itself prints with `OS_DumpCallTrace`
//! or `OS_DumpStatistics` (docs/nitro.md).

use std::collections::HashMap;

use crate::input::nitro::{CallTraceMode, Contents, Dump, StatLine, MAX_INDENT};
use crate::input::nitro_program::{NameSource, Names};

/// Options of a decode, independent of any command line.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// The `lr` of `OS_DumpCallTrace`'s first line (where the program called it), which the
    /// buffer does not hold.
    pub lr: Option<u64>,
    /// A measurement buffer's costs include the calls each call made (as a statistics buffer
    /// of `OS_InitStatisticsEx(…, TRUE)` sums them); by default they do not (the seed's §4.1).
    pub inclusive: bool,
}

/// The decoded text and the warnings to show the user.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decoded {
    /// Exactly what the program would print (bytes: names are printed as they are in memory).
    pub text: Vec<u8>,
    pub warnings: Vec<String>,
}

/// What the first line shows when [`Options::lr`] is not given.
pub const UNKNOWN_LR: &str = "????????";

/// The runtime's number format for `lr` and r0–r3: lower-case hex, 8 digits when the value
/// fits in 32 bits, else 16.
pub fn hex(value: u64) -> String {
    if value > u64::from(u32::MAX) {
        format!("{value:016x}")
    } else {
        format!("{value:08x}")
    }
}

/// Prints `dump` as the program would: `OS_DumpCallTrace` for a call trace buffer,
/// `OS_DumpStatistics` for a statistics buffer, and for a measurement buffer what
/// `OS_CalcStatistics` into an empty statistics buffer followed by `OS_DumpStatistics` print.
pub fn render(dump: &Dump, names: &dyn NameSource, options: &Options) -> Decoded {
    let mut names = Names {
        source: names,
        cache: HashMap::new(),
    };
    let mut text = Vec::new();
    let mut warnings = Vec::new();
    let h = &dump.header;
    match &dump.contents {
        Contents::CallTrace(c) => {
            let lr = options.lr.map_or(UNKNOWN_LR.to_string(), hex);
            text.extend_from_slice(format!("OS_DumpCallTrace: lr={lr}\n").as_bytes());
            for record in &c.records {
                if c.mode == CallTraceMode::Log {
                    let indent = record.level.min(MAX_INDENT) as usize;
                    text.extend(std::iter::repeat_n(b' ', indent));
                }
                text.extend(names.get(record.name));
                text.extend_from_slice(format!(": lr={}", hex(record.lr)).as_bytes());
                if let Some(regs) = record.registers {
                    for (i, v) in regs.iter().enumerate() {
                        text.extend_from_slice(format!(", r{i}={}", hex(*v)).as_bytes());
                    }
                }
                text.push(b'\n');
            }
            if c.overflow_calls != 0 {
                let mut line = format!(
                    "OS_DumpCallTrace: {} calls were not recorded: the buffer holds {}",
                    c.overflow_calls, h.capacity
                );
                if c.overflow_depth != 0 {
                    line.push_str(&format!(
                        "; the {} innermost calls in progress are missing above",
                        c.overflow_depth
                    ));
                }
                text.extend_from_slice(line.as_bytes());
                text.push(b'\n');
            }
            if c.unmatched_exits != 0 {
                text.extend_from_slice(
                    format!(
                        "OS_DumpCallTrace: {} returns had no record to remove: their functions \
                         were called before OS_InitCallTrace or OS_ClearCallTraceBuffer (§3.4: \
                         initialise from the outermost function)\n",
                        c.unmatched_exits
                    )
                    .as_bytes(),
                );
            }
        }
        Contents::FunctionCost(c) => {
            let summary = c.summarize(options.inclusive);
            if summary.lost != 0 {
                text.extend_from_slice(
                    format!(
                        "OS_CalcStatistics: the function cost buffer was full: {} records were \
                         not kept, so {} calls in progress then are not counted; summarize more \
                         often or use a larger buffer (OS_CalcFunctionCostBufferSize)\n",
                        summary.lost, summary.open
                    )
                    .as_bytes(),
                );
            }
            stat_lines(&mut text, &mut names, &summary.lines);
            if summary.lost == 0 && summary.open != 0 {
                warnings.push(format!(
                    "{} calls were in progress when the buffer was dumped (entries without an \
                     exit yet): not counted, as OS_CalcStatistics counts them only once they \
                     return",
                    summary.open
                ));
            }
        }
        Contents::Statistics(s) => {
            stat_lines(&mut text, &mut names, &s.lines);
            if s.dropped_calls != 0 {
                text.extend_from_slice(
                    format!(
                        "OS_DumpStatistics: {} calls of other functions are not counted: the \
                         statistics buffer holds {} functions\n",
                        s.dropped_calls, h.capacity
                    )
                    .as_bytes(),
                );
            }
            if s.locked {
                warnings.push(
                    "the statistics buffer was locked when dumped (a thread was summarizing \
                     into it): its counts may be partial"
                        .to_string(),
                );
            }
        }
    }
    let needed = h.offset + h.buffer_len();
    if dump.dump_len < needed {
        warnings.push(format!(
            "the dump is {} bytes, shorter than the buffer ({needed} bytes from byte 0 to its \
             last record); the part read was complete",
            dump.dump_len
        ));
    }
    let unreadable = names.unreadable();
    if let Some(first) = unreadable.first() {
        warnings.push(format!(
            "{} name pointers (the first 0x{first:x}) point to no string in the ELF file's \
             loaded data and are shown as addresses: is it the program that filled the \
             buffer? (names of functions in shared libraries are not in the executable)",
            unreadable.len()
        ));
    }
    Decoded { text, warnings }
}

/// The lines `OS_DumpStatistics` prints: not those reserved by calls still in progress.
fn stat_lines(text: &mut Vec<u8>, names: &mut Names<'_>, lines: &[StatLine]) {
    for line in lines.iter().filter(|line| line.count != 0) {
        text.extend(names.get(line.name));
        text.extend_from_slice(format!(": count {}, cost {}\n", line.count, line.cost).as_bytes());
    }
}
