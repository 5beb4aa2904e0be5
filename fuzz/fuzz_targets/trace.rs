#![no_main]
//! hookprof::fuzz::trace under libFuzzer (fuzz/Cargo.toml).
libfuzzer_sys::fuzz_target!(|data: &[u8]| hookprof::fuzz::trace(data));
