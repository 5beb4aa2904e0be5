#![no_main]
//! hookprof::fuzz::nitro under libFuzzer (fuzz/Cargo.toml).
libfuzzer_sys::fuzz_target!(|data: &[u8]| hookprof::fuzz::nitro(data));
