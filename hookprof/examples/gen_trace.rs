//! Writes a large synthetic `.hktrace` for measuring `hookprof report` (docs/performance.md,
//! "Post tool"), with the crate's own [`Writer`], so no program has to be built and traced.
//!
//! ```sh
//! cargo run --release -p hookprof --example gen_trace -- /dev/shm/big.hktrace 100000000
//! target/release/hookprof report /dev/shm/big.hktrace > /dev/null
//! ```
//!
//! Arguments: output path, number of records (default 100 M), number of threads (default 4),
//! number of distinct functions (default 400), seed (default 1). The same arguments always
//! give the same file.
//!
//! The records come as a program's would: the first thread writes half of them, the others
//! the rest, in EVENTS chunks of 65536 records interleaved as the runtime's buffer flushes
//! would be. What they record is a hard case for the replay rather than a typical program:
//! every thread walks a fixed random call graph (each function calls 2 to 6 others, chosen
//! uniformly; about one in twelve also calls itself, and calls back to lower-numbered
//! functions make mutual recursion), entering or returning with equal odds between 1 and
//! 30 frames deep, so the processor cannot predict whether the next record is an entry or an
//! exit, and some 390 functions and 1600 arcs per thread are all in use. Traces of real programs
//! (bench/micro, the Lua workload of bench/bench.py) are more regular and replay about twice
//! as fast. About one record in a million is an exit that skips the frames above its own (a
//! `longjmp`) or an exit with no open frame, so the unusual paths of the replay run too.
//! Each thread ends with its frames exited and a THREAD chunk; a CLOCK chunk and a complete
//! header finish the file. No MODULE chunk: reports show addresses, not names.

use std::fs::File;
use std::io::{self, BufWriter, Seek, SeekFrom, Write};

use hookprof::input::format::{Clock, Endian, Header, Record, Writer, FLAG_COMPLETE};

/// Records per EVENTS chunk: the runtime's default buffer size.
const CHUNK_RECORDS: usize = 65536;
const MAX_DEPTH: usize = 30;
const TICKS_PER_SECOND: u64 = 2_400_000_000;
/// Address of function 0; functions are 0x60 bytes apart.
const TEXT_START: u64 = 0x40_1000;

/// xorshift64*: small, deterministic, good enough to shape a trace.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// One simulated thread: its stack of function indices and its clock.
struct Thread {
    tid: u64,
    stack: Vec<usize>,
    time: u64,
    records: u64,
}

fn address(function: usize) -> u64 {
    TEXT_START + 0x60 * function as u64
}

fn main() -> io::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(path) = args.first() else {
        eprintln!("usage: gen_trace OUTPUT [RECORDS [THREADS [FUNCTIONS [SEED]]]]");
        std::process::exit(2);
    };
    let number = |i: usize, default: u64| -> u64 {
        args.get(i)
            .map(|s| s.replace('_', "").parse().expect("a number"))
            .unwrap_or(default)
    };
    let total = number(1, 100_000_000);
    let threads = number(2, 4).max(1) as usize;
    let functions = number(3, 400).max(2) as usize;
    let mut rng = Rng(number(4, 1).max(1));

    // The call graph: callees of every function.
    let callees: Vec<Vec<usize>> = (0..functions)
        .map(|f| {
            let mut list: Vec<usize> = (0..2 + rng.below(5))
                .map(|_| rng.below(functions as u64) as usize)
                .collect();
            if rng.below(12) == 0 {
                list.push(f);
            }
            list
        })
        .collect();

    let mut header = Header::new(Endian::native());
    header.ticks_per_second = TICKS_PER_SECOND;
    header.pid = 4242;
    header.start_realtime_ns = 1_700_000_000_000_000_000;
    let mut w = Writer::new(BufWriter::new(File::create(path)?), &header)?;

    let start_tick = 1_000_000;
    let mut state: Vec<Thread> = (0..threads)
        .map(|i| Thread {
            tid: 1000 + i as u64,
            stack: Vec::new(),
            time: start_tick + 1000 * i as u64,
            records: 0,
        })
        .collect();
    // Chunks go round the threads; the first thread gets as many as all others together.
    let mut schedule: Vec<usize> = vec![0; threads.saturating_sub(1).max(1)];
    schedule.extend(1..threads);

    let mut buffer: Vec<Record> = Vec::with_capacity(CHUNK_RECORDS);
    let mut written = 0u64;
    let mut turn = 0;
    while written < total {
        let t = &mut state[schedule[turn % schedule.len()]];
        turn += 1;
        let want = CHUNK_RECORDS.min((total - written) as usize);
        buffer.clear();
        while buffer.len() < want {
            t.time += 1 + rng.below(64);
            let depth = t.stack.len();
            let roll = rng.below(1_000_000);
            if roll == 0 && depth >= 4 {
                // longjmp: exit of a frame a few levels down; the frames above it are unwound.
                let target = t.stack[depth - 2 - rng.below(2) as usize];
                let index = t.stack.iter().rposition(|&f| f == target).unwrap_or(0);
                t.stack.truncate(index);
                buffer.push(Record::exit(t.time, address(target)));
            } else if roll == 1 {
                // An exit whose entry was lost: no open frame has this address.
                buffer.push(Record::exit(t.time, address(functions) + 0x1000));
            } else if depth == 0 || (depth < MAX_DEPTH && rng.below(2) == 0) {
                let f = match t.stack.last() {
                    None => rng.below(4.min(functions as u64)) as usize,
                    Some(&caller) => {
                        let list = &callees[caller];
                        list[rng.below(list.len() as u64) as usize]
                    }
                };
                t.stack.push(f);
                buffer.push(Record::entry(t.time, address(f)));
            } else {
                let f = t.stack.pop().unwrap_or(0);
                buffer.push(Record::exit(t.time, address(f)));
            }
        }
        w.events(t.tid, &buffer)?;
        t.records += buffer.len() as u64;
        written += buffer.len() as u64;
    }

    // Every thread returns from its open frames, then says its name.
    let mut end_tick = 0;
    for (i, t) in state.iter_mut().enumerate() {
        buffer.clear();
        while let Some(f) = t.stack.pop() {
            t.time += 1 + rng.below(64);
            buffer.push(Record::exit(t.time, address(f)));
        }
        if !buffer.is_empty() {
            w.events(t.tid, &buffer)?;
            written += buffer.len() as u64;
        }
        w.thread(t.tid, i as u64 + 1, &format!("worker-{i}"))?;
        end_tick = end_tick.max(t.time);
    }
    w.clock(&Clock {
        ticks_per_second: TICKS_PER_SECOND,
        first_tick: start_tick,
        last_tick: end_tick + 10,
        header_check: None,
    })?;

    // The header again, now complete.
    header.flags = FLAG_COMPLETE;
    header.records = written;
    let mut file = w.into_inner().into_inner().map_err(|e| e.into_error())?;
    file.seek(SeekFrom::Start(0))?;
    file.write_all(&header.encode())?;
    println!("{path}: {written} records, {threads} threads, {functions} functions");
    Ok(())
}
