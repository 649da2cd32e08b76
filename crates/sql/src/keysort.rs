//! The sort of encoded keys that index builds and bulk loads use (`ddl::sortbuild`,
//! `bulk`): entries are (key, payload) byte strings ordered by the key's bytes
//! (memcomparable index keys: byte order is the index's order), ascending or, for a
//! reverse column family, descending. Unlike `sort::Sorter` no `Value` is made per
//! entry: keys and payloads are appended to one buffer, entries are small fixed records
//! (8 bytes of the key as a big-endian number, taken after the prefix every key shares
//! — the index id, the high bytes of small integers — so most comparisons never touch
//! the buffer), and runs past the memory budget are written to temporary files (unlinked at
//! once) and merged. Entries with equal keys come back in the order they were pushed
//! (the bulk load's IGNORE keeps the first, REPLACE the last).
//!
//! Runs and their merge: `runmerge` (a heap of run heads, tiered so that the open
//! run files stay bounded; equal keys come from the earlier run). The budget counts
//! the entries in memory, not the merge's read and write buffers (`runmerge`).
use crate::error::{Result, SqlError};
use crate::runmerge::{io_err, RunFormat, RunWriter, Runs, POLL_EVERY};
use std::cmp::Ordering;
use std::fs::File;
use std::io::{BufReader, Read, Write};

/// What `KeySorter::finish` calls with each key and payload: false stops it.
pub type EntryFn<'a> = dyn FnMut(&[u8], &[u8]) -> Result<bool> + 'a;

/// One entry in memory: where its key and payload are in the buffer.
#[derive(Clone, Copy)]
struct Ent {
    /// 8 bytes of the key after the prefix every key of the run shares,
    /// big-endian, zero-padded (set by `sort_mem`).
    prefix: u64,
    /// Offset of the key in the buffer (the payload follows it); also the
    /// entry's arrival order.
    off: usize,
    klen: u32,
    vlen: u32,
}

/// Bytes an entry costs beyond its key and payload.
const ENT_BYTES: usize = std::mem::size_of::<Ent>();

fn prefix(k: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    let n = k.len().min(8);
    b[..n].copy_from_slice(&k[..n]);
    u64::from_be_bytes(b)
}

pub use crate::runmerge::{Interrupt, FAN_IN};

/// The longest key or payload an entry may have (a run file refuses longer ones).
const MAX_PART: usize = 1 << 30;

/// Sorts (key, payload) entries by the key's bytes within a memory budget.
pub struct KeySorter {
    desc: bool,
    budget: usize,
    buf: Vec<u8>,
    ents: Vec<Ent>,
    /// Bytes at the start of every key in memory that are the same in all
    /// of them (those of the first key's).
    common: usize,
    runs: Runs,
}

impl KeySorter {
    /// `desc`: descending byte order. `budget`: memory bytes before a run is spilled
    /// (at least 64 KiB).
    pub fn new(desc: bool, budget: usize) -> KeySorter {
        KeySorter {
            desc,
            budget: budget.max(64 << 10),
            buf: Vec::new(),
            ents: Vec::new(),
            common: 0,
            runs: Runs::new(None),
        }
    }

    /// Adds an entry.
    pub fn push(&mut self, key: &[u8], payload: &[u8]) -> Result<()> {
        if key.len() > MAX_PART || payload.len() > MAX_PART {
            return Err(SqlError::unsupported(
                "a sorted index entry or row of more than 1 GiB",
            ));
        }
        let (Ok(klen), Ok(vlen)) = (u32::try_from(key.len()), u32::try_from(payload.len())) else {
            return Err(SqlError::internal("sort entry too large"));
        };
        let n = key.len() + payload.len();
        if !self.room_for(n) {
            if !self.ents.is_empty() {
                self.spill()?;
            }
            if !self.room_for(n) {
                // One entry larger than the budget: taken alone.
                self.buf.reserve_exact(n);
                self.ents.reserve_exact(1);
            }
        }
        if self.ents.is_empty() {
            self.common = key.len();
        } else if self.common > 0 {
            let first = &self.buf[..self.common];
            self.common = first.iter().zip(key).take_while(|(a, b)| a == b).count();
        }
        let off = self.buf.len();
        self.buf.extend_from_slice(key);
        self.buf.extend_from_slice(payload);
        self.ents.push(Ent {
            prefix: 0,
            off,
            klen,
            vlen,
        });
        Ok(())
    }

    /// Memory held: what is allocated (capacities), not what is used.
    pub fn held(&self) -> usize {
        self.buf.capacity() + self.ents.capacity() * ENT_BYTES
    }

    /// Makes room for one more entry of `n` bytes, growing the buffers within
    /// the budget (doubling, or by half of what the budget has left, so that
    /// what is allocated never passes it); false when they are full.
    fn room_for(&mut self, n: usize) -> bool {
        let cap = self.buf.capacity();
        if self.buf.len() + n > cap {
            let free = self.budget.saturating_sub(self.held());
            let grow = cap.max(4096).min(free / 2).max(self.buf.len() + n - cap);
            if grow > free {
                return false;
            }
            self.buf.reserve_exact(cap + grow - self.buf.len());
        }
        let cap = self.ents.capacity();
        if self.ents.len() == cap {
            let free = self.budget.saturating_sub(self.held()) / ENT_BYTES;
            let grow = cap.max(256).min(free / 2).max(1);
            if grow > free {
                return false;
            }
            self.ents.reserve_exact(cap + grow - self.ents.len());
        }
        true
    }

    /// The memory budget.
    pub fn budget(&self) -> usize {
        self.budget
    }

    /// Changes the memory budget (at least 64 KiB); entries held past it are
    /// spilled as a run, and the memory given back.
    pub fn set_budget(&mut self, budget: usize) -> Result<()> {
        self.budget = budget.max(64 << 10);
        if self.held() > self.budget {
            if !self.ents.is_empty() {
                self.spill()?;
            }
            self.buf = Vec::new();
            self.ents = Vec::new();
        }
        Ok(())
    }

    /// The memory `finish` holds while it calls back: the entries in memory
    /// if there are no runs (else they are spilled and their memory freed,
    /// only the merge's buffers are held: see `runmerge`).
    pub fn finish_memory(&self) -> usize {
        if self.runs.is_empty() {
            self.held()
        } else {
            0
        }
    }

    /// Drops every entry (and the runs on disk), and gives back the memory.
    pub fn clear(&mut self) {
        self.ents = Vec::new();
        self.buf = Vec::new();
        self.runs.clear();
        self.common = 0;
    }

    /// Polls `check` while giving back or merging entries: a KILL stops the
    /// sort within `POLL_EVERY` entries.
    pub fn set_interrupt(&mut self, check: Interrupt) {
        self.runs.set_interrupt(check);
    }

    /// Number of runs spilled to disk so far (0: the sort is in memory).
    pub fn spilled_runs(&self) -> usize {
        self.runs.spilled()
    }

    /// The most run files that were open at once so far.
    pub fn peak_open_runs(&self) -> usize {
        self.runs.peak_open()
    }

    fn key<'a>(buf: &'a [u8], e: &Ent) -> &'a [u8] {
        &buf[e.off..e.off + e.klen as usize]
    }

    fn payload<'a>(buf: &'a [u8], e: &Ent) -> &'a [u8] {
        let s = e.off + e.klen as usize;
        &buf[s..s + e.vlen as usize]
    }

    /// Sorts the entries in memory; equal keys in arrival order.
    fn sort_mem(&mut self) {
        let buf = &self.buf;
        let (desc, common) = (self.desc, self.common);
        for e in self.ents.iter_mut() {
            e.prefix = prefix(&Self::key(buf, e)[common..]);
        }
        // Keys differ only after `common` bytes.
        let rest = |e: &Ent| &buf[e.off + common..e.off + e.klen as usize];
        self.ents.sort_unstable_by(|a, b| {
            let o = a.prefix.cmp(&b.prefix).then_with(|| rest(a).cmp(rest(b)));
            let o = if desc { o.reverse() } else { o };
            o.then(a.off.cmp(&b.off))
        });
    }

    /// Writes the sorted memory entries as a run.
    fn spill(&mut self) -> Result<()> {
        self.sort_mem();
        let (buf, ents) = (&self.buf, &self.ents);
        self.runs.spill(&KeyRuns { desc: self.desc }, |w| {
            for e in ents {
                write_entry(w, Self::key(buf, e), Self::payload(buf, e))?;
            }
            Ok(ents.len() as u64)
        })?;
        self.ents.clear();
        self.buf.clear();
        if self.held() > self.budget {
            // After an entry larger than the budget was taken alone: give its
            // buffers back, else every later push would find no room and
            // become a run (a file and an fsync) of its own.
            self.buf = Vec::new();
            self.ents = Vec::new();
        }
        Ok(())
    }

    /// Calls `f` with each entry's key and payload in order until it returns false.
    pub fn finish(mut self, f: &mut EntryFn<'_>) -> Result<()> {
        if self.runs.is_empty() {
            self.sort_mem();
            let check = self.runs.interrupt();
            for (i, e) in self.ents.iter().enumerate() {
                if let Some(c) = check.filter(|_| (i as u64 + 1).is_multiple_of(POLL_EVERY)) {
                    c()?;
                }
                if !f(Self::key(&self.buf, e), Self::payload(&self.buf, e))? {
                    break;
                }
            }
            return Ok(());
        }
        if !self.ents.is_empty() {
            self.spill()?;
        }
        self.buf = Vec::new();
        self.ents = Vec::new();
        self.runs
            .merge(&KeyRuns { desc: self.desc }, &mut |(k, v)| f(k, v))
    }
}

/// Writes an entry to a run: its key length and payload length (u32
/// little-endian each), then the key and the payload.
fn write_entry(w: &mut RunWriter<'_>, k: &[u8], v: &[u8]) -> Result<()> {
    // Lengths fit: `push` refused longer parts.
    w.write_all(&(k.len() as u32).to_le_bytes())
        .and_then(|_| w.write_all(&(v.len() as u32).to_le_bytes()))
        .and_then(|_| w.write_all(k))
        .and_then(|_| w.write_all(v))
        .map_err(io_err)
}

/// The runs of a key sort: entries are (key, payload), ordered by the key's
/// bytes (descending for a reverse family).
struct KeyRuns {
    desc: bool,
}

impl RunFormat for KeyRuns {
    type Entry = (Vec<u8>, Vec<u8>);

    fn write(&self, w: &mut RunWriter<'_>, (k, v): &Self::Entry) -> Result<()> {
        write_entry(w, k, v)
    }

    fn read(&self, r: &mut BufReader<File>, (key, payload): &mut Self::Entry) -> Result<()> {
        let mut lens = [0u8; 8];
        r.read_exact(&mut lens).map_err(io_err)?;
        let (k, v) = lens.split_at(4);
        let len = |b: &[u8]| -> Result<usize> {
            let n = b
                .try_into()
                .map(u32::from_le_bytes)
                .map_err(|_| SqlError::internal("sort run file is corrupt"))?;
            if n as usize > MAX_PART {
                return Err(SqlError::internal("sort run file is corrupt"));
            }
            Ok(n as usize)
        };
        let (kl, vl) = (len(k)?, len(v)?);
        key.resize(kl, 0);
        r.read_exact(key).map_err(io_err)?;
        payload.resize(vl, 0);
        r.read_exact(payload).map_err(io_err)
    }

    fn cmp(&self, a: &Self::Entry, b: &Self::Entry) -> Ordering {
        if self.desc {
            b.0.cmp(&a.0)
        } else {
            a.0.cmp(&b.0)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    type Entries = Vec<(Vec<u8>, Vec<u8>)>;

    /// Keys of a few random bytes (many repeats, shared prefixes past 8 bytes,
    /// zero bytes), each with its arrival number as payload; `shared`: every
    /// key starts with the same 11 bytes (as index keys share their index id).
    fn entries(n: usize, seed: u64, shared: bool) -> Entries {
        let mut rng = testkit::Rng::new(seed);
        (0..n)
            .map(|i| {
                let len = rng.below(14) as usize;
                let mut k: Vec<u8> = (0..len)
                    .map(|_| [0u8, 1, 7, 255][rng.below(4) as usize])
                    .collect();
                if rng.below(3) == 0 {
                    k.splice(0..0, *b"samepref");
                }
                if shared {
                    k.splice(0..0, *b"index-id-12");
                }
                (k, (i as u64).to_le_bytes().to_vec())
            })
            .collect()
    }

    fn sorted(input: &[(Vec<u8>, Vec<u8>)], desc: bool, budget: usize) -> (Entries, usize) {
        let mut s = KeySorter::new(desc, budget);
        for (k, v) in input {
            s.push(k, v).unwrap();
        }
        let runs = s.spilled_runs();
        let mut out = Vec::new();
        s.finish(&mut |k, v| {
            out.push((k.to_vec(), v.to_vec()));
            Ok(true)
        })
        .unwrap();
        (out, runs)
    }

    /// In memory and spilled, both directions: the entries in byte order of
    /// their keys, equal keys in arrival order (a stable sort's result).
    #[test]
    fn key_sort_is_a_stable_byte_order_sort() {
        let seed = testkit::seed("key_sort_is_a_stable_byte_order_sort");
        for (desc, shared) in [(false, false), (true, false), (false, true), (true, true)] {
            let input = entries(30_000, seed, shared);
            let mut want = input.clone();
            want.sort_by(|a, b| if desc { b.0.cmp(&a.0) } else { a.0.cmp(&b.0) });
            let (mem, runs) = sorted(&input, desc, usize::MAX);
            assert_eq!(runs, 0);
            assert!(
                mem == want,
                "SEED={seed} {desc} {shared}: in-memory order differs"
            );
            let (ext, runs) = sorted(&input, desc, 64 << 10);
            assert!(runs > 5, "SEED={seed}: only {runs} runs");
            assert!(
                ext == want,
                "SEED={seed} {desc} {shared}: spilled order differs"
            );
        }
    }

    /// Hundreds of spilled runs (a 64 KiB budget): the output is the stable
    /// sort's, and the run files open at once stay bounded by the tiered merge
    /// (before it every run stayed open until `finish`: EMFILE past ~1000).
    #[test]
    fn many_runs_merge_stably_with_bounded_open_files() {
        let seed = testkit::seed("many_runs_merge_stably_with_bounded_open_files");
        for desc in [false, true] {
            let mut input = entries(90_000, seed ^ desc as u64, true);
            for (_, v) in input.iter_mut() {
                v.extend_from_slice(&[7u8; 200]);
            }
            let mut want = input.clone();
            want.sort_by(|a, b| if desc { b.0.cmp(&a.0) } else { a.0.cmp(&b.0) });
            let mut s = KeySorter::new(desc, 64 << 10);
            for (k, v) in &input {
                s.push(k, v).unwrap();
            }
            let (runs, peak) = (s.spilled_runs(), s.peak_open_runs());
            assert!(runs > 300, "SEED={seed}: only {runs} runs");
            assert!(
                peak <= crate::runmerge::MAX_RUNS + 1,
                "SEED={seed}: {peak} run files open at once for {runs} runs"
            );
            let mut out = Vec::new();
            s.finish(&mut |k, v| {
                out.push((k.to_vec(), v.to_vec()));
                Ok(true)
            })
            .unwrap();
            assert!(out == want, "SEED={seed} desc={desc}: merged order differs");
        }
    }

    /// A key or payload past what a run file may hold is refused when pushed,
    /// not reported as a corrupt run when read back.
    #[test]
    fn oversized_entry_is_refused_at_push() {
        let mut s = KeySorter::new(false, 64 << 10);
        let big = vec![0u8; MAX_PART + 1];
        let e = s.push(b"k", &big).err().expect("refused");
        assert!(e.to_string().contains("1 GiB"), "{e}");
        let e = s.push(&big, b"").err().expect("refused");
        assert!(e.to_string().contains("1 GiB"), "{e}");
        s.push(b"k", b"v").unwrap();
    }

    /// What the sort allocates (capacities, not lengths) stays within its
    /// budget whatever the entries' sizes (a 16 MiB reservation and doubling
    /// vectors used to hold up to twice it), and `clear` gives it back.
    #[test]
    fn memory_held_stays_within_the_budget() {
        for (budget, klen, vlen) in [
            (64usize << 10, 12usize, 0usize),
            (1 << 20, 20, 0),
            (1 << 20, 9, 100),
            (3 << 20, 30, 7),
            (256 << 10, 40_000, 3),
        ] {
            let mut s = KeySorter::new(false, budget);
            let n = 4 * budget / (klen + vlen + ENT_BYTES);
            let mut peak = 0;
            for i in 0..n {
                let mut k = vec![7u8; klen];
                k[klen - 8..].copy_from_slice(&((i * 7919) % n).to_be_bytes());
                s.push(&k, &vec![1u8; vlen]).unwrap();
                peak = peak.max(s.held());
            }
            assert!(peak <= budget, "{budget} {klen} {vlen}: held {peak}");
            assert!(
                peak > budget / 2,
                "{budget} {klen} {vlen}: held only {peak}"
            );
            assert!(s.spilled_runs() >= 3, "{budget} {klen} {vlen}");
            s.clear();
            assert_eq!(s.held(), 0);
        }
    }

    /// After an entry larger than the budget (taken alone, in a run of its
    /// own), small entries again share runs: its buffers used to stay allocated,
    /// over the budget, so every later push was spilled as a run by itself.
    #[test]
    fn entry_past_the_budget_does_not_make_every_later_entry_a_run() {
        let budget = 64 << 10;
        let mut s = KeySorter::new(false, budget);
        s.push(b"big", &vec![9u8; 2 * budget]).unwrap();
        for i in 0..1000u32 {
            s.push(&i.to_be_bytes(), b"v").unwrap();
        }
        let runs = s.spilled_runs();
        assert!(
            runs <= 2,
            "{runs} runs for one big entry and 1000 small ones"
        );
        assert!(s.held() <= budget, "held {}", s.held());
        let mut n = 0;
        s.finish(&mut |_, _| {
            n += 1;
            Ok(true)
        })
        .unwrap();
        assert_eq!(n, 1001);
    }

    #[test]
    fn finish_stops_when_told() {
        let input = entries(1000, 3, false);
        let mut s = KeySorter::new(false, 64 << 10);
        for (k, v) in &input {
            s.push(k, v).unwrap();
        }
        let mut n = 0;
        s.finish(&mut |_, _| {
            n += 1;
            Ok(n < 10)
        })
        .unwrap();
        assert_eq!(n, 10);
    }
}
