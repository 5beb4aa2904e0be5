//! The fuzz targets (hookprof::fuzz, fuzz/) on the committed corpus — real outputs of the test
//! programs: a traced two-thread program with a longjmp (format versions 3 and 4, profile mode
//! plain and at a 2-node limit, 4-record buffers with PAUSE chunks; and damaged copies the
//! checksums pass: a PACKED chunk repeated with its CHECK chunk, the file cut at a chunk
//! boundary before its CLOCK chunk, a PROFILE chunk repeated after its thread's end, a PACKED
//! chunk and its PAUSE swapped, a PACKED chunk's times moved by 2^62), TI dumps (binary and CCS hex), NITRO
//! call-trace and function-cost buffers, a pfpInst dump, a bare-metal gprof dump — and on a
//! fixed sequence of mutations of each (bit flips, truncations, insertions, words set to edge
//! values), so that every `cargo test` (CI) is a bounded fuzzing run. A panic fails the test;
//! errors are the expected answers. The long libFuzzer runs: docs/reliability.md.

use std::path::Path;

/// xorshift64*: the same mutations on every machine.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// One mutation of `input`.
fn mutate(input: &[u8], rng: &mut Rng) -> Vec<u8> {
    let mut data = input.to_vec();
    for _ in 0..1 + rng.below(3) {
        match rng.below(5) {
            0 if !data.is_empty() => {
                let at = rng.below(data.len());
                data[at] ^= 1 << rng.below(8);
            }
            1 => data.truncate(rng.below(data.len() + 1)),
            2 => {
                let at = rng.below(data.len() + 1);
                let byte = rng.next() as u8;
                data.insert(at, byte);
            }
            3 if data.len() >= 8 => {
                let at = rng.below(data.len() - 7) & !7;
                let edge: [u64; 6] = [0, 1, u64::MAX, 0x7fff_ffff, 0x8000_0000, 1 << 32];
                let value = edge[rng.below(edge.len())];
                data[at..at + 8].copy_from_slice(&value.to_le_bytes());
            }
            _ if !data.is_empty() => {
                let at = rng.below(data.len());
                data[at] = rng.next() as u8;
            }
            _ => {}
        }
    }
    data
}

#[test]
fn every_target_survives_its_corpus_and_its_mutations() {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/corpus");
    for (name, target) in hookprof::fuzz::TARGETS {
        let dir = corpus.join(name);
        let mut files: Vec<_> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|e| e.unwrap().path())
            .collect();
        files.sort();
        assert!(!files.is_empty(), "{}: no corpus", dir.display());
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ name.len() as u64);
        for file in files {
            let input = std::fs::read(&file).unwrap();
            target(&input);
            // Inputs that are too short, empty, and the file itself cut at each 8 bytes.
            for cut in (0..input.len()).step_by(8) {
                target(&input[..cut]);
            }
            for _ in 0..3000 {
                target(&mutate(&input, &mut rng));
            }
        }
    }
}

#[test]
fn the_corpus_is_what_the_formats_accept() {
    // Unmutated, each corpus file decodes: the corpus exercises the decoders past their first
    // check (a corpus of files rejected at byte 0 would fuzz nothing).
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/corpus");
    let read = |path: &str| std::fs::read(corpus.join(path)).unwrap();
    let trace = read("trace/threads-longjmp.hktrace");
    let trace = hookprof::input::format::Trace::new(&trace).unwrap();
    let profile = hookprof::analysis::model::Profile::from_trace(&trace).unwrap();
    assert_eq!(profile.summary.closed_by_longjmp(), 3);
    // The same program (fuzz/programs/threads_longjmp.c) traced by a runtime that writes
    // checksums and its hooks' overhead: mutations then meet the checks and the compensation.
    let checked = read("trace/threads-longjmp-checked.hktrace");
    let checked = hookprof::input::format::Trace::new(&checked).unwrap();
    let profile = hookprof::analysis::model::Profile::from_trace(&checked).unwrap();
    let integrity = &profile.summary.integrity;
    assert!(integrity.is_clean() && integrity.flagged, "{integrity:?}");
    assert_eq!(
        (integrity.verified, integrity.header_matches),
        (14, Some(true))
    );
    assert!(profile.summary.compensated);
    assert_eq!(profile.summary.closed_by_longjmp(), 3);
    // And by a version 4 runtime: its records in PACKED chunks, for the mutations to meet the
    // packed stream's decoder.
    let packed = read("trace/threads-longjmp-packed.hktrace");
    let packed = hookprof::input::format::Trace::new(&packed).unwrap();
    assert_eq!(packed.header().version, 4);
    let profile = hookprof::analysis::model::Profile::from_trace(&packed).unwrap();
    assert!(profile.summary.integrity.is_clean());
    assert_eq!(profile.summary.records, 17);
    assert_eq!(profile.summary.closed_by_longjmp(), 3);
    use hookprof::input::format::Endian;
    let le = hookprof::input::ti::Layout {
        pointer_size: 8,
        endian: Endian::Little,
    };
    for file in ["ti/linear.bin", "ti/linear-ccs.dat"] {
        let dump = hookprof::input::ti::Dump::parse(&read(file), le);
        assert!(dump.is_ok(), "{file}: {:?}", dump.err());
    }
    for file in ["nitro/calltrace-stack.bin", "nitro/functioncost-stats.bin"] {
        assert!(
            hookprof::input::nitro::Dump::parse(&read(file)).is_ok(),
            "{file}"
        );
    }
    assert!(
        hookprof::input::pfp::Instance::parse(&read("pfp/pfp_functions.bin"), Endian::Little)
            .is_ok()
    );
    assert!(hookprof::input::gprof::Data::parse(
        &read("gprof/cortex-m3-calls.dump"),
        Endian::Little
    )
    .is_ok());
}
