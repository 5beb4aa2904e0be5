#![no_main]
//! hookprof::fuzz::ti under libFuzzer (fuzz/Cargo.toml).
libfuzzer_sys::fuzz_target!(|data: &[u8]| hookprof::fuzz::ti(data));
