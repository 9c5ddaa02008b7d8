//! libFuzzer on `morris_fuzz::web_opponent` (see fuzz/src/lib.rs).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| morris_fuzz::web_opponent(data));
