//! strata-tool: placeholder, filled in below.
fn main() {}
