//! canopy-cli
fn main() {}
