//! Rewrites a trace with every EVENTS chunk as a PACKED chunk (the same records, encoded as
//! the runtime's `hkt_pack` would), so that the PACKED decoder can be measured on traces
//! written without packing, such as `gen_trace`'s hard case (hundreds of functions a thread,
//! entries and exits at random).
//!
//! ```text
//! cargo build --release -p hookprof --example gen_trace --example repack --example decode_bench
//! target/release/examples/gen_trace /dev/shm/g.hktrace 20000000
//! target/release/examples/repack /dev/shm/g.hktrace /dev/shm/gp.hktrace
//! target/release/examples/decode_bench /dev/shm/gp.hktrace
//! ```
//!
//! Other chunks are copied as they are; CHECK chunks are left out (and the header's flag that
//! promises them cleared), since the repacked chunks have other checksums.

use std::io::BufWriter;

use hookprof::input::format::{Chunk, Header, Record, Trace, Writer, FLAG_CHECKED};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [from, to] = args.as_slice() else {
        return Err("usage: repack TRACE OUT".into());
    };
    let bytes = std::fs::read(from)?;
    let trace = Trace::new(&bytes)?;
    let mut header: Header = trace.header().clone();
    header.flags &= !FLAG_CHECKED;
    let mut writer = Writer::new(BufWriter::new(std::fs::File::create(to)?), &header)?;
    let (mut repacked, mut records) = (0u64, 0u64);
    for chunk in trace.chunks() {
        let chunk = chunk?;
        match &chunk.chunk {
            Chunk::Events(events) if !events.is_packed() => {
                let all: Vec<Record> = events.iter().collect::<Result<_, _>>()?;
                writer.packed(chunk.thread, &all)?;
                repacked += 1;
                records += all.len() as u64;
            }
            Chunk::Check(_) | Chunk::Hole => {}
            _ => {
                let start = chunk.offset as usize + 16;
                let payload = &bytes[start..start + chunk.length as usize];
                writer.raw_chunk(chunk.chunk_type, chunk.thread, payload)?;
            }
        }
    }
    writer.flush()?;
    println!("{to}: {repacked} EVENTS chunks ({records} records) written as PACKED");
    Ok(())
}
