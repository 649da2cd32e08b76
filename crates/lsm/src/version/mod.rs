//! Versions: the set of table files of a column family at one moment, by
//! level. A `Version` is immutable and shared (`Arc`); readers and
//! iterators hold the version they started with, which keeps its files
//! alive. A file removed by an edit is marked obsolete and deleted from
//! disk when the last version holding it is dropped.
//!
//! Level 0 files may overlap and are ordered newest first; levels 1..6 hold
//! disjoint files ordered by key.
pub mod edit;
pub mod set;

pub use edit::{NewFile, VersionEdit};
pub use set::VersionSet;

use crate::key::{self, Comparator};
use crate::options::NUM_LEVELS;
use std::cmp::Ordering;
use std::sync::atomic::{AtomicBool, Ordering as AtOrd};
use std::sync::{Arc, OnceLock};

/// Called with a file number when an obsolete file is no longer used.
pub type Deleter = Arc<dyn Fn(u64) + Send + Sync>;

/// A table file in a version.
pub struct FileMeta {
    /// What the manifest records about it.
    pub info: NewFile,
    /// Set while a compaction is reading it.
    pub being_compacted: AtomicBool,
    obsolete: OnceLock<Deleter>,
}

impl FileMeta {
    /// Wraps manifest data.
    pub fn new(info: NewFile) -> FileMeta {
        FileMeta {
            info,
            being_compacted: AtomicBool::new(false),
            obsolete: OnceLock::new(),
        }
    }
    /// File number.
    pub fn number(&self) -> u64 {
        self.info.number
    }
    /// Size in bytes.
    pub fn size(&self) -> u64 {
        self.info.size
    }
    /// Smallest user key.
    pub fn smallest_user(&self) -> &[u8] {
        key::user_key(&self.info.smallest)
    }
    /// Largest user key.
    pub fn largest_user(&self) -> &[u8] {
        key::user_key(&self.info.largest)
    }
    /// Marks the file for deletion once no version holds it.
    pub fn mark_obsolete(&self, d: Deleter) {
        let _ = self.obsolete.set(d);
    }
    /// True while a compaction reads it.
    pub fn is_compacting(&self) -> bool {
        self.being_compacted.load(AtOrd::Acquire)
    }
    /// Tombstone share of entries.
    pub fn tombstone_ratio(&self) -> f64 {
        let n = self.info.num_entries + self.info.num_range_deletions;
        if n == 0 {
            return 0.0;
        }
        (self.info.num_deletions + self.info.num_range_deletions) as f64 / n as f64
    }
}

impl Drop for FileMeta {
    fn drop(&mut self) {
        if let Some(d) = self.obsolete.get() {
            d(self.info.number);
        }
    }
}

/// The files of one column family.
#[derive(Clone)]
pub struct Version {
    /// User key order.
    pub cmp: Comparator,
    /// Files per level (L0 newest first; others by smallest key).
    pub levels: Vec<Vec<Arc<FileMeta>>>,
}

impl Version {
    /// An empty version.
    pub fn new(cmp: Comparator) -> Version {
        Version {
            cmp,
            levels: vec![Vec::new(); NUM_LEVELS],
        }
    }

    /// Total bytes in a level.
    pub fn level_size(&self, level: usize) -> u64 {
        self.levels[level].iter().map(|f| f.size()).sum()
    }

    /// Number of files in all levels.
    pub fn num_files(&self) -> usize {
        self.levels.iter().map(|l| l.len()).sum()
    }

    /// True if `[lo, hi]` (user keys) overlaps the file.
    pub fn overlaps(&self, f: &FileMeta, lo: &[u8], hi: &[u8]) -> bool {
        self.cmp.compare(f.largest_user(), lo) != Ordering::Less
            && self.cmp.compare(f.smallest_user(), hi) != Ordering::Greater
    }

    /// Files of `level` overlapping `[lo, hi]` (user keys). For L0 the range
    /// grows to cover every overlapping file, transitively.
    pub fn overlapping(&self, level: usize, lo: &[u8], hi: &[u8]) -> Vec<Arc<FileMeta>> {
        let (mut lo, mut hi) = (lo.to_vec(), hi.to_vec());
        if level > 0 {
            let files = &self.levels[level];
            let start = files
                .partition_point(|f| self.cmp.compare(f.largest_user(), &lo) == Ordering::Less);
            return files[start..]
                .iter()
                .take_while(|f| self.cmp.compare(f.smallest_user(), &hi) != Ordering::Greater)
                .cloned()
                .collect();
        }
        loop {
            let mut out = Vec::new();
            let mut grew = false;
            for f in &self.levels[0] {
                if self.overlaps(f, &lo, &hi) {
                    if self.cmp.compare(f.smallest_user(), &lo) == Ordering::Less {
                        lo = f.smallest_user().to_vec();
                        grew = true;
                    }
                    if self.cmp.compare(f.largest_user(), &hi) == Ordering::Greater {
                        hi = f.largest_user().to_vec();
                        grew = true;
                    }
                    out.push(f.clone());
                }
            }
            if !grew {
                return out;
            }
        }
    }

    /// The one file of a sorted level (>= 1) that may hold the internal key
    /// `target` (files are ordered and disjoint by internal key; a file's
    /// largest key may be a range tombstone's end sentinel).
    pub fn find_file(&self, level: usize, target: &[u8]) -> Option<&Arc<FileMeta>> {
        let files = &self.levels[level];
        let i = files.partition_point(|f| {
            self.cmp.compare_internal(&f.info.largest, target) == Ordering::Less
        });
        let uk = key::user_key(target);
        files
            .get(i)
            .filter(|f| self.cmp.compare(f.smallest_user(), uk) != Ordering::Greater)
    }

    /// A new version with `edit` applied. `make` builds metadata for new files;
    /// files that move between levels keep their metadata.
    pub fn apply(&self, edit: &VersionEdit, deleter: &Deleter) -> Version {
        let mut v = self.clone();
        let mut removed: Vec<Arc<FileMeta>> = Vec::new();
        for (level, n) in &edit.deleted {
            if let Some(pos) = v.levels[*level].iter().position(|f| f.number() == *n) {
                removed.push(v.levels[*level].remove(pos));
            }
        }
        for (level, nf) in &edit.added {
            let f = match removed.iter().position(|f| f.number() == nf.number) {
                Some(i) => removed.swap_remove(i),
                None => Arc::new(FileMeta::new(nf.clone())),
            };
            v.levels[*level].push(f);
        }
        for f in removed {
            f.mark_obsolete(deleter.clone());
        }
        let cmp = self.cmp;
        v.levels[0].sort_by(|a, b| {
            b.info
                .largest_seq
                .cmp(&a.info.largest_seq)
                .then(b.number().cmp(&a.number()))
        });
        for l in v.levels.iter_mut().skip(1) {
            l.sort_by(|a, b| cmp.compare_internal(&a.info.smallest, &b.info.smallest));
        }
        v
    }

    /// One line per level: `L1: 3 files, 12.0 MB`.
    pub fn describe(&self) -> String {
        let mut s = String::new();
        for (i, l) in self.levels.iter().enumerate() {
            if !l.is_empty() {
                s.push_str(&format!(
                    "L{i}: {} files, {:.1} MB\n",
                    l.len(),
                    self.level_size(i) as f64 / 1e6
                ));
            }
        }
        s
    }
}
