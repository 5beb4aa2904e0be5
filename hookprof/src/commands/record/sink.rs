//! What takes the decoded records ([`Consumer`]), and the sink that feeds it.

use std::io;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::input::format::Endian;
use crate::input::stream::{Decoder, Event, PushError, StreamCounts};
use crate::output::stream_trace::TraceBuilder;

use super::options::*;

/// What takes the decoded records: the trace file ([`TraceBuilder`], `hookprof record`) or
/// the live view (`hookprof top --gdb`, [`crate::analysis::live`]). The transports and the
/// decoder are the same for both.
pub trait Consumer {
    /// Takes one decoded record.
    fn event(&mut self, event: Event) -> io::Result<()>;
    /// The records of one read have all been given (the live view publishes them then).
    fn pushed(&mut self) -> io::Result<()> {
        Ok(())
    }
    /// What the stream said so far, for the summary.
    fn counts(&self) -> StreamCounts;
    /// The stream ended (`cut`: where it should have gone on).
    fn finish(self, cut: bool) -> io::Result<()>;
}

impl Consumer for TraceBuilder {
    fn event(&mut self, event: Event) -> io::Result<()> {
        TraceBuilder::event(self, event)
    }

    fn counts(&self) -> StreamCounts {
        self.counts
    }

    fn finish(self, cut: bool) -> io::Result<()> {
        if cut {
            self.finish_cut()
        } else {
            TraceBuilder::finish(self)
        }
    }
}

/// `hookprof record`'s consumer: the trace file at `options.output`.
pub(super) fn trace_file(options: &Options, endian: Endian) -> Result<TraceBuilder, RecordError> {
    TraceBuilder::create(&options.output, endian, options.exe.as_deref()).map_err(|e| {
        RecordError::File {
            path: options.output.clone(),
            message: format!("cannot create the trace: {e}"),
        }
    })
}

/// The decoder and what takes its records, with the progress line.
pub(super) struct Sink<C: Consumer> {
    decoder: Decoder,
    consumer: Option<C>,
    output: PathBuf,
    progress: bool,
    last_progress: Instant,
    pub(super) ended: bool,
}

impl<C: Consumer> Sink<C> {
    pub(super) fn new(options: &Options, consumer: C) -> Self {
        Sink {
            decoder: Decoder::new(),
            consumer: Some(consumer),
            output: options.output.clone(),
            progress: options.progress,
            last_progress: Instant::now(),
            ended: false,
        }
    }

    pub(super) fn push(&mut self, bytes: &[u8]) -> Result<(), RecordError> {
        let consumer = self.consumer.as_mut().expect("not finished");
        let ended = &mut self.ended;
        let result = self.decoder.push(bytes, &mut |event| {
            if matches!(event, Event::End { .. }) {
                *ended = true;
            }
            consumer.event(event)
        });
        let result = result.and_then(|()| consumer.pushed().map_err(PushError::Io));
        match result {
            Ok(()) => {}
            Err(PushError::Stream(error)) => {
                return Err(RecordError::Stream {
                    path: self.output.clone(),
                    error,
                })
            }
            Err(PushError::Io(e)) => {
                return Err(RecordError::File {
                    path: self.output.clone(),
                    message: e.to_string(),
                })
            }
        }
        if self.progress && self.last_progress.elapsed() >= Duration::from_millis(500) {
            self.last_progress = Instant::now();
            let lost = self.consumer.as_ref().expect("not finished").counts().lost;
            eprint!(
                "\rhookprof record: {} bytes, {} events, {lost} lost   ",
                self.decoder.bytes, self.decoder.records
            );
        }
        Ok(())
    }

    pub(super) fn finish(self, ended_by: &str, polls: u64) -> Result<Summary, RecordError> {
        self.finish_as(ended_by, polls, false)
    }

    /// Finishes the trace where `cause` cut the stream (a LOST mark there, not marked
    /// complete) and returns the error to report, which says so.
    pub(super) fn cut(self, cause: RecordError, polls: u64) -> RecordError {
        let how = cause.to_string();
        match self.finish_as(&how, polls, true) {
            Ok(kept) => RecordError::Cut {
                cause: Box::new(cause),
                kept: Box::new(kept),
            },
            // The trace could not be finished either: that is the error to see first.
            Err(e) => e,
        }
    }

    fn finish_as(mut self, ended_by: &str, polls: u64, cut: bool) -> Result<Summary, RecordError> {
        let consumer = self.consumer.take().expect("not finished");
        let counts = consumer.counts();
        let summary = Summary {
            bytes: self.decoder.bytes,
            records: self.decoder.records,
            call_bytes: self.decoder.call_bytes,
            counts: StreamCounts {
                lost_markers: counts.lost_markers + u64::from(cut),
                ..counts
            },
            polls,
            high_water: None,
            ended_by: ended_by.to_string(),
            trailing_bytes: self.decoder.pending_bytes(),
            output: self.output.clone(),
        };
        consumer.finish(cut).map_err(|e| RecordError::File {
            path: self.output.clone(),
            message: format!("cannot finish the trace: {e}"),
        })?;
        if self.progress {
            eprintln!();
        }
        Ok(summary)
    }
}
