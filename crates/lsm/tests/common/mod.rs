//! Shared test helpers, from the workspace's testkit crate: a seeded PRNG (seed from
//! `SEED=...` or the clock, always printed) and temporary directories.
#![allow(unused_imports)] // each test file uses a different subset
pub use testkit::{seed, temp_dir, Rng};
