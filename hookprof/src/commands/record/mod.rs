//! `hookprof record`: a bare-metal target's stream (the runtime's RTT up-buffer,
//! runtime/src/trace_stream.h) read while the firmware runs, into a `.hktrace`
//! (docs/baremetal.md, "Streaming").
//!
//! Three ways in, one decoder ([`crate::input::stream`]), and what takes the records behind a
//! [`Consumer`]: the trace file here, the live view in `hookprof top --gdb`
//! ([`crate::commands::top`]):
//! - [`Source::Gdb`]: the GDB remote serial protocol (qemu's gdbstub, OpenOCD, J-Link GDB
//!   Server, pyOCD): the control block found by its ELF symbol `_SEGGER_RTT`, then, every poll
//!   interval, the target halted (a `^C`), `WrOff`/`RdOff` and the new bytes read (`m`),
//!   `RdOff` written back (`M`), and the target continued (`c`). All-stop stubs (qemu's among
//!   them) answer no packet while the target runs, hence the halt; under qemu's `-icount`
//!   the target's clock stands still meanwhile.
//! - [`Source::Tcp`]: the raw up-buffer bytes from a probe's RTT server (OpenOCD's `rtt server`,
//!   J-Link's RTT telnet port, probe-rs, pyOCD).
//! - [`Source::Serial`]: the same bytes from a UART (a device, a FIFO, or a file qemu's
//!   chardev wrote).
//!
//! The recording ends when the target ends (the stub says it exited, the connection closes,
//! or the stream's END record has been read from a byte stream) or when `stop` is set
//! (Ctrl-C); the trace is finished either way. Where the stream is cut instead (a connection
//! reset, a byte that is not the stream's, a GDB server that stops making sense) the trace
//! keeps what came before, with a LOST mark where it stops, and is finished without its
//! *complete* flag; the error says where ([`RecordError::Cut`]).
//!
//! Every reader is bounded: a GDB exchange has [`REPLY_TIMEOUT`] to finish and takes at most
//! [`MAX_PACKET`] bytes of a packet, [`MAX_NOISE`] bytes that are no packet and
//! [`MAX_CONSOLE_PACKETS`] console packets; every blocking read wakes up at least every
//! [`WAKE`] to see Ctrl-C; the ring's place and size must lie in the firmware's RAM (its ELF's
//! writable segments and sections); and the trace's work per record is constant.

mod args;
mod connect;
mod gdb;
mod options;
mod read;
mod sink;

pub use args::*;
pub use options::*;
pub use read::*;
pub use sink::*;
