//! libFuzzer on `morris_fuzz::game_records` (see fuzz/src/lib.rs).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| morris_fuzz::game_records(data));
