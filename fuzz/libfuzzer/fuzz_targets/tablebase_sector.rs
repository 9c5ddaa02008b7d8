//! libFuzzer on `morris_fuzz::tablebase_sector` (see fuzz/src/lib.rs).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| morris_fuzz::tablebase_sector(data));
