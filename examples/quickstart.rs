//! Quickstart (being written).
fn main() {}
