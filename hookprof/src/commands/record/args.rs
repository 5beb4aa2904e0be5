//! `hookprof record`'s arguments, and where a firmware's stream comes from (`record`, `top`).

use crate::commands::arguments::parse_duration;
use anyhow::{Context, Result};
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
#[command(group(clap::ArgGroup::new("source").required(true).args(["gdb", "tcp", "serial"])))]
pub struct RecordArgs {
    #[command(flatten)]
    pub stream: StreamArgs,
    /// With --serial on a regular file: keep reading as it grows, until the stream's end or
    /// Ctrl-C.
    #[arg(long)]
    pub follow: bool,
    /// The trace to write.
    #[arg(short, long, value_name = "FILE", default_value = "firmware.hktrace")]
    pub output: PathBuf,
    /// No progress line on stderr.
    #[arg(short, long)]
    pub quiet: bool,
}

/// Where a firmware's stream comes from (`record`, `top`): docs/baremetal.md, "Streaming".
#[derive(clap::Args, Debug)]
pub struct StreamArgs {
    /// A firmware's stream through a GDB server at HOST:PORT (qemu's gdb stub, OpenOCD, J-Link
    /// GDB Server, pyOCD); needs --exe, whose `_SEGGER_RTT` symbol locates the ring.
    #[arg(long, value_name = "HOST:PORT", requires = "exe")]
    pub gdb: Option<String>,
    /// A firmware's stream from an RTT server's (or a UART's) TCP port at HOST:PORT: the
    /// up-buffer's bytes as they come.
    #[arg(long, value_name = "HOST:PORT")]
    pub tcp: Option<String>,
    /// A firmware's stream from a UART device, a FIFO or a file carrying the up-buffer's bytes.
    #[arg(long, value_name = "PATH")]
    pub serial: Option<PathBuf>,
    /// The firmware's ELF file (byte order, pointer size, the control block's address,
    /// function names).
    #[arg(long, value_name = "ELF")]
    pub exe: Option<PathBuf>,
    /// The time between two reads of the ring (--gdb), or between two looks at a file that
    /// has not grown (record's --follow): a number and its unit (10ms, 500us). The ring must
    /// not fill in between: see docs/baremetal.md, "Streaming", for the rate that keeps up.
    #[arg(long, value_name = "DURATION", default_value = "10ms", value_parser = parse_duration)]
    pub poll_interval: u64,
}

impl StreamArgs {
    /// The source the options name, if any; `follow`: a regular file is followed as it grows.
    pub fn source(&self, follow: bool) -> Result<Option<super::options::Source>> {
        use super::options::Source;
        Ok(if let Some(address) = &self.gdb {
            Some(Source::Gdb {
                address: address.clone(),
                exe: self.exe.clone().context("--gdb needs --exe")?,
            })
        } else if let Some(address) = &self.tcp {
            Some(Source::Tcp {
                address: address.clone(),
            })
        } else {
            self.serial.as_ref().map(|path| Source::Serial {
                path: path.clone(),
                follow,
            })
        })
    }
}
