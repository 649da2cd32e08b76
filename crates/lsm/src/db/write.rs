//! The write path with group commit (LevelDB's writer queue): writers queue
//! up; the one at the front becomes the leader, makes room (stalls, memtable
//! switch), merges the batches queued behind it into one WAL record, writes
//! and syncs it once with the state lock released, applies the group to the
//! memtables, publishes the new sequence number and wakes the group.
use super::stall::{self, Cause};
use super::{Db, Inner, State, Writer};
use crate::error::{Error, Result};
use crate::filename;
use crate::memtable::MemTable;
use crate::options::WriteOptions;
use crate::stats::Stats;
use crate::wal::LogWriter;
use crate::WriteBatch;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

const MAX_GROUP_BYTES: usize = 1 << 20;

impl Db {
    /// Applies `batch` atomically.
    pub fn write(&self, opts: WriteOptions, batch: WriteBatch) -> Result<()> {
        if batch.is_empty() {
            return Ok(());
        }
        self.inner.write(opts, Some(batch), false)
    }

    /// Sets `key` to `value` (default column family, synced).
    pub fn put(&self, key: &[u8], value: &[u8]) -> Result<()> {
        let mut b = WriteBatch::new();
        b.put(key, value);
        self.write(WriteOptions::default(), b)
    }

    /// Deletes `key` (default column family, synced).
    pub fn delete(&self, key: &[u8]) -> Result<()> {
        let mut b = WriteBatch::new();
        b.delete(key);
        self.write(WriteOptions::default(), b)
    }

    /// Sets `key` to `value` in a column family (synced).
    pub fn put_cf(&self, cf: super::ColumnFamily, key: &[u8], value: &[u8]) -> Result<()> {
        let mut b = WriteBatch::new();
        b.put_cf(cf.0, key, value);
        self.write(WriteOptions::default(), b)
    }

    /// Deletes `key` in a column family (synced).
    pub fn delete_cf(&self, cf: super::ColumnFamily, key: &[u8]) -> Result<()> {
        let mut b = WriteBatch::new();
        b.delete_cf(cf.0, key);
        self.write(WriteOptions::default(), b)
    }

    /// Deletes a key written exactly once since its last deletion (synced):
    /// compaction drops the pair when they meet (RocksDB's SingleDelete; the
    /// result is undefined if the key was overwritten, as there).
    pub fn single_delete(&self, cf: super::ColumnFamily, key: &[u8]) -> Result<()> {
        let mut b = WriteBatch::new();
        b.single_delete_cf(cf.0, key);
        self.write(WriteOptions::default(), b)
    }

    /// Deletes every key in `[start, end)` of a column family.
    /// The tombstone is written synced; then table files (level >= 1) whose
    /// whole key range it covers, and whose data no snapshot can still see,
    /// are dropped at once without being read (RocksDB's DeleteFilesInRange
    /// done automatically): DROP TABLE reclaims space immediately.
    pub fn delete_range(&self, cf: super::ColumnFamily, start: &[u8], end: &[u8]) -> Result<()> {
        let mut b = WriteBatch::new();
        b.delete_range_cf(cf.0, start, end);
        self.write(WriteOptions::default(), b)?;
        self.drop_covered_files(cf, start, end)
    }

    fn drop_covered_files(&self, cf: super::ColumnFamily, start: &[u8], end: &[u8]) -> Result<()> {
        let mut st = self.inner.lock();
        let tomb_seq = st.visible_seq;
        let Some(v) = st.versions.cfs.get(&cf.0).map(|c| c.current.clone()) else {
            return Ok(());
        };
        let cmp = v.cmp;
        let mut edit = crate::version::VersionEdit {
            cf: cf.0,
            ..Default::default()
        };
        let mut bytes = 0;
        for (level, files) in v.levels.iter().enumerate().skip(1) {
            for f in files {
                let inside = cmp.compare(start, f.smallest_user()) != std::cmp::Ordering::Greater
                    && cmp.compare(f.largest_user(), end) == std::cmp::Ordering::Less;
                // A snapshot taken after the file's oldest entry and before
                // the tombstone may still read the file.
                let seen = st
                    .snapshots
                    .range(f.info.smallest_seq..tomb_seq)
                    .next()
                    .is_some();
                if inside && !seen && !f.is_compacting() && f.info.largest_seq < tomb_seq {
                    edit.deleted.push((level, f.number()));
                    bytes += f.size();
                }
            }
        }
        if edit.deleted.is_empty() {
            return Ok(());
        }
        self.inner.log_and_apply(&mut st, edit)?;
        let _ = bytes;
        Ok(())
    }
}

impl Inner {
    pub(crate) fn write(
        &self,
        opts: WriteOptions,
        batch: Option<WriteBatch>,
        force_switch: bool,
    ) -> Result<()> {
        if let Some(b) = &batch {
            // Decodes the whole batch once (so the group below applies only
            // well-formed batches); the state lock is taken only when an op
            // names a column family other than the default, which always
            // exists.
            let mut other_cf = false;
            b.for_each_op(|op| {
                if op.key.len() > crate::memtable::MAX_KEY_SIZE {
                    return Err(Error::InvalidArgument(format!(
                        "key of {} bytes is longer than the limit of {} bytes",
                        op.key.len(),
                        crate::memtable::MAX_KEY_SIZE
                    )));
                }
                other_cf |= op.cf != 0;
                Ok(())
            })?;
            if other_cf {
                let st = self.lock();
                b.for_each_op(|op| match st.cfs.contains_key(&op.cf) {
                    true => Ok(()),
                    false => Err(Error::InvalidArgument(format!(
                        "no column family {}",
                        op.cf
                    ))),
                })?;
            }
        }
        let w = Arc::new(Writer {
            batch: Mutex::new(batch),
            sync: opts.sync,
            disable_wal: opts.disable_wal,
            force_switch,
            done: Mutex::new(None),
        });
        let mut st = self.lock();
        st.writers.push_back(w.clone());
        loop {
            if let Some(r) = take_done(&w) {
                return r;
            }
            if st.writers.front().is_some_and(|f| Arc::ptr_eq(f, &w)) {
                break;
            }
            st = self.wait_writers(st);
        }
        // Leader.
        let (g, room) = self.make_room(st, force_switch);
        st = g;
        if room.is_err() || force_switch {
            st.writers.pop_front();
            self.notify_writers(&st);
            return room;
        }
        let mut group: Vec<Arc<Writer>> = Vec::new();
        // A group of one writes its own batch; only a larger group copies
        // the batches into one record.
        let mut combined: Option<WriteBatch> = None;
        let mut bytes = 0;
        for x in st.writers.iter() {
            if x.force_switch || (x.sync && !w.sync) || x.disable_wal != w.disable_wal {
                if !group.is_empty() {
                    break;
                }
            }
            if !group.is_empty() && bytes > MAX_GROUP_BYTES {
                break;
            }
            if let Some(b) = lock(&x.batch).take() {
                bytes += b.size();
                match &mut combined {
                    None => combined = Some(b),
                    Some(c) => c.append(&b),
                }
            }
            group.push(x.clone());
        }
        let mut combined = combined.unwrap_or_default();
        st.delay.charge(bytes);
        let first_seq = st.versions.last_sequence + 1;
        combined.set_seq(first_seq);
        let count = combined.count() as u64;
        st.versions.last_sequence += count;
        let mut wal = st.wal.take();
        let mems: Vec<(u32, Arc<MemTable>)> =
            st.cfs.iter().map(|(id, c)| (*id, c.mem.clone())).collect();
        drop(st);

        let result = self.write_group(&mut wal, &combined, w.sync, w.disable_wal, &mems);

        let mut st = self.lock();
        st.wal = wal;
        match &result {
            Ok(()) => st.visible_seq = first_seq + count - 1,
            Err(e) => {
                let msg = e.to_string();
                if st.bg_error.is_none() {
                    st.bg_error = Some(Error::ReadOnly(format!("WAL write failed: {msg}")));
                    st.bg_retry = super::is_no_space(e);
                    Stats::add(&self.stats.background_errors, 1);
                }
            }
        }
        for x in &group {
            st.writers.pop_front();
            *lock(&x.done) = Some(result.clone());
        }
        self.notify_writers(&st);
        drop(st);
        take_done(&w).unwrap_or(result)
    }

    fn write_group(
        &self,
        wal: &mut Option<LogWriter>,
        batch: &WriteBatch,
        sync: bool,
        disable_wal: bool,
        mems: &[(u32, Arc<MemTable>)],
    ) -> Result<()> {
        if !disable_wal {
            let w = wal.as_mut().ok_or(Error::Closed)?;
            w.add_record(batch.data())?;
            if sync {
                w.sync()?;
                Stats::add(&self.stats.wal_syncs, 1);
            } else {
                w.flush()?;
            }
            Stats::add(&self.stats.wal_bytes, batch.size() as u64 + 7);
        }
        Stats::add(&self.stats.write_groups, 1);
        let mut seq = batch.seq();
        let mut user_bytes = 0u64;
        // Every batch in the group was decoded whole by its writer, so this
        // pass cannot stop half way.
        batch.for_each_op(|op| {
            if let Some((_, m)) = mems.iter().find(|(id, _)| *id == op.cf) {
                // Only a memtable that receives an entry, before it goes
                // in: a checkpoint that sees the entry (it waits for no
                // group in flight) sees the mark too.
                if disable_wal {
                    m.mark_unlogged();
                }
                m.add(seq, op.kind, op.key, op.value);
            }
            user_bytes += (op.key.len() + op.value.len()) as u64;
            seq += 1;
            Ok(())
        })?;
        Stats::add(&self.stats.user_bytes_written, user_bytes);
        Stats::add(&self.stats.user_writes, batch.count() as u64);
        Ok(())
    }

    /// Waits for or creates room in the memtables; switches memtables (and
    /// the WAL) when full or when `force` asks for a flush. Applies the
    /// write throttles (stall.rs): paces the group at the delayed write rate
    /// during a slowdown, waits for background work at a stop.
    fn make_room<'a>(
        &'a self,
        mut st: MutexGuard<'a, State>,
        force: bool,
    ) -> (MutexGuard<'a, State>, Result<()>) {
        // Read the clock only once a throttle fires (not on every write).
        let mut started: Option<Instant> = None;
        let (mut slowed, mut stopped) = (false, false);
        let r = loop {
            if let Some(e) = &st.bg_error {
                break Err(e.clone());
            }
            if st.closing {
                break Err(Error::Closed);
            }
            let p = stall::pressure(&st, force);
            self.compaction_urgent
                .store(p.compaction_debt, std::sync::atomic::Ordering::Relaxed);
            if !force {
                let epoch = st.stall_epoch;
                st.delay
                    .update(&p, epoch, self.delayed_write_rate, &self.stats);
            }
            // A stop: no memtable to switch to, or L0 / pending bytes at
            // their stop thresholds and this write needs a switch.
            let stop = if p.need_switch && p.too_many_imms {
                Some(Cause::Memtable)
            } else if p.need_switch && !force {
                p.stop
            } else {
                None
            };
            if let Some(cause) = stop {
                if !stopped {
                    stall::record_event(&self.stats, cause, true);
                    stopped = true;
                }
                st.delay.was_stopped = true;
                let t = Instant::now();
                started.get_or_insert(t);
                self.bg_cv.notify_all();
                st = self.wait_bg(st, Duration::from_millis(100));
                stall::record_wait(&self.stats, cause, t.elapsed().as_micros() as u64);
                continue;
            }
            if let (false, Some((cause, _))) = (force, p.slowdown) {
                let now = Instant::now();
                if st.delay.active && st.delay.next_at > now {
                    started.get_or_insert(now);
                    if !slowed {
                        stall::record_event(&self.stats, cause, false);
                        slowed = true;
                    }
                    let d = (st.delay.next_at - now).min(stall::RECALC);
                    st = self.wait_bg(st, d);
                    stall::record_wait(&self.stats, cause, now.elapsed().as_micros() as u64);
                    continue;
                }
            }
            if !p.need_switch {
                break Ok(());
            }
            let r = self.switch_memtables(&mut st, force);
            if let Err(e) = &r {
                // The old WAL may not be durable, or there is no WAL to
                // write to: refuse every later write.
                self.set_bg_error(&mut st, "WAL switch failed", e);
            }
            self.bg_cv.notify_all();
            break r;
        };
        if let Some(t) = started {
            Stats::max(
                &self.stats.stall_longest_micros,
                t.elapsed().as_micros() as u64,
            );
        }
        (st, r)
    }

    /// Starts a new WAL and moves full (or, if `all`, every non-empty)
    /// memtables to the immutable list.
    pub(crate) fn switch_memtables(&self, st: &mut State, all: bool) -> Result<()> {
        let any = st.cfs.values().any(|c| {
            !c.mem.is_empty() && (all || c.mem.approximate_size() >= c.opts.write_buffer_size)
        });
        if !any {
            return Ok(());
        }
        let n = st.versions.new_file_number();
        let path = filename::wal(&self.dir, n);
        // A failed create (or directory sync) changes nothing: the old WAL
        // stays current and intact, so the database stays writable (the
        // caller decides whether the failure is fatal to it).
        let file = self.fs.create(&path)?;
        if let Err(e) = self.fs.sync_dir(&self.dir) {
            drop(file);
            let _ = self.fs.remove(&path);
            return Err(e);
        }
        // A failed sync of the old WAL is fatal: its acknowledged writes
        // may not be durable, and nothing can retry an fsync safely.
        if let Some(old) = st.wal.as_mut() {
            if let Err(e) = old.sync() {
                drop(file);
                let _ = self.fs.remove(&path);
                self.set_bg_error(st, "WAL sync failed", &e);
                return Err(e);
            }
        }
        st.wal = Some(LogWriter::new(file));
        st.wal_number = n;
        st.live_wals.push(n);
        st.stall_epoch += 1;
        for cf in st.cfs.values_mut() {
            if !cf.mem.is_empty() && (all || cf.mem.approximate_size() >= cf.opts.write_buffer_size)
            {
                let old =
                    std::mem::replace(&mut cf.mem, Arc::new(MemTable::new(cf.opts.comparator, n)));
                cf.imms.push(old);
            }
        }
        Ok(())
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

fn take_done(w: &Writer) -> Option<Result<()>> {
    lock(&w.done).take()
}
