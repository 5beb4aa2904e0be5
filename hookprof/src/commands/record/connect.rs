//! Connecting to a GDB server or an RTT server: tried again while it starts.

use std::io::{self};
use std::net::{TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use super::options::*;

pub(super) fn connect_error(address: &str, e: io::Error) -> RecordError {
    RecordError::Connect {
        address: address.to_string(),
        message: e.to_string(),
    }
}

/// Connects to `address`, trying 50 times, 100 ms apart (a server started just before may not
/// listen yet), each try 1 s at most; Ctrl-C (`stop`) ends the tries. Writes to the connection time out after
/// [`REPLY_TIMEOUT`] (a server that reads nothing).
pub(super) fn connect(address: &str, stop: &AtomicBool) -> Result<TcpStream, RecordError> {
    let addrs: Vec<_> = address
        .to_socket_addrs()
        .map_err(|e| RecordError::Connect {
            address: address.to_string(),
            message: format!("not a HOST:PORT address: {e}"),
        })?
        .collect();
    // A server started just before (qemu -gdb, an RTT server) may not listen yet: a few tries.
    let mut last = None;
    for attempt in 0..50 {
        for a in &addrs {
            if stop.load(Ordering::Relaxed) {
                return Err(RecordError::Connect {
                    address: address.to_string(),
                    message: "interrupted (Ctrl-C) before a connection was made".to_string(),
                });
            }
            // Long enough for a distant server's handshake, short enough to see Ctrl-C soon.
            match TcpStream::connect_timeout(a, Duration::from_secs(1)) {
                Ok(s) => {
                    let _ = s.set_nodelay(true);
                    let _ = s.set_write_timeout(Some(REPLY_TIMEOUT));
                    return Ok(s);
                }
                Err(e) => last = Some(e),
            }
        }
        if attempt < 49 {
            std::thread::sleep(Duration::from_millis(100));
        }
    }
    Err(RecordError::Connect {
        address: address.to_string(),
        message: format!(
            "cannot connect: {} (is the GDB or RTT server running there?)",
            last.map_or("no address".to_string(), |e| e.to_string())
        ),
    })
}
