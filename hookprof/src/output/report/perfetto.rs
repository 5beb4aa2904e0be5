//! `hookprof timeline --format=perfetto`: every call as a Perfetto protobuf trace, the format
//! Perfetto UI and trace_processor read natively. The same events as the Chrome JSON
//! ([`super::timeline`]) in about a quarter of the bytes, and a viewer does not have to
//! parse JSON to load them: for traces too big for a JSON viewer.
//!
//! The file is a `perfetto.protos.Trace`, written field by field from the published
//! `protos/perfetto/trace/perfetto_trace.proto` (no protobuf library: every packet is a few
//! varints, encoded straight into the output buffer):
//!
//! - one packet with the process's `TrackDescriptor` (uuid 1, pid, process name);
//! - per thread, on its own packet sequence (`trusted_packet_sequence_id` 2, 3, …): a packet
//!   with its `TrackDescriptor` (uuid = its sequence id, `ThreadDescriptor` pid, tid, name),
//!   then a packet that starts the sequence's incremental state
//!   (`SEQ_INCREMENTAL_STATE_CLEARED`): `trace_packet_defaults.track_event_defaults.track_uuid`
//!   names the thread's track, so no event repeats it, and the interned debug-annotation
//!   name 1, `address`;
//! - per shown call, a `TrackEvent` `TYPE_SLICE_BEGIN` packet at its entry (`name_iid` = the
//!   function's number + 1, the name interned on the thread's sequence in the packet of its
//!   first call there; a debug annotation `address` with the entry point as
//!   `pointer_value`; where the executable's DWARF tells, `source_location_iid`, the same
//!   number, interned beside the name as a `SourceLocation` with file, function and line)
//!   and a `TYPE_SLICE_END` packet at its exit. Both have `SEQ_NEEDS_INCREMENTAL_STATE`;
//! - where a stream lost records (`hookprof record`), a `TYPE_INSTANT` packet named
//!   `lost N records` on the thread's track.
//!
//! `timestamp` is nanoseconds since the trace's earliest record in the default clock domain
//! (ticks when the trace has no clock rate). Several traces (`hookprof timeline A B …`) follow
//! one another in the file, each process with its descriptor and thread tracks numbered on from
//! the previous one's (uuid and sequence id alike), times since the earliest record of all. As the JSON, the file is written as the trace
//! is replayed: memory grows with threads × functions (which names a sequence has interned),
//! never with the records.

use std::io::{self, Write};

use crate::analysis::replay::SwitchReason;
use crate::analysis::view::{EventClock, Names, TidIndex, TimeBase, TraceInfo, View, ViewFrame};
use crate::input::lines::SourceLines;
use crate::output::block_writer::{BlockWriter, Padded};

/// `Trace.packet`.
const TRACE_PACKET: u32 = 1;
// `TracePacket` fields.
const TIMESTAMP: u32 = 8;
const SEQUENCE_ID: u32 = 10;
const TRACK_EVENT: u32 = 11;
const INTERNED_DATA: u32 = 12;
const SEQUENCE_FLAGS: u32 = 13;
const PACKET_DEFAULTS: u32 = 59;
const TRACK_DESCRIPTOR: u32 = 60;
const FIRST_PACKET_ON_SEQUENCE: u32 = 87;
// `TracePacket.SequenceFlags`.
const SEQ_INCREMENTAL_STATE_CLEARED: u64 = 1;
const SEQ_NEEDS_INCREMENTAL_STATE: u64 = 2;
// `TracePacketDefaults.track_event_defaults`, `TrackEventDefaults.track_uuid`.
const TRACK_EVENT_DEFAULTS: u32 = 11;
const DEFAULT_TRACK_UUID: u32 = 11;
// `TrackDescriptor` fields.
const TD_UUID: u32 = 1;
const TD_PROCESS: u32 = 3;
const TD_THREAD: u32 = 4;
// `ProcessDescriptor` and `ThreadDescriptor` fields.
const PD_PID: u32 = 1;
const PD_NAME: u32 = 6;
const THD_PID: u32 = 1;
const THD_TID: u32 = 2;
const THD_NAME: u32 = 5;
// `TrackEvent` fields and `TrackEvent.Type`.
const TE_DEBUG_ANNOTATIONS: u32 = 4;
const TE_TYPE: u32 = 9;
const TE_NAME_IID: u32 = 10;
const TE_SOURCE_LOCATION_IID: u32 = 34;
const TE_NAME: u32 = 23;
const TYPE_SLICE_BEGIN: u64 = 1;
const TYPE_SLICE_END: u64 = 2;
const TYPE_INSTANT: u64 = 3;
// `InternedData` fields; `EventName` and `DebugAnnotationName` are both `{iid = 1, name = 2}`.
const ID_EVENT_NAMES: u32 = 2;
const ID_DEBUG_ANNOTATION_NAMES: u32 = 3;
const ID_SOURCE_LOCATIONS: u32 = 4;
// `SourceLocation` fields (its iid is field 1, as the others').
const SL_FILE_NAME: u32 = 2;
const SL_FUNCTION_NAME: u32 = 3;
const SL_LINE_NUMBER: u32 = 4;
const INTERNED_IID: u32 = 1;
const INTERNED_NAME: u32 = 2;
// `DebugAnnotation` fields.
const DA_NAME_IID: u32 = 1;
const DA_POINTER_VALUE: u32 = 7;

/// The interned debug-annotation name of the entry point.
const ADDRESS_NAME_IID: u64 = 1;

const VARINT: u32 = 0;
const LENGTH_DELIMITED: u32 = 2;

/// A thread's track and packet sequence.
struct Track {
    /// The fields after `timestamp` in each of its event packets: the sequence id and
    /// `SEQ_NEEDS_INCREMENTAL_STATE`.
    fields: Padded,
    /// Which function names the sequence has interned, by function number.
    interned: Vec<bool>,
    /// The switched-out names the sequence has interned ([`switched_out_iid`]), by reason.
    switched_out_interned: [bool; 3],
}

/// The interned names of switched-out slices (`--time=cpu`), one a reason: above every
/// function's (number + 1, at most 2^32).
fn switched_out_iid(reason: SwitchReason) -> u64 {
    (1 << 32) + 1 + reason_index(reason) as u64
}

fn reason_index(reason: SwitchReason) -> usize {
    match reason {
        SwitchReason::Unknown => 0,
        SwitchReason::Preempted => 1,
        SwitchReason::Blocked => 2,
    }
}

/// Writes a Perfetto trace to `out` as the frames come.
pub struct Perfetto<W: Write> {
    w: BlockWriter<W>,
    clock: EventClock,
    pid: u64,
    tracks: Vec<Track>,
    /// TID → index in `tracks`.
    tids: TidIndex,
    /// Packet sequences (and track uuids) used so far, by every process.
    sequences: u32,
    /// Per function, made at its first event: the `track_event` field of its begin packets,
    /// and its source location (file, line) if the DWARF tells.
    begins: Vec<Option<Padded>>,
    locations: Vec<Option<(String, u32)>>,
    /// The executable's DWARF lines.
    lines: Option<SourceLines>,
    /// An `interned_data` field, when an event's packet needs one.
    scratch: Vec<u8>,
    /// [`SLICE_END_EVENT`], padded for [`BlockWriter::put`].
    slice_end: Padded,
    /// `--time=cpu`: each interval a thread was switched out is a slice named `switched out`
    /// inside the call that was open.
    switched_out: bool,
    pub events: u64,
}

impl<W: Write> Perfetto<W> {
    /// Gives each function's begin events a `SourceLocation` (file, function, line of its
    /// entry point) where `lines` knows it.
    pub fn with_lines(mut self, lines: Option<SourceLines>) -> Self {
        self.lines = lines;
        self
    }

    /// Starts the trace: the process's track and a track for each thread the trace names.
    pub fn start(out: W, info: &TraceInfo) -> io::Result<Self> {
        let mut perfetto = Perfetto::begin(out);
        perfetto.process(info, info.summary.header.pid);
        perfetto.w.flush_buffer()?;
        Ok(perfetto)
    }

    /// Starts a trace of several processes' traces, each added by [`Perfetto::process`].
    pub fn begin(out: W) -> Self {
        Perfetto {
            w: BlockWriter::new(out),
            clock: EventClock::new(TimeBase {
                base: 0,
                ticks_per_second: None,
                offset: 0,
            }),
            pid: 0,
            tracks: Vec::new(),
            tids: TidIndex::default(),
            sequences: 0,
            begins: Vec::new(),
            locations: Vec::new(),
            lines: None,
            scratch: Vec::new(),
            slice_end: Padded::new(&SLICE_END_EVENT),
            switched_out: false,
            events: 0,
        }
    }

    /// Draws the time switched out as slices of their own (`hookprof timeline --time=cpu`).
    pub fn with_switched_out(mut self, on: bool) -> Self {
        self.switched_out = on;
        self
    }

    /// A process's track (named after the executable, with `pid`) and a track for each thread
    /// its trace names; the events that follow, until the next call, are that trace's. Each
    /// track is a sequence of its own, numbered on from the previous process's.
    pub fn process(&mut self, info: &TraceInfo, pid: u64) {
        let exe = info.program();
        let uuid = self.next_sequence();
        let b = &mut self.w.buf;
        let packet = open(b, TRACE_PACKET);
        let descriptor = open(b, TRACK_DESCRIPTOR);
        uint(b, TD_UUID, u64::from(uuid));
        let process = open(b, TD_PROCESS);
        uint(b, PD_PID, pid);
        bytes(b, PD_NAME, exe.as_bytes());
        close(b, process);
        close(b, descriptor);
        uint(b, SEQUENCE_ID, u64::from(uuid));
        close(b, packet);
        self.pid = pid;
        self.clock = EventClock::new(info.clock);
        self.tracks.clear();
        self.tids = TidIndex::default();
        self.begins.clear();
        self.locations.clear();
        self.lines = None;
        for t in &info.threads {
            if self.tids.index(t.tid).1 {
                self.add_track(t.tid, &t.title());
            }
        }
    }

    /// The current process's DWARF lines ([`Perfetto::with_lines`]).
    pub fn set_lines(&mut self, lines: Option<SourceLines>) {
        self.lines = lines;
    }

    /// The next packet sequence (and track uuid): 1 for the first process, its threads 2, 3, …
    fn next_sequence(&mut self) -> u32 {
        self.sequences = self.sequences.saturating_add(1);
        self.sequences
    }

    /// Declares the track of thread `tid`, the next in `tracks`, and starts its sequence.
    #[cold]
    fn add_track(&mut self, tid: u64, name: &str) {
        let sequence = self.next_sequence();
        let b = &mut self.w.buf;
        let packet = open(b, TRACE_PACKET);
        let descriptor = open(b, TRACK_DESCRIPTOR);
        uint(b, TD_UUID, u64::from(sequence));
        let thread = open(b, TD_THREAD);
        uint(b, THD_PID, self.pid);
        uint(b, THD_TID, tid);
        bytes(b, THD_NAME, name.as_bytes());
        close(b, thread);
        close(b, descriptor);
        uint(b, SEQUENCE_ID, u64::from(sequence));
        uint(b, FIRST_PACKET_ON_SEQUENCE, 1);
        close(b, packet);

        let packet = open(b, TRACE_PACKET);
        uint(b, SEQUENCE_ID, u64::from(sequence));
        uint(b, SEQUENCE_FLAGS, SEQ_INCREMENTAL_STATE_CLEARED);
        let defaults = open(b, PACKET_DEFAULTS);
        let event_defaults = open(b, TRACK_EVENT_DEFAULTS);
        uint(b, DEFAULT_TRACK_UUID, u64::from(sequence));
        close(b, event_defaults);
        close(b, defaults);
        let interned = open(b, INTERNED_DATA);
        let entry = open(b, ID_DEBUG_ANNOTATION_NAMES);
        uint(b, INTERNED_IID, ADDRESS_NAME_IID);
        bytes(b, INTERNED_NAME, b"address");
        close(b, entry);
        close(b, interned);
        close(b, packet);

        let mut fields = Vec::new();
        uint(&mut fields, SEQUENCE_ID, u64::from(sequence));
        uint(&mut fields, SEQUENCE_FLAGS, SEQ_NEEDS_INCREMENTAL_STATE);
        self.tracks.push(Track {
            fields: Padded::new(&fields),
            interned: Vec::new(),
            switched_out_interned: [false; 3],
        });
    }

    /// The index of thread `tid`'s track, declared now if the trace did not name the thread.
    fn track(&mut self, tid: u64) -> usize {
        let (index, new) = self.tids.index(tid);
        if new {
            self.add_track(tid, &format!("tid {tid}"));
        }
        index
    }

    fn end_event(&mut self) {
        self.events += 1;
        self.w.end_event();
    }

    /// Ends the trace and returns the writer, or the first write error.
    pub fn finish(mut self) -> io::Result<W> {
        self.w.flush_buffer()?;
        self.w.out.flush()?;
        Ok(self.w.out)
    }
}

impl<W: Write> View for Perfetto<W> {
    const IN_TIME_ORDER: bool = true;

    fn enter(&mut self, tid: u64, stack: &mut [ViewFrame], names: &Names) {
        if self.w.failed() {
            return;
        }
        let Some(frame) = stack.last() else { return };
        let track = self.track(tid);
        let f = frame.function as usize;
        let iid = u64::from(frame.function) + 1;
        if self.begins.len() <= f {
            self.begins.resize(f + 1, None);
            self.locations.resize(f + 1, None);
        }
        let (lines, locations) = (&self.lines, &mut self.locations);
        let event = self.begins[f].get_or_insert_with(|| {
            locations[f] = lines.as_ref().and_then(|l| l.location(frame.address));
            let mut b = Vec::new();
            let event = open(&mut b, TRACK_EVENT);
            uint(&mut b, TE_TYPE, TYPE_SLICE_BEGIN);
            uint(&mut b, TE_NAME_IID, iid);
            if locations[f].is_some() {
                uint(&mut b, TE_SOURCE_LOCATION_IID, iid);
            }
            let annotation = open(&mut b, TE_DEBUG_ANNOTATIONS);
            uint(&mut b, DA_NAME_IID, ADDRESS_NAME_IID);
            uint(&mut b, DA_POINTER_VALUE, names.entry_points[f]);
            close(&mut b, annotation);
            close(&mut b, event);
            Padded::new(&b)
        });
        let track = &mut self.tracks[track];
        if track.interned.len() <= f {
            track.interned.resize(f + 1, false);
        }
        let extra = &mut self.scratch;
        extra.clear();
        if !track.interned[f] {
            track.interned[f] = true;
            let data = open(extra, INTERNED_DATA);
            let name = names.name(frame.function).as_bytes();
            let entry = open(extra, ID_EVENT_NAMES);
            uint(extra, INTERNED_IID, iid);
            bytes(extra, INTERNED_NAME, name);
            close(extra, entry);
            if let Some((file, line)) = &self.locations[f] {
                let entry = open(extra, ID_SOURCE_LOCATIONS);
                uint(extra, INTERNED_IID, iid);
                bytes(extra, SL_FILE_NAME, file.as_bytes());
                bytes(extra, SL_FUNCTION_NAME, name);
                uint(extra, SL_LINE_NUMBER, u64::from(*line));
                close(extra, entry);
            }
            close(extra, data);
        }
        let time = self.clock.time(frame.entry_time);
        if extra.is_empty() {
            write_call_event(&mut self.w, &track.fields, time, event);
        } else {
            write_event(
                &mut self.w.buf,
                track.fields.text(),
                time,
                extra,
                event.text(),
            );
        }
        self.end_event();
    }

    /// A switched-out interval: a slice named `switched out` (its name in the event: it is
    /// rare next to the calls), nested in the open call's.
    fn switched_out(
        &mut self,
        tid: u64,
        from: u64,
        to: u64,
        reason: SwitchReason,
        _stack: &[ViewFrame],
        _: &Names,
    ) {
        if !self.switched_out || self.w.failed() {
            return;
        }
        let t = self.track(tid);
        let mut event = Vec::new();
        let e = open(&mut event, TRACK_EVENT);
        uint(&mut event, TE_TYPE, TYPE_SLICE_BEGIN);
        uint(&mut event, TE_NAME_IID, switched_out_iid(reason));
        close(&mut event, e);
        let (from, to) = (self.clock.time(from), self.clock.time(to));
        let extra = &mut self.scratch;
        extra.clear();
        let track = &mut self.tracks[t];
        if !track.switched_out_interned[reason_index(reason)] {
            track.switched_out_interned[reason_index(reason)] = true;
            let data = open(extra, INTERNED_DATA);
            let entry = open(extra, ID_EVENT_NAMES);
            uint(extra, INTERNED_IID, switched_out_iid(reason));
            bytes(extra, INTERNED_NAME, reason.slice_name().as_bytes());
            close(extra, entry);
            close(extra, data);
        }
        write_event(&mut self.w.buf, track.fields.text(), from, extra, &event);
        self.end_event();
        let fields = self.tracks[t].fields.text();
        write_event(&mut self.w.buf, fields, to, &[], &SLICE_END_EVENT);
        self.end_event();
    }

    /// A stream's loss: a `TYPE_INSTANT` event named `lost N records` on the thread's track.
    fn lost(&mut self, tid: u64, time: u64, count: u64, _names: &Names) {
        if self.w.failed() {
            return;
        }
        let track = self.track(tid);
        let time = self.clock.time(time);
        let mut event = Vec::new();
        let e = open(&mut event, TRACK_EVENT);
        uint(&mut event, TE_TYPE, TYPE_INSTANT);
        bytes(
            &mut event,
            TE_NAME,
            format!("lost {count} records").as_bytes(),
        );
        close(&mut event, e);
        write_event(
            &mut self.w.buf,
            self.tracks[track].fields.text(),
            time,
            &[],
            &event,
        );
        self.end_event();
    }

    fn exit(&mut self, tid: u64, time: u64, _stack: &[ViewFrame], _names: &Names) {
        if self.w.failed() {
            return;
        }
        let track = self.track(tid);
        let time = self.clock.time(time);
        write_call_event(
            &mut self.w,
            &self.tracks[track].fields,
            time,
            &self.slice_end,
        );
        self.end_event();
    }
}

/// Writes an event's packet: its timestamp (`time`, ns), `fields` (its sequence's fixed
/// fields), `extra` (interned data or nothing) and `event`, its `track_event` field. Every
/// part but the time is made beforehand, so a packet is its length and a few copies.
#[inline]
fn write_event(b: &mut Vec<u8>, fields: &[u8], time: u64, extra: &[u8], event: &[u8]) {
    let mut stamp = [0u8; 11];
    stamp[0] = (TIMESTAMP << 3 | VARINT) as u8;
    let stamp_len = 1 + varint_into(&mut stamp[1..], time);
    let len = stamp_len + fields.len() + extra.len() + event.len();
    key(b, TRACE_PACKET, LENGTH_DELIMITED);
    varint(b, len as u64);
    b.extend_from_slice(&stamp[..stamp_len]);
    b.extend_from_slice(fields);
    b.extend_from_slice(extra);
    b.extend_from_slice(event);
}

/// What [`write_event`] writes without `extra`, by fixed-size copies (a call's two events:
/// no `memcpy` calls, a third of the Perfetto trace's instructions).
#[inline(always)]
fn write_call_event<W: Write>(w: &mut BlockWriter<W>, fields: &Padded, time: u64, event: &Padded) {
    let mut stamp = [0u8; 16];
    stamp[0] = (TIMESTAMP << 3 | VARINT) as u8;
    let stamp_len = 1 + varint_into(&mut stamp[1..], time);
    let len = stamp_len + fields.text().len() + event.text().len();
    const PACKET_KEY: u32 = TRACE_PACKET << 3 | LENGTH_DELIMITED;
    const _: () = assert!(PACKET_KEY < 0x80, "the packet's key is one byte");
    if len < 0x80 {
        w.put_prefix(&[PACKET_KEY as u8, len as u8], 2);
    } else {
        key(&mut w.buf, TRACE_PACKET, LENGTH_DELIMITED);
        varint(&mut w.buf, len as u64);
    }
    w.put_prefix(&stamp, stamp_len);
    w.put(fields);
    w.put(event);
}

/// The `track_event` field of every end packet: `{type: TYPE_SLICE_END}`.
const SLICE_END_EVENT: [u8; 4] = [
    (TRACK_EVENT << 3 | LENGTH_DELIMITED) as u8,
    2,
    (TE_TYPE << 3 | VARINT) as u8,
    TYPE_SLICE_END as u8,
];

/// Writes `value` as a varint at the start of `out` (at least 10 bytes); returns its length.
fn varint_into(out: &mut [u8], mut value: u64) -> usize {
    let mut n = 0;
    while value >= 0x80 {
        out[n] = value as u8 | 0x80;
        value >>= 7;
        n += 1;
    }
    out[n] = value as u8;
    n + 1
}

fn varint(b: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        b.push(value as u8 | 0x80);
        value >>= 7;
    }
    b.push(value as u8);
}

fn key(b: &mut Vec<u8>, field: u32, wire_type: u32) {
    varint(b, u64::from(field << 3 | wire_type));
}

/// A varint field.
fn uint(b: &mut Vec<u8>, field: u32, value: u64) {
    key(b, field, VARINT);
    varint(b, value);
}

/// A string or bytes field.
fn bytes(b: &mut Vec<u8>, field: u32, value: &[u8]) {
    key(b, field, LENGTH_DELIMITED);
    varint(b, value.len() as u64);
    b.extend_from_slice(value);
}

/// Starts an embedded message: its key and a one-byte length that [`close`] fills in.
/// Returns the length's position.
fn open(b: &mut Vec<u8>, field: u32) -> usize {
    key(b, field, LENGTH_DELIMITED);
    b.push(0);
    b.len() - 1
}

/// Ends the embedded message [`open`] started at `at`: most are shorter than 128 bytes and
/// their length fits the byte kept for it; a longer one's length is moved in.
fn close(b: &mut Vec<u8>, at: usize) {
    let len = b.len() - at - 1;
    if len < 0x80 {
        b[at] = len as u8;
    } else {
        let mut length = Vec::with_capacity(10);
        varint(&mut length, len as u64);
        b.splice(at..=at, length);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_and_lengths_are_protobuf_encoding() {
        let mut b = Vec::new();
        uint(&mut b, 1, 150);
        assert_eq!(b, [0x08, 0x96, 0x01]);
        b.clear();
        uint(&mut b, FIRST_PACKET_ON_SEQUENCE, 1);
        assert_eq!(b, [0xb8, 0x05, 0x01]);
        // A message of 200 bytes: its length takes two bytes, moved in by close.
        b.clear();
        let at = open(&mut b, 2);
        b.extend_from_slice(&[7; 200]);
        close(&mut b, at);
        assert_eq!(&b[..3], &[0x12, 0xc8, 0x01]);
        assert_eq!(b.len(), 203);
        // Nested: the inner one's long length shifts the outer one's contents, which
        // close measures after.
        b.clear();
        let outer = open(&mut b, 1);
        let inner = open(&mut b, 2);
        b.extend_from_slice(&[7; 130]);
        close(&mut b, inner);
        close(&mut b, outer);
        assert_eq!(&b[..5], &[0x0a, 0x85, 0x01, 0x12, 0x82]);
        assert_eq!(b.len(), 3 + 3 + 130);
    }
}
