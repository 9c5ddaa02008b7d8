//! Command-line tools of the Nine Men's Morris lab (the binaries live in `src/bin/`).
