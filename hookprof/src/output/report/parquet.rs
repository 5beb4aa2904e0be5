//! `hookprof export --format=parquet`: a trace's calls as rows of two Parquet tables, for the
//! query engines people already run (DuckDB, Spark, Trino, ClickHouse, pandas). docs/export.md
//! documents the schema; this file writes it.
//!
//! - `functions`: one row per (thread, function) with the calls' count and times, summed by
//!   a first replay ([`FunctionTotals`], threads × functions in memory) that reads what
//!   `report` reads (a profile's trees, every call of a `HOOKCC_MIN_DURATION` trace) and
//!   meets every function, so that same-named ones are then told apart as `report` does;
//! - `calls`: one row per call, written as a second replay closes it ([`ParquetCalls`], a row
//!   group every [`ROW_GROUP`] rows, so memory stays flat with the trace's length): the calls
//!   the trace has records of.
//!
//! Both go under `DIR/<table>/run=<run>/<pid>.parquet` (Hive partitioning: the directory of
//! many runs is one dataset whose `run` column comes from the path). Times are nanoseconds:
//! `start_ns` on the wall clock (since the Unix epoch, from the trace's recorded start), the
//! durations as every report shows them (compensated unless `--no-compensation`).

use std::collections::HashMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parquet::basic::{Compression, Encoding};
use parquet::data_type::{ByteArray, ByteArrayType, Int32Type, Int64Type};
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::parser::parse_message_type;

use crate::analysis::replay::Aggregate;
use crate::analysis::view::{file_name, Names, TimeBase, TraceInfo, View, ViewFrame};
use crate::input::lines::SourceLines;
use crate::output::file::OutputFile;

/// The version of the tables' schema, in each file's key-value metadata (`hookprof.schema`).
pub const SCHEMA_VERSION: &str = "1";

/// Rows per row group of `calls`: the column buffers of one group take about 250 bytes a
/// row (the strings are shared, not copied), so about 33 MB.
pub const ROW_GROUP: usize = 1 << 17;

const CALLS_SCHEMA: &str = "
message calls {
  required binary host (STRING);
  required int64 pid;
  required int64 tid;
  required binary thread (STRING);
  required binary function (STRING);
  required binary module (STRING);
  optional binary file (STRING);
  optional int32 line;
  required int32 depth;
  required int64 call_id;
  optional int64 parent_id;
  required int64 start_ns;
  required int64 duration_ns;
  required int64 exclusive_ns;
}";

const FUNCTIONS_SCHEMA: &str = "
message functions {
  required binary host (STRING);
  required int64 pid;
  required int64 tid;
  required binary thread (STRING);
  required binary function (STRING);
  required binary module (STRING);
  optional binary file (STRING);
  optional int32 line;
  required int64 calls;
  required int64 inclusive_ns;
  required int64 exclusive_ns;
  required int64 min_ns;
  required int64 max_ns;
}";

/// Where one trace's two files go.
pub struct Destination {
    pub calls: PathBuf,
    pub functions: PathBuf,
}

impl Destination {
    /// `DIR/calls/run=RUN/PID.parquet` and the same under `functions`.
    pub fn new(dir: &Path, run: &str, pid: u64) -> Destination {
        let file = |table: &str| {
            dir.join(table)
                .join(format!("run={run}"))
                .join(format!("{pid}.parquet"))
        };
        Destination {
            calls: file("calls"),
            functions: file("functions"),
        }
    }
}

/// A function's columns that do not change from call to call, made at its first call.
#[derive(Clone)]
struct FunctionText {
    name: ByteArray,
    module: ByteArray,
    file: Option<ByteArray>,
    line: Option<i32>,
}

/// Totals of one (thread, function).
#[derive(Default)]
struct Totals {
    calls: u64,
    inclusive: u64,
    exclusive: u64,
    min: u64,
    max: u64,
}

/// What every row of a trace says of its process, its threads and its functions.
pub struct Describer {
    host: ByteArray,
    pid: i64,
    clock: TimeBase,
    modules: Vec<(u64, u64, ByteArray)>,
    executable: ByteArray,
    lines: Option<SourceLines>,
    thread_names: HashMap<u64, ByteArray>,
    /// By address.
    texts: HashMap<u64, FunctionText>,
}

impl Describer {
    /// For the trace `info` describes; `host` is every row's.
    pub fn new(host: &str, info: &TraceInfo, lines: Option<SourceLines>) -> Describer {
        let executable = info.executable_name();
        let modules = info
            .summary
            .modules
            .iter()
            .map(|m| {
                let name = m
                    .path
                    .as_deref()
                    .map_or_else(|| executable.clone(), file_name);
                (m.start, m.end, text(&name))
            })
            .collect();
        let thread_names = info
            .threads
            .iter()
            .map(|t| (t.tid, text(t.name.as_deref().unwrap_or(""))))
            .collect();
        Describer {
            host: text(host),
            pid: info.summary.header.pid as i64,
            clock: info.clock,
            modules,
            executable: text(&executable),
            lines,
            thread_names,
            texts: HashMap::new(),
        }
    }

    /// The columns of the function at `address`, named `name`.
    fn function(&mut self, address: u64, name: &str) -> FunctionText {
        if let Some(t) = self.texts.get(&address) {
            return t.clone();
        }
        let module = self
            .modules
            .iter()
            .find(|(start, end, _)| (*start..*end).contains(&address))
            .map_or_else(|| self.executable.clone(), |m| m.2.clone());
        let location = self.lines.as_ref().and_then(|l| l.location(address));
        let t = FunctionText {
            name: text(name),
            module,
            file: location.as_ref().map(|(file, _)| text(file)),
            line: location.map(|(_, line)| line as i32),
        };
        self.texts.insert(address, t.clone());
        t
    }

    fn thread(&self, tid: u64) -> ByteArray {
        self.thread_names
            .get(&tid)
            .cloned()
            .unwrap_or_else(|| text(""))
    }
}

/// The calls table's columns for the rows not yet written.
#[derive(Default)]
struct CallColumns {
    tid: Vec<i64>,
    thread: Vec<ByteArray>,
    function: Vec<ByteArray>,
    module: Vec<ByteArray>,
    file: Vec<ByteArray>,
    file_defined: Vec<i16>,
    line: Vec<i32>,
    line_defined: Vec<i16>,
    depth: Vec<i32>,
    call_id: Vec<i64>,
    parent_id: Vec<i64>,
    parent_defined: Vec<i16>,
    start: Vec<i64>,
    duration: Vec<i64>,
    exclusive: Vec<i64>,
}

impl CallColumns {
    fn len(&self) -> usize {
        self.tid.len()
    }

    fn clear(&mut self) {
        *self = CallColumns::default();
    }
}

fn parquet_error(e: parquet::errors::ParquetError) -> io::Error {
    io::Error::other(e)
}

fn text(s: &str) -> ByteArray {
    ByteArray::from(s.as_bytes().to_vec())
}

fn create(file: OutputFile, schema: &str) -> io::Result<SerializedFileWriter<OutputFile>> {
    let schema = Arc::new(parse_message_type(schema).map_err(parquet_error)?);
    let mut properties = WriterProperties::builder().set_compression(Compression::SNAPPY);
    // Ids and start times grow nearly monotonically: deltas pack them to a few bits where a
    // dictionary would not help.
    for column in ["call_id", "parent_id", "start_ns"] {
        let column = parquet::schema::types::ColumnPath::from(column);
        properties = properties
            .set_column_dictionary_enabled(column.clone(), false)
            .set_column_encoding(column, Encoding::DELTA_BINARY_PACKED);
    }
    let properties = properties
        .set_created_by(format!("hookprof {}", env!("CARGO_PKG_VERSION")))
        .set_key_value_metadata(Some(vec![parquet::file::metadata::KeyValue::new(
            "hookprof.schema".to_string(),
            SCHEMA_VERSION.to_string(),
        )]))
        .build();
    SerializedFileWriter::new(file, schema, Arc::new(properties)).map_err(parquet_error)
}

/// Sums each (thread, function)'s calls for the `functions` table: a view that reads what
/// `report` reads (a profile's trees: every call, also under `HOOKCC_MIN_DURATION`).
#[derive(Default)]
pub struct FunctionTotals {
    totals: HashMap<(u64, u32), Totals>,
}

impl FunctionTotals {
    fn add(
        &mut self,
        tid: u64,
        function: u32,
        calls: u64,
        inclusive: Option<u64>,
        agg: (u64, u64, u64),
    ) {
        let (exclusive, min, max) = agg;
        let t = self.totals.entry((tid, function)).or_default();
        if t.calls == 0 {
            t.min = min;
        }
        t.calls += calls;
        t.inclusive += inclusive.unwrap_or(0);
        t.exclusive += exclusive;
        t.min = t.min.min(min);
        t.max = t.max.max(max);
    }

    /// Adds each thread's counted calls of throttled functions (TID, address, calls: the
    /// COUNTED chunks) to its rows of those functions: calls without times (a thread whose
    /// every call of one was counted gets a row with its calls and zero times).
    pub fn add_counted(&mut self, names: &Names, counted: &[(u64, u64, u64)]) {
        if counted.is_empty() {
            return;
        }
        let ids: HashMap<u64, u32> = names
            .addresses
            .iter()
            .enumerate()
            .map(|(i, &address)| (address, i as u32))
            .collect();
        for &(tid, address, calls) in counted {
            if let Some(&function) = ids.get(&address) {
                self.totals.entry((tid, function)).or_default().calls += calls;
            }
        }
    }

    /// Writes the `functions` table into `file`, naming the functions of `names` (the first
    /// replay's) by `label` (the names `report` shows) where it has one. Returns the file,
    /// complete but not committed, and its rows.
    pub fn write(
        self,
        names: &Names,
        label: &dyn Fn(u64) -> Option<String>,
        describer: &mut Describer,
        file: OutputFile,
    ) -> io::Result<(OutputFile, u64)> {
        let mut keys: Vec<(u64, u32)> = self.totals.keys().copied().collect();
        keys.sort_unstable();
        let mut tid = Vec::new();
        let mut thread = Vec::new();
        let mut function = Vec::new();
        let mut module = Vec::new();
        let (mut file_column, mut file_defined) = (Vec::new(), Vec::new());
        let (mut line, mut line_defined) = (Vec::new(), Vec::new());
        let mut numbers: [Vec<i64>; 5] = Default::default();
        for &(t, f) in &keys {
            let address = names.addresses[f as usize];
            let name = label(address).unwrap_or_else(|| names.name(f).to_string());
            let text_of = describer.function(address, &name);
            let totals = &self.totals[&(t, f)];
            tid.push(t as i64);
            thread.push(describer.thread(t));
            function.push(text_of.name);
            module.push(text_of.module);
            file_defined.push(i16::from(text_of.file.is_some()));
            file_column.extend(text_of.file);
            line_defined.push(i16::from(text_of.line.is_some()));
            line.extend(text_of.line);
            let d = |ticks: u64| describer.clock.duration(ticks) as i64;
            numbers[0].push(totals.calls as i64);
            numbers[1].push(d(totals.inclusive));
            numbers[2].push(d(totals.exclusive));
            numbers[3].push(d(totals.min));
            numbers[4].push(d(totals.max));
        }
        let n = keys.len();
        let host = vec![describer.host.clone(); n];
        let pid = vec![describer.pid; n];
        let mut writer = create(file, FUNCTIONS_SCHEMA)?;
        let mut group = writer.next_row_group().map_err(parquet_error)?;
        let mut column = 0;
        while let Some(mut w) = group.next_column().map_err(parquet_error)? {
            let result = match column {
                0 => w.typed::<ByteArrayType>().write_batch(&host, None, None),
                1 => w.typed::<Int64Type>().write_batch(&pid, None, None),
                2 => w.typed::<Int64Type>().write_batch(&tid, None, None),
                3 => w.typed::<ByteArrayType>().write_batch(&thread, None, None),
                4 => w
                    .typed::<ByteArrayType>()
                    .write_batch(&function, None, None),
                5 => w.typed::<ByteArrayType>().write_batch(&module, None, None),
                6 => {
                    w.typed::<ByteArrayType>()
                        .write_batch(&file_column, Some(&file_defined), None)
                }
                7 => w
                    .typed::<Int32Type>()
                    .write_batch(&line, Some(&line_defined), None),
                k => w
                    .typed::<Int64Type>()
                    .write_batch(&numbers[k - 8], None, None),
            };
            result.map_err(parquet_error)?;
            w.close().map_err(parquet_error)?;
            column += 1;
        }
        group.close().map_err(parquet_error)?;
        let file = writer.into_inner().map_err(parquet_error)?;
        Ok((file, n as u64))
    }
}

impl View for FunctionTotals {
    const IN_TIME_ORDER: bool = false;

    fn enter(&mut self, _tid: u64, _stack: &mut [ViewFrame], _names: &Names) {}

    fn exit(&mut self, tid: u64, time: u64, stack: &[ViewFrame], _names: &Names) {
        let Some(frame) = stack.last() else { return };
        let duration = time.saturating_sub(frame.entry_time);
        let exclusive = duration.saturating_sub(frame.child_ticks);
        self.add(
            tid,
            frame.function,
            1,
            frame.outermost.then_some(duration),
            (exclusive, duration, duration),
        );
    }

    fn aggregate(&mut self, tid: u64, stack: &[ViewFrame], calls: &Aggregate, _names: &Names) {
        let Some(frame) = stack.last() else { return };
        // A recursive path's time is already in the outer frame's.
        let outermost = !stack[..stack.len() - 1]
            .iter()
            .any(|f| f.function == frame.function);
        self.add(
            tid,
            frame.function,
            calls.calls,
            outermost.then_some(calls.ticks),
            (calls.exclusive, calls.min, calls.max),
        );
    }
}

/// Writes a trace's `calls` rows as the replay closes its calls (in time order: the records,
/// where a trace has trees too). The first error is kept: later rows are dropped.
pub struct ParquetCalls {
    writer: Option<SerializedFileWriter<OutputFile>>,
    describer: Describer,
    /// The wall clock of the trace's earliest record, ns since the Unix epoch.
    wall_start: u64,
    /// Per TID: the call ids of its open frames, outermost first.
    open: HashMap<u64, Vec<u64>>,
    next_call: u64,
    columns: CallColumns,
    /// Rows written to `calls`.
    pub rows: u64,
    error: Option<io::Error>,
}

impl ParquetCalls {
    /// Starts the `calls` table in `file` for the trace `describer` describes (which has a
    /// clock rate).
    pub fn start(
        file: OutputFile,
        describer: Describer,
        wall_start: u64,
    ) -> io::Result<ParquetCalls> {
        Ok(ParquetCalls {
            writer: Some(create(file, CALLS_SCHEMA)?),
            describer,
            wall_start,
            open: HashMap::new(),
            next_call: 0,
            columns: CallColumns::default(),
            rows: 0,
            error: None,
        })
    }

    fn flush_row_group(&mut self) {
        if self.columns.len() == 0 || self.error.is_some() {
            return;
        }
        let result = self.write_row_group();
        self.columns.clear();
        if let Err(e) = result {
            self.error.get_or_insert(e);
        }
    }

    fn write_row_group(&mut self) -> io::Result<()> {
        let Some(writer) = self.writer.as_mut() else {
            return Ok(());
        };
        let c = &self.columns;
        let n = c.len();
        let host = vec![self.describer.host.clone(); n];
        let pid = vec![self.describer.pid; n];
        let mut group = writer.next_row_group().map_err(parquet_error)?;
        let mut column = 0;
        while let Some(mut w) = group.next_column().map_err(parquet_error)? {
            let result = match column {
                0 => w.typed::<ByteArrayType>().write_batch(&host, None, None),
                1 => w.typed::<Int64Type>().write_batch(&pid, None, None),
                2 => w.typed::<Int64Type>().write_batch(&c.tid, None, None),
                3 => w
                    .typed::<ByteArrayType>()
                    .write_batch(&c.thread, None, None),
                4 => w
                    .typed::<ByteArrayType>()
                    .write_batch(&c.function, None, None),
                5 => w
                    .typed::<ByteArrayType>()
                    .write_batch(&c.module, None, None),
                6 => w
                    .typed::<ByteArrayType>()
                    .write_batch(&c.file, Some(&c.file_defined), None),
                7 => w
                    .typed::<Int32Type>()
                    .write_batch(&c.line, Some(&c.line_defined), None),
                8 => w.typed::<Int32Type>().write_batch(&c.depth, None, None),
                9 => w.typed::<Int64Type>().write_batch(&c.call_id, None, None),
                10 => {
                    w.typed::<Int64Type>()
                        .write_batch(&c.parent_id, Some(&c.parent_defined), None)
                }
                11 => w.typed::<Int64Type>().write_batch(&c.start, None, None),
                12 => w.typed::<Int64Type>().write_batch(&c.duration, None, None),
                _ => w.typed::<Int64Type>().write_batch(&c.exclusive, None, None),
            };
            result.map_err(parquet_error)?;
            w.close().map_err(parquet_error)?;
            column += 1;
        }
        group.close().map_err(parquet_error)?;
        self.rows += n as u64;
        Ok(())
    }

    /// Writes the last row group and the file's footer. Returns the file, complete but not
    /// committed, and its rows.
    pub fn finish(mut self) -> io::Result<(OutputFile, u64)> {
        self.flush_row_group();
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        let writer = self.writer.take().expect("a writer until finished");
        let file = writer.into_inner().map_err(parquet_error)?;
        Ok((file, self.rows))
    }
}

impl View for ParquetCalls {
    const IN_TIME_ORDER: bool = true;

    fn enter(&mut self, tid: u64, _stack: &mut [ViewFrame], _names: &Names) {
        let id = self.next_call;
        self.next_call += 1;
        self.open.entry(tid).or_default().push(id);
    }

    fn exit(&mut self, tid: u64, time: u64, stack: &[ViewFrame], names: &Names) {
        let Some(frame) = stack.last() else { return };
        let ids = self.open.entry(tid).or_default();
        let id = ids.pop().unwrap_or(u64::MAX);
        let parent = ids.last().copied();
        if self.error.is_some() {
            return;
        }
        let duration = time.saturating_sub(frame.entry_time);
        let exclusive = duration.saturating_sub(frame.child_ticks);
        let t = self
            .describer
            .function(frame.address, names.name(frame.function));
        let thread = self.describer.thread(tid);
        let clock = self.describer.clock;
        let start = self.wall_start + clock.time(frame.entry_time);
        let c = &mut self.columns;
        c.tid.push(tid as i64);
        c.thread.push(thread);
        c.function.push(t.name);
        c.module.push(t.module);
        c.file_defined.push(i16::from(t.file.is_some()));
        c.file.extend(t.file);
        c.line_defined.push(i16::from(t.line.is_some()));
        c.line.extend(t.line);
        c.depth.push((stack.len() - 1) as i32);
        c.call_id.push(id as i64);
        c.parent_defined.push(i16::from(parent.is_some()));
        c.parent_id.extend(parent.map(|p| p as i64));
        c.start.push(start as i64);
        c.duration.push(clock.duration(duration) as i64);
        c.exclusive.push(clock.duration(exclusive) as i64);
        if c.len() >= ROW_GROUP {
            self.flush_row_group();
        }
    }
}
