//! Command-line tools of the Nine Men's Morris lab (the binaries live in `src/bin/`).
//!
//! The README is included below so that its code examples are compiled and run by `cargo test`.
#![doc = include_str!("../README.md")]
