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
use crate::error::{Result, SqlError};
use crate::sort::{io_err, rewind_run, temp_file};
use std::cmp::Ordering;
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

/// A sorted run on disk: its file (already unlinked) and entry count.
struct Run {
    file: File,
    n: u64,
}

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
        }
    }

    /// Adds an entry.
    pub fn push(&mut self, key: &[u8], payload: &[u8]) -> Result<()> {
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

    /// Number of runs written to disk so far (0: the sort is in memory).
    pub fn spilled_runs(&self) -> usize {
        self.runs.len()
    }

    fn key<'a>(buf: &'a [u8], e: &Ent) -> &'a [u8] {
        &buf[e.off..e.off + e.klen as usize]
    }

    fn payload<'a>(buf: &'a [u8], e: &Ent) -> &'a [u8] {
        let s = e.off + e.klen as usize;
        &buf[s..s + e.vlen as usize]
    }

    /// Orders two keys as this sort does.
    fn cmp_keys(&self, a: &[u8], b: &[u8]) -> Ordering {
        if self.desc {
            b.cmp(a)
        } else {
            a.cmp(b)
        }
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
        let mut file = temp_file()?;
        {
            let mut w = BufWriter::with_capacity(256 << 10, &mut file);
            for e in &self.ents {
                w.write_all(&e.klen.to_le_bytes())
                    .and_then(|_| w.write_all(&e.vlen.to_le_bytes()))
                    .and_then(|_| w.write_all(Self::key(&self.buf, e)))
                    .and_then(|_| w.write_all(Self::payload(&self.buf, e)))
                    .map_err(io_err)?;
            }
            w.flush().map_err(io_err)?;
        }
        rewind_run(&mut file)?;
        self.runs.push(Run {
            file,
            n: self.ents.len() as u64,
        });
        self.ents.clear();
        self.buf.clear();
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
        let runs = std::mem::take(&mut self.runs);
        let mut readers = Vec::with_capacity(runs.len());
        for r in runs {
            let mut rd = RunReader {
                r: BufReader::with_capacity(64 << 10, r.file),
                left: r.n,
                key: Vec::new(),
                payload: Vec::new(),
                live: false,
            };
            rd.advance()?;
            readers.push(rd);
        }
        // A linear pick of the smallest head: runs are few (entries / budget); on
        // equal keys the earlier run, whose entries were pushed first.
        loop {
            let mut best: Option<usize> = None;
            for (i, r) in readers.iter().enumerate() {
                if !r.live {
                    continue;
                }
                let better = match best {
                    None => true,
                    Some(b) => self.cmp_keys(&r.key, &readers[b].key).is_lt(),
                };
                if better {
                    best = Some(i);
                }
            }
            let Some(i) = best else { break };
            let r = &mut readers[i];
            if !f(&r.key, &r.payload)? {
                break;
            }
            r.advance()?;
        }
        Ok(())
    }
}

struct RunReader {
    r: BufReader<File>,
    left: u64,
    key: Vec<u8>,
    payload: Vec<u8>,
    /// `key` and `payload` hold the run's next entry.
    live: bool,
}

impl RunReader {
    fn advance(&mut self) -> Result<()> {
        if self.left == 0 {
            self.live = false;
            return Ok(());
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
            if n > 1 << 30 {
                return Err(SqlError::internal("sort run file is corrupt"));
            }
            Ok(n as usize)
        };
        let (kl, vl) = (len(k)?, len(v)?);
        self.key.resize(kl, 0);
        self.r.read_exact(&mut self.key).map_err(io_err)?;
        self.payload.resize(vl, 0);
        self.r.read_exact(&mut self.payload).map_err(io_err)?;
        self.live = true;
        Ok(())
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
