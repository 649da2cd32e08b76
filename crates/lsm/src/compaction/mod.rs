//! Leveled compaction. The picker (picker.rs) is a pure function from a
//! version to the next compaction; the job (job.rs) merges the input tables,
//! drops what no reader can see and writes new tables; filter.rs holds the
//! compaction filter hook.
pub mod filter;
pub mod job;
pub mod picker;

pub use filter::{
    CompactionFilter, CompactionFilterFactory, Decision, FilterContext, FilterFactoryRef,
};
pub use job::{run_compaction, write_table_from_iter, OutputSpec};
pub use picker::{pending_compaction_bytes, pick, Compaction, LevelTargets};
