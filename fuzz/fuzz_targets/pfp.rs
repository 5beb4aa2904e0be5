#![no_main]
//! hookprof::fuzz::pfp under libFuzzer (fuzz/Cargo.toml).
libfuzzer_sys::fuzz_target!(|data: &[u8]| hookprof::fuzz::pfp(data));
