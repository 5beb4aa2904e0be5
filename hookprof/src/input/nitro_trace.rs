//! A NITRO function cost measurement buffer converted for the views: its calls as an in-memory
//! `.hktrace` and its functions' names ([`hktrace_file`]; the door, [`crate::input::open`],
//! calls it).

use std::collections::HashMap;
use std::path::Path;

use crate::input::error::NitroError as Error;
use crate::input::format::Endian;
use crate::input::nitro::{Contents, Dump, FunctionCost, EXIT_TAG};
use crate::input::nitro_program::{NameSource, Names, ProgramImage};

impl FunctionCost {
    /// The calls as a `.hktrace`, for the views: one thread (the buffer's), each function
    /// numbered by its name string (the buffer has no function addresses: its address is
    /// 4 × its number, and `names` says its name), each exit paired with the innermost open
    /// entry as `OS_CalcStatistics` pairs them, and every time less the intervals the thread
    /// was switched out before it, so that durations are what the summary counts. Exits with
    /// no entry are left out. Times are the runtime's ticks (no clock rate).
    pub fn to_hktrace(
        &self,
        thread: u64,
        names: &dyn NameSource,
    ) -> (Vec<u8>, HashMap<u64, String>) {
        use crate::input::format::{Header, Record, Writer, FLAG_COMPLETE};
        let mut names = Names {
            source: names,
            cache: HashMap::new(),
        };
        let mut table: HashMap<u64, String> = HashMap::new();
        let mut ids: HashMap<u64, u64> = HashMap::new();
        let mut open: Vec<u64> = Vec::new();
        let mut records = Vec::with_capacity(self.records.len());
        let mut away = 0u64;
        for r in &self.records {
            let time = r.tick.wrapping_sub(away);
            if r.name == EXIT_TAG {
                if let Some(address) = open.pop() {
                    records.push(Record::exit(time, address));
                }
            } else {
                let next = 4 * (ids.len() as u64 + 1);
                let address = *ids.entry(r.name).or_insert_with(|| {
                    let name = String::from_utf8_lossy(&names.get(r.name)).into_owned();
                    table.insert(next, name);
                    next
                });
                open.push(address);
                records.push(Record::entry(time, address));
            }
            away = away.wrapping_add(r.interval);
        }
        let mut header = Header::new(Endian::native());
        header.flags = FLAG_COMPLETE;
        header.records = records.len() as u64;
        header.lost = self.lost;
        let tid = thread.max(1);
        let mut w = Writer::new(Vec::new(), &header).expect("writing to a Vec cannot fail");
        for chunk in records.chunks(65536) {
            // Addresses are multiples of 4: bit 1 (the exit mark) is free.
            w.events(tid, chunk).expect("writing to a Vec cannot fail");
        }
        if self.lost > 0 {
            w.lost(tid, self.lost)
                .expect("writing to a Vec cannot fail");
        }
        w.thread(tid, 1, &format!("thread {tid}"))
            .expect("writing to a Vec cannot fail");
        (w.into_inner(), table)
    }
}

/// A buffer converted for the views ([`hktrace_file`]).
pub struct ForViews {
    /// The calls as a `.hktrace`.
    pub trace: Vec<u8>,
    /// The functions' names by the addresses the trace gives them.
    pub names: HashMap<u64, String>,
    pub warnings: Vec<String>,
}

/// A function cost measurement buffer as a `.hktrace` for the views, with its functions'
/// names ([`FunctionCost::to_hktrace`]) and the warnings to show. Other buffers are an error:
/// a call trace has no times, a statistics buffer no calls.
pub fn hktrace_file(dump_path: &Path, exe: &Path) -> Result<ForViews, Error> {
    let data = crate::input::read::read_bounded(dump_path, crate::input::read::MAX_DUMP_BYTES)
        .map_err(|error| Error::Io {
            path: dump_path.to_path_buf(),
            error,
        })?;
    let dump = Dump::parse(&data).map_err(|error| Error::Dump {
        path: dump_path.to_path_buf(),
        error,
    })?;
    let Contents::FunctionCost(cost) = &dump.contents else {
        return Err(Error::NotForViews {
            path: dump_path.to_path_buf(),
            kind: dump.header.kind,
        });
    };
    let elf = std::fs::read(exe).map_err(|error| Error::Io {
        path: exe.to_path_buf(),
        error,
    })?;
    let mut image = ProgramImage::new(&elf, &dump.header).map_err(|error| Error::Elf {
        path: exe.to_path_buf(),
        error,
    })?;
    let (trace, names) = cost.to_hktrace(u64::from(dump.header.thread), &image);
    Ok(ForViews {
        trace,
        names,
        warnings: image.take_warnings(),
    })
}
