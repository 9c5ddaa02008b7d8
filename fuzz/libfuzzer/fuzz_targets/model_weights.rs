//! libFuzzer on `morris_fuzz::model_weights` (see fuzz/src/lib.rs).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| morris_fuzz::model_weights(data));
