//! The bare-metal runtime's stream (docs/trace-format.md, "The stream"; the runtime's side:
//! runtime/src/trace_stream.h): bytes read from a target's RTT up-buffer while it runs, decoded
//! incrementally into a `.hktrace` file.
//!
//! [`Decoder`] (here) takes the bytes in whatever pieces they come (a record may straddle two
//! reads) and hands each record to a [`crate::output::stream_trace::TraceBuilder`], which writes the file as it goes: a `PACKED`
//! chunk per stretch of one task's records (at most 65 536), a `LOST` chunk (with the time of the first drop)
//! where the target dropped records, and at the end each task's `THREAD` chunk, the `CLOCK`
//! chunk and the header, complete.

use std::io;

/// Record kinds: the low two bits of a record's first number.
const EXIT_SAME: u64 = 0;
const ENTRY: u64 = 1;
const EXIT: u64 = 2;
const OTHER: u64 = 3;
/// Sub-kinds of [`OTHER`].
const S_START: u64 = 0;
const S_CLOCK: u64 = 1;
const S_LOST: u64 = 2;
const S_SWITCH: u64 = 3;
const S_CREATED: u64 = 4;
const S_ENTRY_RAW: u64 = 5;
const S_EXIT_RAW: u64 = 6;
const S_ESCAPE: u64 = 7;
const S_END: u64 = 8;
/// The packed RAM buffer's flight recorder: records written over before the ones that follow.
const S_RING: u64 = 9;
/// A task's name, written at a flight recorder's finish (its creation may have been written
/// over): names the task's thread; not a record the firmware counts.
const S_NAME: u64 = 10;
/// The stream version this decoder reads.
pub const STREAM_VERSION: u64 = 1;

/// Whether `data` starts like a stream: its START record (a delta of 0 and `OTHER`, then
/// `S_START`, the version and a pointer size of 4 or 8, each a one-byte LEB128 number).
pub fn starts_like(data: &[u8]) -> bool {
    matches!(data, [a, b, v, 4 | 8, ..] if u64::from(*a) == OTHER && u64::from(*b) == S_START
        && u64::from(*v) == STREAM_VERSION)
}

/// A decoded stream record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    Start {
        pointer_size: u8,
        ticks_per_second: u64,
        time: u64,
    },
    Call {
        time: u64,
        address: u64,
        exit: bool,
    },
    /// A resync escape: the next record, an entry, is where a `longjmp` landed.
    Escape {
        time: u64,
    },
    /// `count` records dropped, the first at `time`; `task`: task switches were among them,
    /// and this task runs now.
    Lost {
        time: u64,
        count: u64,
        task: Option<u64>,
    },
    Switch {
        time: u64,
        task: u64,
    },
    Created {
        time: u64,
        task: u64,
        name: String,
    },
    /// The firmware ended the stream: records it made, records it dropped.
    /// A flight recorder's window begins: `count` records before it were written over.
    Ring {
        time: u64,
        count: u64,
    },
    Name {
        time: u64,
        task: u64,
        name: String,
    },
    End {
        time: u64,
        records: u64,
        lost: u64,
    },
}

/// What a stream said: its records by kind, and its losses (`hookprof record`'s summary; what
/// `hookprof top` counts).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StreamCounts {
    /// Entries and exits (a resync escape is one).
    pub calls: u64,
    pub switches: u64,
    pub created: u64,
    /// Records the target dropped, and the places it did.
    pub lost: u64,
    pub lost_markers: u64,
    /// Records a flight recorder (the packed RAM buffer's) wrote over before its window.
    pub overwritten: u64,
    /// The END record's counts (records made, records dropped), if the firmware ended the
    /// stream.
    pub end: Option<(u64, u64)>,
}

impl StreamCounts {
    /// Counts one record.
    pub fn count(&mut self, event: &Event) {
        match *event {
            Event::Call { .. } | Event::Escape { .. } => self.calls += 1,
            Event::Switch { .. } => self.switches += 1,
            Event::Created { .. } => self.created += 1,
            Event::Lost { count, .. } => {
                self.lost += count;
                self.lost_markers += 1;
            }
            Event::Ring { count, .. } => self.overwritten += count,
            Event::End { records, lost, .. } => self.end = Some((records, lost)),
            Event::Start { .. } | Event::Name { .. } => {}
        }
    }

    /// Records of what the END record counts (calls' records, task switches and creations).
    pub fn records_kept(&self) -> u64 {
        self.calls + self.switches + self.created
    }
}

/// A stream that cannot be decoded, at a byte offset of the stream.
#[derive(Debug, thiserror::Error)]
#[error("stream byte {offset}: {message}")]
pub struct StreamError {
    pub offset: u64,
    pub message: String,
}

/// Decodes the stream incrementally: [`Decoder::push`] the bytes as they come.
#[derive(Default)]
pub struct Decoder {
    pending: Vec<u8>,
    /// Stream offset of `pending[0]`.
    offset: u64,
    started: bool,
    pointer_mask: u64,
    time: u64,
    address: u64,
    /// Bytes taken in, records decoded, and the bytes and records of entries and exits.
    pub bytes: u64,
    pub records: u64,
    pub call_bytes: u64,
    pub call_records: u64,
}

/// Reads one LEB128 number at `*at`; `None` if the bytes end inside it.
fn varint(b: &[u8], at: &mut usize) -> Result<Option<u64>, String> {
    let mut v: u64 = 0;
    let mut shift = 0;
    loop {
        let Some(&byte) = b.get(*at) else {
            return Ok(None);
        };
        *at += 1;
        if shift == 63 && byte > 1 {
            return Err("a number wider than 64 bits".into());
        }
        v |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Ok(Some(v));
        }
        shift += 7;
        if shift > 63 {
            return Err("a number wider than 64 bits".into());
        }
    }
}

fn unzigzag(v: u64) -> u64 {
    (v >> 1) ^ (v & 1).wrapping_neg()
}

impl Decoder {
    pub fn new() -> Self {
        Decoder {
            pointer_mask: u64::MAX,
            ..Default::default()
        }
    }

    /// Takes `bytes` and hands every record they complete to `out`.
    pub fn push(
        &mut self,
        bytes: &[u8],
        out: &mut dyn FnMut(Event) -> io::Result<()>,
    ) -> Result<(), PushError> {
        self.bytes += bytes.len() as u64;
        self.pending.extend_from_slice(bytes);
        let mut at = 0;
        loop {
            let start = at;
            match self.record(&mut at) {
                Ok(Some(event)) => {
                    self.records += 1;
                    if matches!(event, Event::Call { .. }) {
                        self.call_records += 1;
                        self.call_bytes += (at - start) as u64;
                    }
                    out(event).map_err(PushError::Io)?;
                }
                Ok(None) => {
                    at = start;
                    break;
                }
                Err(message) => {
                    return Err(PushError::Stream(StreamError {
                        offset: self.offset + start as u64,
                        message,
                    }))
                }
            }
        }
        self.pending.drain(..at);
        self.offset += at as u64;
        Ok(())
    }

    /// Bytes received that do not yet make a whole record.
    pub fn pending_bytes(&self) -> usize {
        self.pending.len()
    }

    /// One record from `pending[*at..]`, or `None` if it is not all there yet (then nothing of
    /// the decoder's state has changed).
    fn record(&mut self, at: &mut usize) -> Result<Option<Event>, String> {
        let b = &self.pending[..];
        let Some(v) = varint(b, at)? else {
            return Ok(None);
        };
        let (delta, k) = (v >> 2, v & 3);
        if !self.started && k != OTHER {
            return Err("the stream does not begin with its START record".into());
        }
        let time = self.time.wrapping_add(delta);
        let mask = self.pointer_mask;
        let step = |d: u64, scale: u32| (self.address.wrapping_add(unzigzag(d) << scale)) & mask;
        let event = match k {
            EXIT_SAME => Event::Call {
                time,
                address: self.address,
                exit: true,
            },
            ENTRY | EXIT => {
                let Some(d) = varint(b, at)? else {
                    return Ok(None);
                };
                Event::Call {
                    time,
                    address: step(d, 2),
                    exit: k == EXIT,
                }
            }
            _ => {
                let Some(s) = varint(b, at)? else {
                    return Ok(None);
                };
                match s {
                    S_START => {
                        let mut n = [0u64; 4];
                        for x in &mut n {
                            let Some(v) = varint(b, at)? else {
                                return Ok(None);
                            };
                            *x = v;
                        }
                        if n[0] != STREAM_VERSION {
                            return Err(format!(
                                "stream version {} (this hookprof reads version {STREAM_VERSION})",
                                n[0]
                            ));
                        }
                        if n[1] != 4 && n[1] != 8 {
                            return Err(format!("pointer size {} (4 or 8)", n[1]));
                        }
                        Event::Start {
                            pointer_size: n[1] as u8,
                            ticks_per_second: n[2],
                            time: n[3],
                        }
                    }
                    S_CLOCK => {
                        let Some(t) = varint(b, at)? else {
                            return Ok(None);
                        };
                        // The clock is set; the record that follows has a delta of 0 from it.
                        self.time = t;
                        return self.record(at);
                    }
                    S_LOST => {
                        let (Some(count), Some(switched)) = (varint(b, at)?, varint(b, at)?) else {
                            return Ok(None);
                        };
                        let task = match switched {
                            0 => None,
                            1 => match varint(b, at)? {
                                Some(task) => Some(task),
                                None => return Ok(None),
                            },
                            n => return Err(format!("a LOST record's switch flag is {n}")),
                        };
                        Event::Lost { time, count, task }
                    }
                    S_SWITCH => {
                        let Some(task) = varint(b, at)? else {
                            return Ok(None);
                        };
                        Event::Switch { time, task }
                    }
                    S_CREATED | S_NAME => {
                        let (Some(task), Some(n)) = (varint(b, at)?, varint(b, at)?) else {
                            return Ok(None);
                        };
                        if n > 255 {
                            return Err(format!("a task name of {n} bytes"));
                        }
                        let end = *at + n as usize;
                        let Some(name) = b.get(*at..end) else {
                            return Ok(None);
                        };
                        *at = end;
                        let name = String::from_utf8_lossy(name).into_owned();
                        if s == S_NAME {
                            Event::Name { time, task, name }
                        } else {
                            Event::Created { time, task, name }
                        }
                    }
                    S_ENTRY_RAW | S_EXIT_RAW => {
                        let Some(d) = varint(b, at)? else {
                            return Ok(None);
                        };
                        Event::Call {
                            time,
                            address: step(d, 0),
                            exit: s == S_EXIT_RAW,
                        }
                    }
                    S_ESCAPE => Event::Escape { time },
                    S_RING => {
                        let Some(count) = varint(b, at)? else {
                            return Ok(None);
                        };
                        Event::Ring { time, count }
                    }
                    S_END => {
                        let (Some(records), Some(lost)) = (varint(b, at)?, varint(b, at)?) else {
                            return Ok(None);
                        };
                        Event::End {
                            time,
                            records,
                            lost,
                        }
                    }
                    _ => return Err(format!("unknown record kind 3/{s}")),
                }
            }
        };
        // The whole record is there: now the state moves.
        match &event {
            Event::Start {
                pointer_size, time, ..
            } => {
                self.started = true;
                self.time = *time;
                // A START begins every half of a flight recorder: addresses from 0 again, as
                // at the first.
                self.address = 0;
                self.pointer_mask = if *pointer_size == 4 {
                    u64::from(u32::MAX)
                } else {
                    u64::MAX
                };
            }
            Event::Call { address, .. } => {
                self.time = time;
                self.address = *address;
            }
            _ => self.time = time,
        }
        Ok(Some(event))
    }
}

#[derive(Debug, thiserror::Error)]
pub enum PushError {
    #[error(transparent)]
    Stream(#[from] StreamError),
    #[error("cannot write the trace: {0}")]
    Io(io::Error),
}

#[cfg(test)]
mod tests {
    use super::*;

    fn put(out: &mut Vec<u8>, mut v: u64) {
        while v >= 0x80 {
            out.push((v as u8) | 0x80);
            v >>= 7;
        }
        out.push(v as u8);
    }

    fn zz(d: i64) -> u64 {
        ((d << 1) ^ (d >> 63)) as u64
    }

    #[test]
    fn decodes_records_split_anywhere() {
        let mut s = Vec::new();
        put(&mut s, OTHER);
        put(&mut s, S_START);
        put(&mut s, 1);
        put(&mut s, 4);
        put(&mut s, 25_000_000);
        put(&mut s, 1000);
        // entry of 0x1001 (Thumb: not a multiple of 4 from 0, so raw), 5 ticks later; its exit
        // 3 later; entry 0x1201; lost 7; exit of 0x1001 after a clock jump.
        put(&mut s, 5 << 2 | OTHER);
        put(&mut s, S_ENTRY_RAW);
        put(&mut s, zz(0x1001));
        put(&mut s, 3 << 2 | EXIT_SAME);
        put(&mut s, 2 << 2 | ENTRY);
        put(&mut s, zz((0x1201 - 0x1001) / 4));
        put(&mut s, 1 << 2 | OTHER);
        put(&mut s, S_LOST);
        put(&mut s, 7);
        put(&mut s, 0);
        put(&mut s, OTHER);
        put(&mut s, S_CLOCK);
        put(&mut s, 1 << 40);
        put(&mut s, EXIT);
        put(&mut s, zz(-0x200 / 4));
        let mut whole = Vec::new();
        let mut d = Decoder::new();
        d.push(&s, &mut |e| {
            whole.push(e);
            Ok(())
        })
        .unwrap();
        assert_eq!(
            whole,
            vec![
                Event::Start {
                    pointer_size: 4,
                    ticks_per_second: 25_000_000,
                    time: 1000
                },
                Event::Call {
                    time: 1005,
                    address: 0x1001,
                    exit: false
                },
                Event::Call {
                    time: 1008,
                    address: 0x1001,
                    exit: true
                },
                Event::Call {
                    time: 1010,
                    address: 0x1201,
                    exit: false
                },
                Event::Lost {
                    time: 1011,
                    count: 7,
                    task: None
                },
                Event::Call {
                    time: 1 << 40,
                    address: 0x1001,
                    exit: true
                },
            ]
        );
        // One byte at a time: the same records.
        let mut bytewise = Vec::new();
        let mut d = Decoder::new();
        for b in &s {
            d.push(std::slice::from_ref(b), &mut |e| {
                bytewise.push(e);
                Ok(())
            })
            .unwrap();
        }
        assert_eq!(bytewise, whole);
        assert_eq!(d.pending_bytes(), 0);
    }

    /// A flight recorder's halves read straight through: the RING count in its padded 5
    /// bytes, a second START that sets `last` back to 0, and a NAME at the finish.
    #[test]
    fn decodes_a_flight_recorders_halves_and_names() {
        let start = |s: &mut Vec<u8>, time: u64| {
            for v in [OTHER, S_START, 1, 4, 10_000_000, time] {
                put(s, v);
            }
        };
        let mut s = Vec::new();
        start(&mut s, 100);
        put(&mut s, OTHER);
        put(&mut s, S_RING);
        s.extend_from_slice(&[0x80 | 42, 0x80, 0x80, 0x80, 0]);
        put(&mut s, 2 << 2 | ENTRY);
        put(&mut s, zz(0x400 / 4));
        start(&mut s, 200);
        put(&mut s, OTHER);
        put(&mut s, S_RING);
        s.extend_from_slice(&[0x80, 0x80, 0x80, 0x80, 0]);
        put(&mut s, 1 << 2 | EXIT);
        put(&mut s, zz(0x400 / 4)); // from 0 again, not from 0x400
        put(&mut s, OTHER);
        put(&mut s, S_NAME);
        put(&mut s, 0x2000);
        put(&mut s, 2);
        s.extend_from_slice(b"t1");
        let mut events = Vec::new();
        Decoder::new()
            .push(&s, &mut |e| {
                events.push(e);
                Ok(())
            })
            .unwrap();
        assert_eq!(
            events[1],
            Event::Ring {
                time: 100,
                count: 42
            }
        );
        assert_eq!(
            events[2],
            Event::Call {
                time: 102,
                address: 0x400,
                exit: false
            }
        );
        assert_eq!(
            events[4],
            Event::Ring {
                time: 200,
                count: 0
            }
        );
        assert_eq!(
            events[5],
            Event::Call {
                time: 201,
                address: 0x400,
                exit: true
            }
        );
        assert_eq!(
            events[6],
            Event::Name {
                time: 201,
                task: 0x2000,
                name: "t1".into()
            }
        );
    }

    #[test]
    fn a_stream_without_its_start_is_an_error_at_its_offset() {
        let mut d = Decoder::new();
        let err = d.push(&[ENTRY as u8, 0], &mut |_| Ok(())).unwrap_err();
        assert!(err.to_string().contains("stream byte 0"), "{err}");
    }
}
