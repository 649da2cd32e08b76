//! The version set: every column family's current version, plus the
//! counters that must survive a restart (next file number, last sequence,
//! per-family log number), all recorded in the manifest.
//!
//! Recovery reads CURRENT, replays the manifest it names and rebuilds the
//! exact file set. Every open then writes a fresh manifest holding a
//! snapshot of the state and atomically swaps CURRENT to it
//! (write CURRENT.tmp, fsync, rename, fsync the directory).
use super::{Deleter, Version, VersionEdit};
use crate::error::{Error, Result};
use crate::filename;
use crate::key::Comparator;
use crate::vfs::{write_file_synced, Fs};
use crate::wal::{LogReader, LogWriter, TailPolicy};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A column family's persisted state.
#[derive(Clone)]
pub struct CfVersion {
    /// Name.
    pub name: String,
    /// The current version.
    pub current: Arc<Version>,
    /// WAL files numbered below this hold nothing unflushed for this family.
    pub log_number: u64,
}

/// All column families' versions and the manifest.
pub struct VersionSet {
    dir: PathBuf,
    fs: Arc<dyn Fs>,
    manifest: Option<LogWriter>,
    /// Number of the live manifest.
    pub manifest_number: u64,
    /// Set by `recover` when the manifest ended in an unfinished record that
    /// was dropped (its offset): tables that only it named are then kept aside,
    /// not deleted.
    pub dropped_manifest_tail: Option<u64>,
    /// Next file number to hand out.
    pub next_file_number: u64,
    /// Last sequence number made durable in the manifest or WAL.
    pub last_sequence: u64,
    /// Column families by id.
    pub cfs: BTreeMap<u32, CfVersion>,
    /// Highest column family id ever used.
    pub max_cf: u32,
    deleter: Deleter,
    /// Bytes written to manifests.
    pub manifest_bytes: u64,
    /// Set when a manifest write failed: what reached the disk is unknown,
    /// so nothing more is appended (the database must be reopened).
    failed: Option<Error>,
}

impl VersionSet {
    /// A fresh set with only the default column family.
    pub fn new(dir: &Path, fs: Arc<dyn Fs>, deleter: Deleter, cmp: Comparator) -> VersionSet {
        let mut cfs = BTreeMap::new();
        cfs.insert(
            0,
            CfVersion {
                name: "default".into(),
                current: Arc::new(Version::new(cmp)),
                log_number: 0,
            },
        );
        VersionSet {
            dir: dir.to_path_buf(),
            fs,
            manifest: None,
            manifest_number: 0,
            dropped_manifest_tail: None,
            next_file_number: 2,
            last_sequence: 0,
            cfs,
            max_cf: 0,
            deleter,
            manifest_bytes: 0,
            failed: None,
        }
    }

    /// Reads CURRENT and replays the manifest. `cmp_of` gives the comparator
    /// configured for a column family name (checked against the stored one).
    pub fn recover(&mut self, cmp_of: &dyn Fn(&str) -> Option<Comparator>) -> Result<()> {
        let cur = self.fs.read_all(&filename::current(&self.dir))?;
        let name = std::str::from_utf8(&cur)
            .ok()
            .and_then(|s| s.strip_suffix('\n'))
            .filter(|s| matches!(filename::parse(s), Some(filename::FileKind::Manifest(_))))
            .ok_or_else(|| Error::corruption("CURRENT", 0, "does not name a manifest"))?
            .to_string();
        let path = self.dir.join(&name);
        if !self.fs.exists(&path) {
            return Err(Error::corruption(
                "CURRENT",
                0,
                format!("names {name}, which does not exist; refusing to open (restore {name} or a backup)"),
            ));
        }
        let data = self.fs.read_all(&path)?;
        let mut r = LogReader::new(data, &name, TailPolicy::TruncatedTail);
        self.cfs.clear();
        let mut seen_any = false;
        let mut dropped = std::collections::BTreeSet::new();
        while let Some(rec) = r.next_record()? {
            let e = VersionEdit::decode(&rec).map_err(|e| match e {
                Error::Corruption { what, .. } => {
                    Error::corruption(&name, r.last_record_offset, what)
                }
                o => o,
            })?;
            seen_any = true;
            self.apply_recovered(&e, cmp_of, &name, &mut dropped)?;
        }
        if !seen_any || !self.cfs.contains_key(&0) {
            return Err(Error::corruption(
                &name,
                0,
                "manifest has no default column family",
            ));
        }
        if let Some(at) = r.dropped_tail_at {
            eprintln!("strata-lsm: {name}: dropped an unfinished last record at offset {at} (a manifest write cut short by a crash)");
        }
        self.dropped_manifest_tail = r.dropped_tail_at;
        Ok(())
    }

    fn apply_recovered(
        &mut self,
        e: &VersionEdit,
        cmp_of: &dyn Fn(&str) -> Option<Comparator>,
        mname: &str,
        dropped: &mut std::collections::BTreeSet<u32>,
    ) -> Result<()> {
        if let Some(n) = e.next_file_number {
            self.next_file_number = self.next_file_number.max(n);
        }
        if let Some(s) = e.last_sequence {
            self.last_sequence = self.last_sequence.max(s);
        }
        if let Some(m) = e.max_cf {
            self.max_cf = self.max_cf.max(m);
        }
        if let Some(name) = &e.add_cf {
            let stored = e.comparator.as_deref().and_then(Comparator::from_name);
            let cmp = cmp_of(name).or(stored).unwrap_or(Comparator::Bytewise);
            if let Some(stored) = &e.comparator {
                if stored != cmp.name() {
                    return Err(Error::InvalidArgument(format!(
                        "column family {name} was created with comparator {stored}, opened with {}",
                        cmp.name()
                    )));
                }
            }
            self.cfs.insert(
                e.cf,
                CfVersion {
                    name: name.clone(),
                    current: Arc::new(Version::new(cmp)),
                    log_number: 0,
                },
            );
            self.max_cf = self.max_cf.max(e.cf);
        }
        if e.drop_cf {
            self.cfs.remove(&e.cf);
            dropped.insert(e.cf);
            return Ok(());
        }
        let Some(cf) = self.cfs.get_mut(&e.cf) else {
            if dropped.contains(&e.cf) {
                // Logged by a job that finished after the family was dropped
                // (older versions did that): its files are garbage.
                return Ok(());
            }
            return Err(Error::corruption(
                mname,
                0,
                format!("edit for unknown column family {}", e.cf),
            ));
        };
        if let Some(l) = e.log_number {
            cf.log_number = cf.log_number.max(l);
        }
        if !e.added.is_empty() || !e.deleted.is_empty() {
            cf.current = Arc::new(cf.current.apply(e, &self.deleter));
        }
        Ok(())
    }

    /// Allocates a file number.
    pub fn new_file_number(&mut self) -> u64 {
        let n = self.next_file_number;
        self.next_file_number += 1;
        n
    }

    /// The whole current state as edits (a new manifest's records).
    pub(crate) fn snapshot_edits(&self) -> Vec<VersionEdit> {
        let mut out = Vec::new();
        for (id, cf) in &self.cfs {
            let mut e = VersionEdit {
                cf: *id,
                comparator: Some(cf.current.cmp.name().to_string()),
                add_cf: Some(cf.name.clone()),
                log_number: Some(cf.log_number),
                ..Default::default()
            };
            for (level, files) in cf.current.levels.iter().enumerate() {
                for f in files {
                    e.added.push((level, f.info.clone()));
                }
            }
            out.push(e);
        }
        if let Some(first) = out.first_mut() {
            first.next_file_number = Some(self.next_file_number);
            first.last_sequence = Some(self.last_sequence);
            first.max_cf = Some(self.max_cf);
        }
        out
    }

    /// Writes a manifest of `edits` (a state taken by [`VersionSet::snapshot_edits`])
    /// as file `number`, plus CURRENT, into another directory (used by checkpoints).
    pub(crate) fn write_manifest_into(
        fs: &dyn Fs,
        dir: &Path,
        number: u64,
        edits: &[VersionEdit],
    ) -> Result<()> {
        let mut w = LogWriter::new(fs.create(&filename::manifest(dir, number))?);
        for e in edits {
            w.add_record(&e.encode())?;
        }
        w.sync()?;
        write_file_synced(
            fs,
            &filename::current(dir),
            format!("MANIFEST-{number:06}\n").as_bytes(),
        )?;
        fs.sync_dir(dir)
    }

    /// Refuses every edit until `recover_manifest` (a database opened read-only).
    pub fn refuse_edits(&mut self, why: Error) {
        self.manifest = None;
        self.failed = Some(why);
    }

    /// After a failed manifest write (disk full): writes a new manifest from the
    /// in-memory state, which never included the failed edit, and takes edits again.
    pub fn recover_manifest(&mut self) -> Result<()> {
        self.failed = None;
        self.write_new_manifest()
    }

    /// Writes a new manifest with the whole state and points CURRENT at it.
    /// On error the set takes no more edits (CURRENT may name either file).
    pub fn write_new_manifest(&mut self) -> Result<()> {
        let r = self.roll_manifest();
        if let Err(e) = &r {
            self.manifest = None;
            self.failed = Some(e.clone());
        }
        r
    }

    fn roll_manifest(&mut self) -> Result<()> {
        let old = self.manifest_number;
        let n = self.new_file_number();
        let path = filename::manifest(&self.dir, n);
        let mut w = LogWriter::new(self.fs.create(&path)?);
        for e in self.snapshot_edits() {
            let mut e = e;
            if e.next_file_number.is_some() {
                e.next_file_number = Some(self.next_file_number);
            }
            let b = e.encode();
            self.manifest_bytes += b.len() as u64;
            w.add_record(&b)?;
        }
        w.sync()?;
        let tmp = self.dir.join("CURRENT.tmp");
        write_file_synced(
            self.fs.as_ref(),
            &tmp,
            format!("MANIFEST-{n:06}\n").as_bytes(),
        )?;
        self.fs.rename(&tmp, &filename::current(&self.dir))?;
        self.fs.sync_dir(&self.dir)?;
        self.manifest = Some(w);
        self.manifest_number = n;
        if old != 0 && old != n {
            let _ = self.fs.remove(&filename::manifest(&self.dir, old));
        }
        Ok(())
    }

    /// Appends `edit` to the manifest, syncs it, then installs the new
    /// version. On error nothing is installed, and after a failed manifest
    /// write every later edit is refused (`ReadOnly`): the record may or may
    /// not have reached the disk, so the manifest's tail is unknown.
    /// An edit for a column family that does not exist (dropped while a
    /// job ran) is refused with `InvalidArgument` and not logged.
    pub fn log_and_apply(&mut self, mut edit: VersionEdit) -> Result<()> {
        if let Some(e) = &self.failed {
            return Err(Error::ReadOnly(format!(
                "an earlier manifest write failed: {e}"
            )));
        }
        if edit.add_cf.is_none() && !self.cfs.contains_key(&edit.cf) {
            return Err(Error::InvalidArgument(format!(
                "edit for unknown column family {}",
                edit.cf
            )));
        }
        edit.next_file_number = Some(self.next_file_number);
        edit.last_sequence = Some(self.last_sequence);
        let b = edit.encode();
        let w = self.manifest.as_mut().ok_or(Error::Closed)?;
        if let Err(e) = w.add_record(&b).and_then(|()| w.sync()) {
            self.manifest = None;
            self.failed = Some(e.clone());
            return Err(e);
        }
        self.manifest_bytes += b.len() as u64;
        if let Some(name) = &edit.add_cf {
            let cmp = edit
                .comparator
                .as_deref()
                .and_then(Comparator::from_name)
                .unwrap_or(Comparator::Bytewise);
            self.cfs.insert(
                edit.cf,
                CfVersion {
                    name: name.clone(),
                    current: Arc::new(Version::new(cmp)),
                    log_number: edit.log_number.unwrap_or(0),
                },
            );
            self.max_cf = self.max_cf.max(edit.cf);
            return Ok(());
        }
        if edit.drop_cf {
            if let Some(cf) = self.cfs.remove(&edit.cf) {
                for l in &cf.current.levels {
                    for f in l {
                        f.mark_obsolete(self.deleter.clone());
                    }
                }
            }
            return Ok(());
        }
        let deleter = self.deleter.clone();
        if let Some(cf) = self.cfs.get_mut(&edit.cf) {
            if let Some(l) = edit.log_number {
                cf.log_number = cf.log_number.max(l);
            }
            cf.current = Arc::new(cf.current.apply(&edit, &deleter));
        }
        // Roll the manifest when it grows large.
        if self.manifest.as_ref().is_some_and(|m| m.size() > 64 << 20) {
            self.write_new_manifest()?;
        }
        Ok(())
    }

    /// Every file number referenced by any version of any column family.
    pub fn live_files(&self) -> Vec<u64> {
        let mut v = Vec::new();
        for cf in self.cfs.values() {
            for l in &cf.current.levels {
                v.extend(l.iter().map(|f| f.number()));
            }
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::{internal_key, ValueKind};
    use crate::version::NewFile;
    use crate::vfs::MemFs;

    /// Writes a manifest made of `edits` and a CURRENT naming it.
    fn manifest_with(fs: &MemFs, dir: &Path, edits: &[VersionEdit]) {
        let mut w = LogWriter::new(fs.create(&filename::manifest(dir, 1)).unwrap());
        for e in edits {
            w.add_record(&e.encode()).unwrap();
        }
        w.sync().unwrap();
        write_file_synced(fs, &filename::current(dir), b"MANIFEST-000001\n").unwrap();
    }

    fn recover(fs: &MemFs, dir: &Path) -> Result<VersionSet> {
        let d: Deleter = Arc::new(|_| {});
        let mut vs = VersionSet::new(dir, Arc::new(fs.clone()), d, Comparator::Bytewise);
        vs.recover(&|_| None)?;
        Ok(vs)
    }

    #[test]
    fn a_failed_manifest_append_stops_later_appends() {
        use crate::vfs::{FaultFs, FaultKind};
        let mem = MemFs::new();
        let ffs = FaultFs::new(Arc::new(mem.clone()));
        let dir = Path::new("/db");
        let d: Deleter = Arc::new(|_| {});
        let mut vs = VersionSet::new(dir, Arc::new(ffs.clone()), d, Comparator::Bytewise);
        vs.write_new_manifest().unwrap();
        let edit = |n: u64| VersionEdit {
            cf: 0,
            added: vec![(
                6,
                NewFile {
                    number: n,
                    size: 10,
                    smallest: internal_key(format!("a{n}").as_bytes(), 1, ValueKind::Value),
                    largest: internal_key(format!("a{n}").as_bytes(), 1, ValueKind::Value),
                    ..Default::default()
                },
            )],
            ..Default::default()
        };
        vs.log_and_apply(edit(10)).unwrap();
        ffs.set("MANIFEST-000002", false, true, FaultKind::Eio);
        assert!(vs.log_and_apply(edit(11)).is_err());
        ffs.clear();
        // The failed record may or may not be on disk: appending after it
        // would make the manifest's meaning depend on that.
        let e = vs.log_and_apply(edit(12)).unwrap_err();
        assert!(matches!(e, Error::ReadOnly(_)), "{e}");
        let recovered = recover(&mem, dir).unwrap();
        let live = recovered.live_files();
        assert!(live.contains(&10) && !live.contains(&12), "{live:?}");
    }

    #[test]
    fn edits_for_a_dropped_family_are_ignored_unknown_ones_are_not() {
        let fs = MemFs::new();
        let dir = Path::new("/db");
        let file = NewFile {
            number: 9,
            size: 100,
            smallest: internal_key(b"a", 5, ValueKind::Value),
            largest: internal_key(b"z", 5, ValueKind::Value),
            largest_seq: 5,
            ..Default::default()
        };
        let base = vec![
            VersionEdit {
                cf: 0,
                add_cf: Some("default".into()),
                comparator: Some("strata.Bytewise".into()),
                next_file_number: Some(20),
                last_sequence: Some(5),
                ..Default::default()
            },
            VersionEdit {
                cf: 1,
                add_cf: Some("x".into()),
                comparator: Some("strata.Bytewise".into()),
                max_cf: Some(1),
                ..Default::default()
            },
            VersionEdit {
                cf: 1,
                drop_cf: true,
                ..Default::default()
            },
        ];
        // A compaction that finished after the drop logged its result.
        let mut edits = base.clone();
        edits.push(VersionEdit {
            cf: 1,
            added: vec![(6, file.clone())],
            deleted: vec![(0, 7)],
            next_file_number: Some(21),
            ..Default::default()
        });
        manifest_with(&fs, dir, &edits);
        let vs = recover(&fs, dir).expect("edit for a dropped family must be ignored");
        assert_eq!(vs.cfs.keys().copied().collect::<Vec<_>>(), vec![0]);
        assert!(vs.live_files().is_empty());
        assert_eq!(vs.next_file_number, 21);
        // A family that never existed is still corruption.
        let mut edits = base;
        edits.push(VersionEdit {
            cf: 2,
            added: vec![(6, file)],
            ..Default::default()
        });
        manifest_with(&fs, dir, &edits);
        let e = recover(&fs, dir).err().expect("unknown family");
        assert!(e.is_corruption(), "{e}");
    }
}
