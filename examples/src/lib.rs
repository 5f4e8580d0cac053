//! Runnable examples live next to this crate: `cargo run -p examples --example quickstart`.
