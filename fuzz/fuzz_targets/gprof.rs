#![no_main]
//! hookprof::fuzz::gprof under libFuzzer (fuzz/Cargo.toml).
libfuzzer_sys::fuzz_target!(|data: &[u8]| hookprof::fuzz::gprof(data));
