//! libFuzzer on `morris_fuzz::shard` (see fuzz/src/lib.rs).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| morris_fuzz::shard(data));
