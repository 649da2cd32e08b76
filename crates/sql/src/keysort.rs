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
//! Merging: a binary heap of run heads ordered by (key, run number), so equal keys
//! come from the earlier run (whose entries were pushed first). Runs are unlinked
//! files, so each one holds a descriptor until merged: whenever `FAN_IN` runs of the
//! same level sit at the end of the list they are merged into one run of the next
//! level (tiered, like a counter in base `FAN_IN`). The runs stay in push order, and at
//! most `FAN_IN - 1` runs per level are open (a level's runs are `FAN_IN` times larger
//! than the level below's), whatever the input size.
use crate::error::{Result, SqlError};
use crate::sort::{io_err, rewind_run, temp_file};
use std::cmp::Ordering;
use std::collections::binary_heap::{BinaryHeap, PeekMut};
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};

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

/// A sorted run on disk: its file (already unlinked), entry count, and level
/// (0: spilled from memory; n + 1: merged from `FAN_IN` runs of level n).
struct Run {
    file: File,
    n: u64,
    level: u32,
}

/// Runs merged at once into one of the next level (bounds the open files).
pub const FAN_IN: usize = 32;

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
    runs: Vec<Run>,
    /// Runs spilled from memory so far.
    spilled: usize,
    /// The most run files open at once so far.
    peak_open: usize,
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
            runs: Vec::new(),
            spilled: 0,
            peak_open: 0,
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
        if self.ents.is_empty() {
            // The first entry of a run: room for much of it, so that it is
            // seldom copied as it grows (bounded: many loads may be open).
            self.buf.reserve(self.budget.min(16 << 20));
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
        if self.buf.len() + self.ents.len() * ENT_BYTES > self.budget {
            self.spill()?;
        }
        Ok(())
    }

    /// Drops every entry (and the runs on disk).
    pub fn clear(&mut self) {
        self.ents.clear();
        self.buf.clear();
        self.runs.clear();
        self.common = 0;
    }

    /// Number of runs spilled to disk so far (0: the sort is in memory).
    pub fn spilled_runs(&self) -> usize {
        self.spilled
    }

    /// The most run files that were open at once so far.
    pub fn peak_open_runs(&self) -> usize {
        self.peak_open
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

    /// Writes the sorted memory entries as a run: per entry its key length and
    /// payload length (u32 little-endian each), then the key and the payload.
    fn spill(&mut self) -> Result<()> {
        self.sort_mem();
        self.peak_open = self.peak_open.max(self.runs.len() + 1);
        let (buf, ents) = (&self.buf, &self.ents);
        let run = write_run(0, |out| {
            for e in ents {
                out(Self::key(buf, e), Self::payload(buf, e))?;
            }
            Ok(())
        })?;
        self.runs.push(run);
        self.spilled += 1;
        self.ents.clear();
        self.buf.clear();
        self.merge_tail()
    }

    /// Merges the last `FAN_IN` runs into one while they are of one level.
    fn merge_tail(&mut self) -> Result<()> {
        while self.runs.len() >= FAN_IN {
            let start = self.runs.len() - FAN_IN;
            let level = self.runs[start].level;
            if self.runs[start..].iter().any(|r| r.level != level) {
                break;
            }
            self.peak_open = self.peak_open.max(self.runs.len() + 1);
            let group = self.runs.split_off(start);
            let desc = self.desc;
            let run = write_run(level + 1, |out| {
                merge(group, desc, &mut |k, v| out(k, v).map(|_| true))
            })?;
            self.runs.push(run);
        }
        Ok(())
    }

    /// Calls `f` with each entry's key and payload in order until it returns false.
    pub fn finish(mut self, f: &mut EntryFn<'_>) -> Result<()> {
        if self.runs.is_empty() {
            self.sort_mem();
            for e in &self.ents {
                if !f(Self::key(&self.buf, e), Self::payload(&self.buf, e))? {
                    break;
                }
            }
            return Ok(());
        }
        if !self.ents.is_empty() {
            self.spill()?;
        }
        crate::sort::MERGE_PASSES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        merge(std::mem::take(&mut self.runs), self.desc, f)
    }
}

/// Writes a run of level `level`: `fill` calls its argument with each entry in
/// order; per entry its key length and payload length (u32 little-endian each),
/// then the key and the payload.
fn write_run(
    level: u32,
    fill: impl FnOnce(&mut dyn FnMut(&[u8], &[u8]) -> Result<()>) -> Result<()>,
) -> Result<Run> {
    let mut file = temp_file()?;
    let mut n = 0u64;
    {
        let mut w = BufWriter::with_capacity(256 << 10, &mut file);
        fill(&mut |k, v| {
            n += 1;
            // Lengths fit: `push` refused longer parts.
            w.write_all(&(k.len() as u32).to_le_bytes())
                .and_then(|_| w.write_all(&(v.len() as u32).to_le_bytes()))
                .and_then(|_| w.write_all(k))
                .and_then(|_| w.write_all(v))
                .map_err(io_err)
        })?;
        w.flush().map_err(io_err)?;
    }
    rewind_run(&mut file)?;
    Ok(Run { file, n, level })
}

/// A run's next entry in the merge heap.
struct Head {
    desc: bool,
    /// The run's place in push order: breaks ties between equal keys.
    run: usize,
    rd: RunReader,
    key: Vec<u8>,
    payload: Vec<u8>,
}

impl Ord for Head {
    fn cmp(&self, o: &Head) -> Ordering {
        let k = if self.desc {
            o.key.cmp(&self.key)
        } else {
            self.key.cmp(&o.key)
        };
        // `BinaryHeap` pops its greatest: the least (key, run) must be it.
        k.then(self.run.cmp(&o.run)).reverse()
    }
}

impl PartialOrd for Head {
    fn partial_cmp(&self, o: &Head) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

impl PartialEq for Head {
    fn eq(&self, o: &Head) -> bool {
        self.cmp(o).is_eq()
    }
}

impl Eq for Head {}

/// Calls `f` with the entries of `runs` (in push order) in key order, equal keys
/// in run order, until it returns false.
fn merge(runs: Vec<Run>, desc: bool, f: &mut EntryFn<'_>) -> Result<()> {
    let mut heap = BinaryHeap::with_capacity(runs.len());
    for (run, r) in runs.into_iter().enumerate() {
        let mut h = Head {
            desc,
            run,
            rd: RunReader {
                r: BufReader::with_capacity(64 << 10, r.file),
                left: r.n,
            },
            key: Vec::new(),
            payload: Vec::new(),
        };
        if h.rd.next(&mut h.key, &mut h.payload)? {
            heap.push(h);
        }
    }
    while let Some(mut top) = heap.peek_mut() {
        if !f(&top.key, &top.payload)? {
            break;
        }
        let Head {
            rd, key, payload, ..
        } = &mut *top;
        if !rd.next(key, payload)? {
            PeekMut::pop(top);
        }
    }
    Ok(())
}

struct RunReader {
    r: BufReader<File>,
    left: u64,
}

impl RunReader {
    /// Reads the run's next entry into `key` and `payload`; false at its end.
    fn next(&mut self, key: &mut Vec<u8>, payload: &mut Vec<u8>) -> Result<bool> {
        if self.left == 0 {
            return Ok(false);
        }
        self.left -= 1;
        let mut lens = [0u8; 8];
        self.r.read_exact(&mut lens).map_err(io_err)?;
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
        self.r.read_exact(key).map_err(io_err)?;
        payload.resize(vl, 0);
        self.r.read_exact(payload).map_err(io_err)?;
        Ok(true)
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
                peak < 2 * FAN_IN,
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
