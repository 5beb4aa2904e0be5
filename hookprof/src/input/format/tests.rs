use std::path::Path;

use super::*;

fn sample(endian: Endian, version: u16) -> Vec<u8> {
    sample_with_flags(endian, version, FLAG_COMPLETE)
}

fn sample_with_flags(endian: Endian, version: u16, flags: u64) -> Vec<u8> {
    let mut header = Header::new(endian);
    header.version = version;
    header.ticks_per_second = 1_000_000_000;
    header.flags = flags;
    header.pid = 42;
    let mut w = Writer::new(Vec::new(), &header).unwrap();
    w.exe(Path::new("/bin/prog")).unwrap();
    w.module(&Module {
        bias: 0x1000,
        start: 0x2000,
        end: 0x3000,
        path: None,
    })
    .unwrap();
    w.events(7, &[Record::entry(10, 0x2100), Record::exit(20, 0x2100)])
        .unwrap();
    w.lost(7, 3).unwrap();
    w.thread(7, 1, "main").unwrap();
    w.raw_chunk(99, 0, &[1, 2, 3, 4, 5, 6, 7, 8]).unwrap();
    w.clock(&Clock {
        ticks_per_second: 5,
        first_tick: 1,
        last_tick: 2,
        header_check: None,
    })
    .unwrap();
    w.into_inner()
}

/// Writer::packed against the reader: a thread's records of every shape (calls, exits
/// below the top, unmatched exits, a resync, recursion deeper than the predicted stack,
/// more functions than the table holds, clock jumps) come back exactly.
#[test]
fn packed_writer_round_trips_through_the_reader() {
    let mut records = Vec::new();
    let mut time = 1000u64;
    let mut seed = 12345u64;
    let mut next = || {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        seed >> 33
    };
    let mut stack: Vec<u64> = Vec::new();
    for i in 0..60_000u64 {
        time += next() % 100;
        if i % 9973 == 0 {
            time = time.wrapping_add(1 << 60); // a clock jump
        }
        let r = next() % 10;
        let (kind, address) = if r < 5 || stack.is_empty() {
            let a = 0x1000 + (next() % 5000) * 4 + 1; // Thumb, 5000 functions
            stack.push(a);
            (RecordKind::Entry, a)
        } else if r < 9 {
            (RecordKind::Exit, stack.pop().unwrap())
        } else if r == 9 && stack.len() > 3 {
            let a = stack[stack.len() - 3]; // an exit below the top
            stack.truncate(stack.len() - 3);
            (RecordKind::Exit, a)
        } else {
            (RecordKind::Exit, 0x8000_0001) // matches nothing
        };
        records.push(Record {
            time,
            kind,
            address,
        });
        if i == 30_000 {
            // A resync pair: the escape, then its target.
            records.push(Record {
                time,
                kind: RecordKind::Exit,
                address: 0,
            });
            records.push(Record {
                time,
                kind: RecordKind::Entry,
                address: stack.first().copied().unwrap_or(0x1001),
            });
        }
    }
    for i in 0..600u64 {
        records.push(Record {
            time: time + i,
            kind: RecordKind::Entry,
            address: 0x40_0001,
        });
    }
    for endian in [Endian::Little, Endian::Big] {
        let mut header = Header::new(endian);
        header.pointer_size = 4;
        let mut out = Vec::new();
        Writer::new(&mut out, &header)
            .unwrap()
            .packed(5, &records)
            .unwrap();
        let trace = Trace::new(&out).unwrap();
        let mut back = Vec::new();
        for chunk in trace.chunks() {
            let chunk = chunk.unwrap();
            assert_eq!(chunk.chunk_type, chunk_type::PACKED);
            if let Chunk::Events(events) = chunk.chunk {
                back.extend(events.iter().map(|r| r.unwrap()));
            }
        }
        assert_eq!(back.len(), records.len());
        for (i, (a, b)) in back.iter().zip(&records).enumerate() {
            assert_eq!(a, b, "record {i}");
        }
        assert!(out.len() < records.len() * 6, "{} bytes", out.len());
    }
}

#[test]
fn round_trip_both_byte_orders_and_versions() {
    for (endian, version) in [
        (Endian::Little, 1),
        (Endian::Big, 1),
        (Endian::Little, 2),
        (Endian::Big, 2),
    ] {
        let bytes = sample(endian, version);
        let trace = Trace::new(&bytes).unwrap();
        assert_eq!(trace.header().endian, endian);
        assert_eq!(trace.header().pid, 42);
        assert!(trace.header().is_complete());
        let chunks: Vec<_> = trace.chunks().collect::<Result<_, _>>().unwrap();
        assert_eq!(chunks.len(), 7);
        assert!(matches!(&chunks[0].chunk, Chunk::Exe { path } if path == Path::new("/bin/prog")));
        assert!(
            matches!(&chunks[1].chunk, Chunk::Module(m) if m.bias == 0x1000 && m.path.is_none())
        );
        let Chunk::Events(ev) = &chunks[2].chunk else {
            panic!("expected EVENTS")
        };
        assert_eq!(chunks[2].thread, 7);
        let recs: Vec<_> = ev.iter().collect::<Result<_, _>>().unwrap();
        assert_eq!(
            recs,
            vec![Record::entry(10, 0x2100), Record::exit(20, 0x2100)]
        );
        assert!(matches!(
            chunks[3].chunk,
            Chunk::Lost { count: 3, at: None }
        ));
        assert!(matches!(&chunks[4].chunk, Chunk::Thread { sequence: 1, name } if name == "main"));
        assert!(matches!(chunks[5].chunk, Chunk::Unknown));
        assert_eq!(chunks[5].chunk_type, 99);
        assert!(matches!(chunks[6].chunk, Chunk::Clock(c) if c.ticks_per_second == 5));
    }
}

/// Every chunk of `bytes` through [`Integrity`].
fn integrity(bytes: &[u8]) -> Result<Integrity, FormatError> {
    let trace = Trace::new(bytes)?;
    let mut integrity = Integrity::new(&trace);
    for chunk in trace.chunks() {
        integrity.observe(&chunk?);
    }
    integrity.finish();
    Ok(integrity)
}

#[test]
fn checksums_of_every_chunk_and_the_header_match_in_both_byte_orders() {
    for endian in [Endian::Little, Endian::Big] {
        let bytes = sample_with_flags(endian, VERSION, FLAG_COMPLETE | FLAG_CHECKED);
        let i = integrity(&bytes).unwrap();
        assert!(i.is_clean(), "{i:?}");
        assert_eq!((i.verified, i.header_matches), (7, Some(true)));
        // The same chunks as without checksums, each followed by its CHECK chunk.
        let trace = Trace::new(&bytes).unwrap();
        let chunks: Vec<_> = trace.chunks().collect::<Result<_, _>>().unwrap();
        assert_eq!(chunks.len(), 14);
        for pair in chunks.chunks(2) {
            let Chunk::Check(check) = &pair[1].chunk else {
                panic!("chunk at {} is not a CHECK chunk", pair[1].offset)
            };
            assert_eq!(check.covered_offset(), Some(pair[0].offset));
            assert!(check.matches());
        }
        // A file without the flag has nothing to check, and nothing fails.
        let plain = integrity(&sample(endian, VERSION)).unwrap();
        assert!(plain.is_clean() && !plain.flagged && plain.verified == 0);
    }
}

/// Issue 15, item 9: bit flips in a trace's metadata went unnoticed. Now every single-bit
/// flip anywhere in the file is either a format error or a failed check.
#[test]
fn every_single_bit_flip_is_an_error_or_a_failed_check() {
    let bytes = sample_with_flags(Endian::Little, VERSION, FLAG_COMPLETE | FLAG_CHECKED);
    let mut unnoticed = Vec::new();
    for bit in 0..bytes.len() * 8 {
        let mut flipped = bytes.clone();
        flipped[bit / 8] ^= 1 << (bit % 8);
        if matches!(integrity(&flipped), Ok(i) if i.is_clean()) {
            unnoticed.push(bit);
        }
    }
    assert!(
        unnoticed.is_empty(),
        "flipped bits not noticed: {unnoticed:?}"
    );
}

#[test]
fn a_failed_check_names_the_chunk_and_its_offset() {
    let mut bytes = sample_with_flags(Endian::Little, VERSION, FLAG_COMPLETE | FLAG_CHECKED);
    let module_at = {
        let trace = Trace::new(&bytes).unwrap();
        let module = trace.chunks().nth(2).unwrap().unwrap();
        assert!(matches!(module.chunk, Chunk::Module(_)));
        module.offset
    };
    let at = module_at as usize + CHUNK_HEADER_SIZE; // its bias
    bytes[at + 2] ^= 0x10;
    bytes[HEADER_SIZE as usize - 8] ^= 1; // the header's lost count
    let i = integrity(&bytes).unwrap();
    let warnings = i.warnings().join("\n");
    assert!(
        warnings.contains(&format!(
            "1 of the trace's chunks do not match their checksums, the first is the MODULE \
             chunk at byte {}:",
            module_at
        )),
        "{warnings}"
    );
    assert!(
        warnings.contains("the header (bytes 0-63) does not match its checksum"),
        "{warnings}"
    );
}

#[test]
fn events_length_must_be_a_multiple_of_16() {
    let mut w = Writer::new(Vec::new(), &Header::new(Endian::Little)).unwrap();
    w.raw_chunk(chunk_type::EVENTS, 1, &[0u8; 24]).unwrap();
    let bytes = w.into_inner();
    let trace = Trace::new(&bytes).unwrap();
    let err = trace.chunks().next().unwrap().unwrap_err();
    assert_eq!(err.offset, 64);
    assert_eq!(
        err.to_string(),
        "byte 64: EVENTS chunk length 24 is not a multiple of 16"
    );
}

#[test]
fn truncated_chunk_names_offset_and_sizes() {
    let mut w = Writer::new(Vec::new(), &Header::new(Endian::Little)).unwrap();
    w.events(1, &[Record::entry(1, 4), Record::exit(3, 4)])
        .unwrap();
    let mut bytes = w.into_inner();
    bytes.truncate(bytes.len() - 8);
    let trace = Trace::new(&bytes).unwrap();
    let err = trace.chunks().next().unwrap().unwrap_err();
    assert_eq!(
        err.to_string(),
        "byte 64: truncated: EVENTS chunk declares 32 payload bytes but only 24 remain"
    );
}

#[test]
fn version_1_reserved_kind_is_rejected_at_its_record() {
    let mut header = Header::new(Endian::Big);
    header.version = 1;
    let mut w = Writer::new(Vec::new(), &header).unwrap();
    let mut payload = Vec::new();
    payload.extend_from_slice(&0u64.to_be_bytes());
    payload.extend_from_slice(&5u64.to_be_bytes());
    payload.extend_from_slice(&(2u64 << 62 | 9).to_be_bytes());
    payload.extend_from_slice(&5u64.to_be_bytes());
    w.raw_chunk(chunk_type::EVENTS, 1, &payload).unwrap();
    let bytes = w.into_inner();
    let trace = Trace::new(&bytes).unwrap();
    let chunk = trace.chunks().next().unwrap().unwrap();
    let Chunk::Events(ev) = chunk.chunk else {
        panic!()
    };
    let results: Vec<_> = ev.iter().collect();
    assert_eq!(results.len(), 2);
    assert!(results[0].is_ok());
    let err = results[1].clone().unwrap_err();
    assert_eq!(err.offset, 64 + 16 + 16);
    assert_eq!(err.kind, FormatErrorKind::ReservedKind { kind: 2 });
}

#[test]
fn header_errors_point_at_the_field() {
    let good = Header::new(Endian::Little).encode();
    let mut bad = good.clone();
    bad[0] = b'X';
    assert_eq!(Trace::new(&bad).err().unwrap().offset, 0);
    let mut bad = good.clone();
    bad[8] = 3;
    assert_eq!(Trace::new(&bad).err().unwrap().offset, 8);
    let mut bad = good.clone();
    bad[9] = 2;
    assert_eq!(Trace::new(&bad).err().unwrap().offset, 9);
    let mut bad = good.clone();
    bad[10] = 6;
    let err = Trace::new(&bad).err().unwrap();
    assert_eq!(err.offset, 10);
    assert!(err.to_string().contains("version is 6"), "{err}");
    bad[10] = 0;
    assert!(Trace::new(&bad).is_err());
    let mut bad = good.clone();
    bad[12] = 72;
    assert_eq!(Trace::new(&bad).err().unwrap().offset, 12);
    assert!(Trace::new(&good[..63]).is_err());
}

/// A PACKED payload from hand-written stream items (each a list of varints).
fn packed_payload(records: u32, first_time: u64, items: &[u64]) -> Vec<u8> {
    let mut stream = Vec::new();
    for &item in items {
        let mut v = item;
        while v >= 0x80 {
            stream.push((v as u8) | 0x80);
            v >>= 7;
        }
        stream.push(v as u8);
    }
    let mut payload = Vec::new();
    payload.extend_from_slice(&records.to_le_bytes());
    payload.extend_from_slice(&(stream.len() as u32).to_le_bytes());
    payload.extend_from_slice(&first_time.to_le_bytes());
    payload.extend_from_slice(&stream);
    while payload.len() % 8 != 0 {
        payload.push(0);
    }
    payload
}

fn packed_records(payload: &[u8]) -> Vec<Result<Record, FormatError>> {
    let mut w = Writer::new(Vec::new(), &Header::new(Endian::Little)).unwrap();
    w.raw_chunk(chunk_type::PACKED, 7, payload).unwrap();
    let bytes = w.into_inner();
    let trace = Trace::new(&bytes).unwrap();
    let chunk = trace.chunks().next().unwrap().unwrap();
    let Chunk::Events(events) = chunk.chunk else {
        panic!("expected records")
    };
    events.iter().collect()
}

fn zigzag(d: i64) -> u64 {
    ((d << 1) ^ (d >> 63)) as u64
}

#[test]
fn packed_stream_decodes_every_kind_of_item() {
    let (f, g) = (0x1000u64, 0x1040u64);
    let items = [
        (5 << 2) | pack::ENTRY_NEW,
        zigzag(f as i64), // enter f at 105
        (3 << 2) | pack::ENTRY_NEW,
        zigzag((g - f) as i64),    // enter g at 108
        (2 << 2) | pack::EXIT_TOP, // exit g at 110
        (1 << 2) | pack::ENTRY_INDEX,
        1, // enter g at 111
        pack::OTHER,
        pack::OTHER_CLOCK,
        5000, // the clock jumps to 5000
        pack::OTHER,
        pack::OTHER_EXIT_INDEX, // exit f at 5000 (g unwound)
        (4 << 2) | pack::OTHER,
        pack::OTHER_EXIT_NEW,
        zigzag(-(g as i64)),       // escape (exit 0)
        pack::ENTRY_INDEX,         // (delta 0)
        0,                         // resync target f: pushed
        (1 << 2) | pack::EXIT_TOP, // exit f at 5005
    ];
    let records: Vec<Record> = packed_records(&packed_payload(8, 100, &items))
        .into_iter()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(
        records,
        vec![
            Record::entry(105, f),
            Record::entry(108, g),
            Record::exit(110, g),
            Record::entry(111, g),
            Record::exit(5000, f),
            Record::exit(5004, 0),
            Record::entry(5004, f),
            Record::exit(5005, f),
        ]
    );
}

#[test]
fn damaged_packed_streams_are_errors_at_their_byte() {
    // Stream starts at byte 64 + 16 (chunk header) + 16 (fixed part) = 96.
    let index_past = packed_payload(1, 0, &[pack::ENTRY_INDEX, 3]);
    let err = packed_records(&index_past).pop().unwrap().unwrap_err();
    assert_eq!(err.offset, 98, "{err}");
    assert!(
        err.to_string().contains("PACKED record 0: a table index"),
        "{err}"
    );
    let short = packed_payload(2, 0, &[pack::ENTRY_NEW, 8]);
    let err = packed_records(&short).pop().unwrap().unwrap_err();
    assert!(
        err.to_string()
            .contains("record 1: the stream ends inside it"),
        "{err}"
    );
    let exit_none = packed_payload(1, 0, &[pack::EXIT_TOP]);
    assert!(packed_records(&exit_none).pop().unwrap().is_err());
    let trailing = packed_payload(1, 0, &[pack::ENTRY_NEW, 8, 0]);
    let err = packed_records(&trailing).pop().unwrap().unwrap_err();
    assert!(
        err.to_string()
            .contains("bytes after the chunk's last record"),
        "{err}"
    );
    let mut long = packed_payload(0, 0, &[]);
    long[4] = 200; // a stream longer than the payload
    let mut w = Writer::new(Vec::new(), &Header::new(Endian::Little)).unwrap();
    w.raw_chunk(chunk_type::PACKED, 7, &long).unwrap();
    let bytes = w.into_inner();
    let err = Trace::new(&bytes)
        .unwrap()
        .chunks()
        .next()
        .unwrap()
        .unwrap_err();
    assert_eq!(err.offset, 64);
    assert!(err.to_string().contains("does not fit"), "{err}");
}

#[test]
fn zero_holes_are_skipped() {
    let mut w = Writer::new(Vec::new(), &Header::new(Endian::Little)).unwrap();
    w.hole(24).unwrap();
    w.lost(1, 2).unwrap();
    let bytes = w.into_inner();
    let trace = Trace::new(&bytes).unwrap();
    let chunks: Vec<_> = trace.chunks().collect::<Result<_, _>>().unwrap();
    assert_eq!(chunks.len(), 2);
    assert!(matches!(chunks[0].chunk, Chunk::Hole));
    assert_eq!(chunks[0].total_len(), 24);
    assert!(matches!(
        chunks[1].chunk,
        Chunk::Lost { count: 2, at: None }
    ));
}

#[test]
fn pointer_size_4_masks_addresses() {
    let mut header = Header::new(Endian::Little);
    header.pointer_size = 4;
    let mut w = Writer::new(Vec::new(), &header).unwrap();
    w.events(1, &[Record::entry(1, 0xffff_ffff_8000_1000)])
        .unwrap();
    let bytes = w.into_inner();
    let trace = Trace::new(&bytes).unwrap();
    let Chunk::Events(ev) = trace.chunks().next().unwrap().unwrap().chunk else {
        panic!()
    };
    assert_eq!(ev.iter().next().unwrap().unwrap().address, 0x8000_1000);
}

/// Version 2: the kind is bit 1 of the address word, the timestamp all 64 bits; the bytes
/// are exactly what the C runtime stores.
#[test]
fn version_2_record_layout() {
    let mut w = Writer::new(Vec::new(), &Header::new(Endian::Little)).unwrap();
    let late = u64::MAX - 5;
    w.events(
        1,
        &[Record::entry(late, 0x4010), Record::exit(late + 1, 0x4010)],
    )
    .unwrap();
    let bytes = w.into_inner();
    let payload = &bytes[64 + 16..];
    assert_eq!(&payload[0..8], &late.to_le_bytes());
    assert_eq!(&payload[8..16], &0x4010u64.to_le_bytes());
    assert_eq!(&payload[24..32], &0x4012u64.to_le_bytes());
    let trace = Trace::new(&bytes).unwrap();
    let Chunk::Events(ev) = trace.chunks().next().unwrap().unwrap().chunk else {
        panic!()
    };
    let recs: Vec<_> = ev.iter().collect::<Result<_, _>>().unwrap();
    assert_eq!(
        recs,
        vec![Record::entry(late, 0x4010), Record::exit(late + 1, 0x4010)]
    );
}

#[test]
fn version_2_writer_rejects_an_address_with_the_exit_bit() {
    let mut w = Writer::new(Vec::new(), &Header::new(Endian::Little)).unwrap();
    let err = w.events(1, &[Record::entry(1, 0x4012)]).unwrap_err();
    assert!(err.to_string().contains("bit 1"), "{err}");
}

/// Records of many shapes for the PACKED decoder's paths: calls from a few functions (the
/// fast path), recursion deeper than the predicted stack, more functions than the table
/// holds, exits below the top, unmatched exits, resync pairs (a target on the stack and
/// one not), clock escapes (a clock that goes back, huge jumps, a delta just under and at
/// 2^58), deltas of every width, addresses far apart (long zigzag deltas).
fn records_of_every_shape(seed: u64, len: usize) -> Vec<Record> {
    let mut state = seed | 1;
    let mut next = move || {
        // xorshift64*
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        state.wrapping_mul(0x2545_F491_4F6C_DD1D)
    };
    let mut records = Vec::with_capacity(len + 2048);
    let mut stack: Vec<u64> = Vec::new();
    let mut time = 1_000u64;
    while records.len() < len {
        let r = next();
        time = time.wrapping_add(match r % 64 {
            0 => next() >> 6,               // up to 2^58: a clock escape or nearly
            1 => (1 << 58) - 1 - (r >> 60), // just under the escape
            2 => 1 << 58,
            3 => 0u64.wrapping_sub(next() % 5000), // the clock went back
            4..=9 => next() % (1 << 20),
            _ => r >> 59, // 0 to 31 ticks: one byte
        });
        let address = |n: u64| 0x40_1000 + n * 16;
        let far = |n: u64| 0xffff_8000_0000_0000u64.wrapping_add(n << 4) | 1; // Thumb bit
        let push = |records: &mut Vec<Record>, time, kind, address| {
            records.push(Record {
                time,
                kind,
                address,
            })
        };
        match (next() % 1000, stack.is_empty()) {
            (0..=459, _) | (_, true) => {
                let a = address(next() % 6);
                stack.push(a);
                push(&mut records, time, RecordKind::Entry, a);
            }
            (460..=919, false) => push(&mut records, time, RecordKind::Exit, stack.pop().unwrap()),
            (920..=959, false) => {
                // A function seldom seen: the table fills, then overflows.
                let a = if next() % 2 == 0 {
                    address(6 + next() % 6000)
                } else {
                    far(next() % 100_000)
                };
                stack.push(a);
                push(&mut records, time, RecordKind::Entry, a);
            }
            (960..=974, false) => {
                // An exit below the top: the frames above it unwound.
                let at = (next() as usize) % stack.len();
                let a = stack[at];
                stack.truncate(at);
                push(&mut records, time, RecordKind::Exit, a);
            }
            (975..=977, false) => {
                // An entry of address 0 and its exit, which pops a 0 off the predicted
                // stack: the next entry is read as a resync target.
                push(&mut records, time, RecordKind::Entry, 0);
                push(&mut records, time, RecordKind::Exit, 0);
            }
            (978..=984, false) => {
                let a = if next() % 3 == 0 {
                    0x7700_0001
                } else {
                    address(next() % 20)
                };
                push(&mut records, time, RecordKind::Exit, a); // may match nothing
            }
            (985..=994, false) => {
                // A resync: the escape, then its target, on the stack or not.
                push(&mut records, time, RecordKind::Exit, 0);
                let at = (next() as usize) % (stack.len() + 1);
                let a = stack.get(at).copied().unwrap_or(address(next() % 30));
                if at < stack.len() {
                    stack.truncate(at + 1);
                } else {
                    stack.push(a);
                }
                push(&mut records, time, RecordKind::Entry, a);
            }
            _ => {
                // Recursion deeper than the ring, then back out.
                let a = address(next() % 8);
                let depth = 200 + next() % 700;
                for _ in 0..depth {
                    push(&mut records, time, RecordKind::Entry, a);
                    time += 3;
                }
                for _ in 0..depth {
                    push(&mut records, time, RecordKind::Exit, a);
                    time += 2;
                }
            }
        }
    }
    records
}

/// The PACKED chunk's records through the careful path alone, and the error that ended
/// them.
fn careful_records(events: &Events<'_>) -> (Vec<Record>, Option<FormatError>) {
    let mut decoder = PackDecoder::new(events, events.packed.unwrap());
    let mut out = Vec::new();
    loop {
        if decoder.index >= decoder.records {
            return (out, decoder.after_last());
        }
        match decoder.next_record() {
            Ok(record) => out.push(record),
            Err(err) => return (out, Some(err)),
        }
    }
}

/// The same through [`Cursor::fill`] (the fast path first), `batch` records at a time.
fn filled_records(events: &Events<'_>, batch: usize) -> (Vec<Record>, Option<FormatError>) {
    let mut cursor = events.cursor();
    let mut buffer = vec![Record::entry(0, 0); batch];
    let mut out = Vec::new();
    loop {
        let (n, error) = cursor.fill(&mut buffer);
        out.extend_from_slice(&buffer[..n]);
        if error.is_some() || n < batch {
            return (out, error);
        }
    }
}

/// The same through [`Events::iter`].
fn iterated_records(events: &Events<'_>) -> (Vec<Record>, Option<FormatError>) {
    let mut out = Vec::new();
    for item in events.iter() {
        match item {
            Ok(record) => out.push(record),
            Err(err) => return (out, Some(err)),
        }
    }
    (out, None)
}

/// Every way of decoding gives the careful path's records and error, record by record.
fn assert_paths_agree(events: &Events<'_>, what: &str) -> (Vec<Record>, Option<FormatError>) {
    let careful = careful_records(events);
    for batch in [1, 3, 32, 4096] {
        let fast = filled_records(events, batch);
        assert_eq!(fast.1, careful.1, "{what}, batches of {batch}: the error");
        assert_eq!(fast.0.len(), careful.0.len(), "{what}, batches of {batch}");
        for (i, (a, b)) in fast.0.iter().zip(&careful.0).enumerate() {
            assert_eq!(a, b, "{what}, batches of {batch}: record {i}");
        }
    }
    assert_eq!(iterated_records(events), careful, "{what}, through iter");
    careful
}

/// A large generated PACKED stream decodes the same through the fast path as through the
/// careful one, losslessly; and so does every damaged copy of it (a byte changed, the
/// stream cut short, a wrong record count), with the same error at the same byte.
#[test]
fn fast_and_careful_packed_decoding_agree_record_by_record() {
    let records = records_of_every_shape(0x5eed, 400_000);
    let mut header = Header::new(Endian::Little);
    header.pointer_size = 8;
    let mut w = Writer::new(Vec::new(), &header).unwrap();
    // Chunks of many lengths, as the runtime's (65 536 records) and shorter.
    let mut at = 0;
    for len in [1usize, 2, 31, 32, 33, 100, 4097, 65_536].iter().cycle() {
        if at >= records.len() {
            break;
        }
        let end = (at + len).min(records.len());
        w.packed(1, &records[at..end]).unwrap();
        at = end;
    }
    let bytes = w.into_inner();
    let trace = Trace::new(&bytes).unwrap();
    let mut back = Vec::new();
    let mut streams = Vec::new();
    for chunk in trace.chunks() {
        let chunk = chunk.unwrap();
        let Chunk::Events(events) = chunk.chunk else {
            panic!("{:?}", chunk.chunk)
        };
        let (decoded, error) = assert_paths_agree(&events, "the stream as written");
        assert_eq!(error, None);
        back.extend(decoded);
        streams.push(events);
    }
    assert_eq!(back.len(), records.len());
    for (i, (a, b)) in back.iter().zip(&records).enumerate() {
        assert_eq!(a, b, "record {i}");
    }

    // Damaged copies of the longer chunks.
    let mut state = 0x0dd_ba11u64;
    let mut next = move || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        state >> 33
    };
    let mut errors = 0;
    for events in streams.iter().filter(|e| e.len() >= 4097) {
        let head = events.packed.unwrap();
        for round in 0..100 {
            let mut stream = events.bytes.data.to_vec();
            let mut records = head.records;
            match round % 5 {
                0 => {
                    let at = next() as usize % stream.len();
                    stream[at] ^= 1 << (next() % 8);
                }
                1 => {
                    let at = next() as usize % stream.len();
                    stream[at] = next() as u8;
                }
                2 => {
                    // A number of 10 bytes or more: its last byte decides.
                    let at = next() as usize % (stream.len() - 12);
                    stream[at..at + 9].fill(0x80 | next() as u8);
                    stream[at + 9] = (next() % 4) as u8 | if round % 3 == 0 { 0x80 } else { 0 };
                }
                3 => {
                    let keep = next() as usize % stream.len();
                    stream.truncate(keep);
                }
                _ => records = (next() as u32) % (records + 2),
            }
            let damaged = Events {
                bytes: Bytes {
                    data: &stream,
                    endian: Endian::Little,
                },
                packed: Some(PackedHead { records, ..head }),
                ..*events
            };
            let (_, error) = assert_paths_agree(&damaged, &format!("damage {round}"));
            errors += usize::from(error.is_some());
        }
    }
    assert!(errors > 100, "only {errors} damaged streams were errors");
}
