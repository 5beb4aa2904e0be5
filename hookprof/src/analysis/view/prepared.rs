//! [`Prepared`]: a view's input opened, and where its names come from.

use std::path::{Path, PathBuf};

use crate::analysis::replay::{replay_bytes, TimeBasis};
use crate::analysis::warnings::profile_warnings;
use crate::input::error::Error;
use crate::input::symbols::{Resolve, Symbolizer};
use crate::input::trace_file::TraceFile;

use super::filter::*;
use super::frames::*;
use super::trace_info::*;
use super::viewer::*;

/// Where a view's function names come from.
pub enum Symbols {
    /// The ELF files of the trace's modules.
    Elf(Symbolizer),
    /// A table by address: a TI dump's functions (named by the TI post tool's rules), or a NITRO
    /// buffer's (from their name strings).
    Table(std::collections::HashMap<u64, String>),
}

impl Resolve for Symbols {
    fn resolve(&mut self, address: u64) -> Option<String> {
        match self {
            Symbols::Elf(s) => s.resolve(address),
            Symbols::Table(t) => t.resolve(address),
        }
    }

    fn origin(&mut self, address: u64) -> Option<crate::input::symbols::SymbolOrigin> {
        match self {
            Symbols::Elf(s) => s.origin(address),
            Symbols::Table(_) => None,
        }
    }

    fn entry_point(&mut self, address: u64) -> u64 {
        match self {
            Symbols::Elf(s) => s.entry_point(address),
            Symbols::Table(_) => address,
        }
    }
}

impl Symbols {
    fn take_warnings(&mut self) -> Vec<String> {
        match self {
            Symbols::Elf(s) => s.take_warnings(),
            Symbols::Table(_) => Vec::new(),
        }
    }
}

/// A trace opened for a view: its [`TraceInfo`] and the names of its functions.
pub struct Prepared {
    pub trace: TraceFile,
    pub info: TraceInfo,
    pub symbols: Symbols,
    /// Told of the replay's progress.
    pub progress: Option<Progress>,
    /// Warnings from reading the input (a dump's conversion), shown with the replay's.
    warnings: Vec<String>,
    /// The input is a TI or NITRO dump: its times are ticks by nature, not for want of a clock
    /// rate.
    from_dump: bool,
    /// Names for functions that share one ([`Prepared::tell_apart`]).
    labels: Option<std::collections::HashMap<u64, String>>,
}

impl Prepared {
    /// Opens `trace_path` through the door for inputs ([`crate::input::open`]: a `.hktrace`,
    /// or a NITRO function cost buffer or TI dump of the program `exe` converted), scans its
    /// chunks and prepares its symbols (`exe` overrides the executable recorded in the trace).
    pub fn open(trace_path: &Path, exe: Option<&Path>) -> Result<Prepared, Error> {
        let input = crate::input::open(trace_path, exe)?;
        Prepared::finish(
            trace_path,
            input.trace,
            input.names.map(Symbols::Table),
            exe,
            input.warnings,
        )
    }

    /// Scans `trace` and takes its names from `symbols`, else from its modules' ELF files.
    fn finish(
        trace_path: &Path,
        trace: TraceFile,
        symbols: Option<Symbols>,
        exe: Option<&Path>,
        warnings: Vec<String>,
    ) -> Result<Prepared, Error> {
        let info = TraceInfo::scan(&trace.trace()?).map_err(|error| Error::Format {
            path: PathBuf::from(trace_path),
            error,
        })?;
        let symbols = match symbols {
            Some(table) => table,
            None => Symbols::Elf(Symbolizer::new(&info.summary, exe)?),
        };
        Ok(Prepared {
            trace,
            info,
            from_dump: matches!(symbols, Symbols::Table(_)),
            symbols,
            progress: None,
            warnings,
            labels: None,
        })
    }

    /// From now on, views show the functions at `addresses` (every function a view of this
    /// trace may meet) as `report` does: functions that share a name (`static` ones of
    /// different files, names that are not UTF-8 and read the same) told apart by their file
    /// or address ([`crate::input::symbols::function_labels`]).
    pub fn tell_apart(&mut self, addresses: impl IntoIterator<Item = u64>) {
        let (labels, _) = crate::input::symbols::function_labels(addresses, &mut self.symbols);
        self.labels = Some(labels);
    }

    /// The name views show for `address`, after [`Prepared::tell_apart`].
    pub fn label(&self, address: u64) -> Option<&str> {
        self.labels.as_ref()?.get(&address).map(String::as_str)
    }

    /// Replays the trace into `view` through `filter`. Returns the view, the names it refers
    /// to and the warnings to show (those of `hookprof report`).
    /// Refuses a call-path profile (HOOKCC_MODE=profile) for a view of calls in time order:
    /// called before the view writes anything.
    pub fn needs_records(&self) -> Result<(), Error> {
        if self.info.profiles > 0 && self.info.records == 0 {
            return Err(Error::Unsupported {
                path: self.trace.path().to_path_buf(),
                message: "a call-path profile (HOOKCC_MODE=profile) has sums per call path, \
                          not calls in time order: this view needs a trace (HOOKCC_MODE=trace \
                          or ring); report, flame, callgrind, gmon and diff read a profile"
                    .to_string(),
            });
        }
        Ok(())
    }

    /// [`Filter::sized`] for this trace: counts the calls' durations by a first replay only
    /// when the output would pass the limit (its warnings kept for the view's replay).
    pub fn sized(
        &mut self,
        filter: &Filter,
        bytes_per_record: u64,
        size_limit: Option<u64>,
        what: &str,
    ) -> Result<(Filter, Option<String>), Error> {
        let clock = self.info.clock;
        filter.sized(
            self.info.records,
            bytes_per_record,
            size_limit,
            what,
            || {
                let kept = self.warnings.clone();
                let (calls, _, _) = self.run(CallsAtLeast::new(&clock), &Filter::default())?;
                self.warnings = kept;
                Ok(calls.counts())
            },
        )
    }

    /// Refuses `--time=cpu` (`time`) where the trace cannot give CPU time ([`no_cpu_time`]);
    /// `in_time_order`: the view reads the records, not a profile's sums.
    pub fn check_time(&self, time: TimeBasis, in_time_order: bool) -> Result<(), Error> {
        let switches = self.info.summary.switches;
        let summed = self.info.profiles > 0 && !(in_time_order && self.info.records > 0);
        if time == TimeBasis::Cpu && (switches == 0 || summed) {
            let profile = self.info.profiles > 0 && self.info.records == 0;
            return Err(no_cpu_time(self.trace.path(), switches, summed, profile));
        }
        Ok(())
    }

    pub fn run<V: View>(
        &mut self,
        view: V,
        filter: &Filter,
    ) -> Result<(V, Names, Vec<String>), Error> {
        if V::IN_TIME_ORDER {
            self.needs_records()?;
        }
        self.check_time(filter.time, V::IN_TIME_ORDER)?;
        let mut viewer = Viewer::new(view, &self.info, filter, &mut self.symbols)
            .with_progress(self.progress.clone())
            .with_labels(self.labels.as_ref());
        let summary =
            replay_bytes(self.trace.bytes(), &mut viewer).map_err(|error| Error::Format {
                path: self.trace.path().to_path_buf(),
                error,
            })?;
        let (view, names) = viewer.into_parts();
        let mut warnings = std::mem::take(&mut self.warnings);
        warnings.extend(
            profile_warnings(&summary)
                .into_iter()
                .filter(|w| !(self.from_dump && w.starts_with("the trace has no clock rate"))),
        );
        warnings.extend(self.symbols.take_warnings());
        Ok((view, names, warnings))
    }
}
