//! libFuzzer on `morris_fuzz::move_notation` (see fuzz/src/lib.rs).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| morris_fuzz::move_notation(data));
