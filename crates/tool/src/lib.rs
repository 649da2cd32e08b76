//! Strata's tools as a library: the db_bench driver (`bench`) that strata-dbbench and the
//! benchmark-only RocksDB comparison (bench/rocksdb-driver) share.
pub mod bench;
