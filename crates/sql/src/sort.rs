//! ORDER BY with bounded memory: rows (output values + sort keys) are gathered in memory
//! up to a byte budget (`tmp_table_size`); past it, the sorted buffer is written to a run
//! file and the runs are merged at the end (an external merge sort). With a LIMIT only the
//! first `offset + limit` rows can be sent, so only that many are kept (top-N). Runs and
//! their merge are `runmerge`'s (shared with `keysort`): unlinked temporary files, merged
//! through a heap, tiered so that open run files stay bounded, polling the statement's
//! KILL and deadline (`set_interrupt`).
//!
//! A key may be given a collation (`Sorter::collated`): its strings are then held as they
//! are and compared under the collation in place (`Collation::compares_in_place`: `_bin`
//! collations, ASCII under `_general_ci`), so a sort of n rows weighs no string into a
//! sort key. The first string that cannot be compared in place, and every spill to disk,
//! turn that key's values into their sort keys (`Collation::sort_key`, what
//! `Expr::SortKey` gives), held from then on; both forms order rows identically.
use crate::error::{Result, SqlError};
use crate::runmerge::{io_err, RunFormat, RunWriter, Runs};
use rel::collation::Collation;
use rel::value::{compare, Value};
use std::cmp::Ordering;
use std::fs::File;
use std::io::{BufReader, Read, Write};

pub use crate::runmerge::MERGE_PASSES;

/// One row being sorted: (output values, sort keys).
pub type SortRow = (Vec<Value>, Vec<Value>);

/// A total order for sorting (a sort given an order that is not total may panic): the
/// same as `compare` for values of one kind; values of different kinds (an expression
/// whose rows give both strings and numbers, say) are ordered NULL, numbers, dates and
/// datetimes, times, strings; a DOUBLE against an exact number by its value, then exact
/// numbers first.
pub fn sort_cmp(a: &Value, b: &Value) -> Ordering {
    fn class(v: &Value) -> u8 {
        match v {
            Value::Null => 0,
            Value::Int(_) | Value::UInt(_) | Value::Decimal(..) | Value::Double(_) => 1,
            Value::Date(_) | Value::DateTime(_) => 2,
            Value::Time(_) => 3,
            Value::Bytes(_) => 4,
        }
    }
    let (ca, cb) = (class(a), class(b));
    if ca != cb {
        return ca.cmp(&cb);
    }
    match (a, b) {
        (Value::Double(x), Value::Double(y)) => x.total_cmp(y),
        (Value::Double(_), _) | (_, Value::Double(_)) => {
            let (x, y) = (a.to_f64().unwrap_or(0.0), b.to_f64().unwrap_or(0.0));
            let is_double = |v: &Value| matches!(v, Value::Double(_));
            x.total_cmp(&y).then(is_double(a).cmp(&is_double(b)))
        }
        _ => compare(a, b),
    }
}

/// How rows order by their keys: per key its direction and, for a key given a
/// collation, whether its values are still the strings (compared under the collation)
/// or already their sort keys.
#[derive(Clone)]
struct KeyOrder {
    /// Per key: descending.
    dirs: Vec<bool>,
    /// Per key: the collation of its strings (None: compared as values).
    colls: Vec<Option<Collation>>,
    /// Per key: the values held are the strings themselves (only with a collation).
    raw: Vec<bool>,
}

impl KeyOrder {
    fn new(dirs: Vec<bool>, colls: Vec<Option<Collation>>) -> KeyOrder {
        let raw = (0..dirs.len())
            .map(|i| colls.get(i).copied().flatten().is_some())
            .collect();
        KeyOrder { dirs, colls, raw }
    }

    fn key_cmp(&self, i: usize, x: &Value, y: &Value) -> Ordering {
        if let (Some(true), Some(Some(c)), Value::Bytes(a), Value::Bytes(b)) =
            (self.raw.get(i), self.colls.get(i), x, y)
        {
            // Every string held raw passed `compares_in_place` (`push`).
            return c.compare_in_place(a, b);
        }
        sort_cmp(x, y)
    }

    /// Orders rows by their keys, each key ascending or descending (`true`).
    fn cmp(&self, a: &[Value], b: &[Value]) -> Ordering {
        for (i, d) in self.dirs.iter().enumerate() {
            let o = match (a.get(i), b.get(i)) {
                (Some(x), Some(y)) => self.key_cmp(i, x, y),
                _ => Ordering::Equal,
            };
            if o.is_ne() {
                return if *d { o.reverse() } else { o };
            }
        }
        Ordering::Equal
    }

    /// The collation of key `i` when its values are still strings.
    fn raw_coll(&self, i: usize) -> Option<Collation> {
        match self.raw.get(i) {
            Some(true) => self.colls.get(i).copied().flatten(),
            _ => None,
        }
    }

    /// Key `i` of a row in the form held: its sort key once materialized.
    fn hold(&self, i: usize, v: &mut Value) {
        if let (Some(false), Some(Some(c)), Value::Bytes(b)) =
            (self.raw.get(i), self.colls.get(i), &*v)
        {
            *v = Value::Bytes(c.sort_key(b));
        }
    }
}

/// Puts `v` in the order `from` gives (position `t` gets the element at
/// `from[t]`, a permutation), in place: each cycle of the permutation is
/// followed with swaps; `from` is used up (each position marks itself done).
fn permute<T>(v: &mut [T], from: &mut [usize]) {
    let n = from.len().min(v.len());
    for t in 0..n {
        let mut j = t;
        loop {
            let k = from[j];
            from[j] = j;
            if k == t || k == j || k >= n {
                break;
            }
            v.swap(j, k);
            j = k;
        }
    }
}

/// Approximate heap bytes of a value.
fn value_bytes(v: &Value) -> usize {
    std::mem::size_of::<Value>()
        + match v {
            Value::Bytes(b) => b.len(),
            _ => 0,
        }
}

fn row_bytes(r: &SortRow) -> usize {
    64 + r.0.iter().chain(r.1.iter()).map(value_bytes).sum::<usize>()
}

/// Gathers rows and gives them back in order.
pub struct Sorter {
    ord: KeyOrder,
    budget: usize,
    /// Keep only this many rows (offset + limit), when there is a LIMIT.
    keep: Option<usize>,
    mem: Vec<SortRow>,
    mem_bytes: usize,
    runs: Runs,
}

impl Sorter {
    /// `dirs`: per sort key, descending. `budget`: memory bytes before spilling.
    pub fn new(dirs: Vec<bool>, budget: usize, keep: Option<usize>) -> Sorter {
        Sorter::collated(dirs, Vec::new(), budget, keep)
    }

    /// A sorter whose key `i` holds strings of collation `colls[i]` (None: any values,
    /// compared by `sort_cmp`; a collated string key's values as `Expr::SortKey`'s
    /// argument gives them, not its sort keys).
    pub fn collated(
        dirs: Vec<bool>,
        colls: Vec<Option<Collation>>,
        budget: usize,
        keep: Option<usize>,
    ) -> Sorter {
        Sorter {
            ord: KeyOrder::new(dirs, colls),
            budget: budget.max(64 << 10),
            keep,
            mem: Vec::new(),
            mem_bytes: 0,
            runs: Runs::new(keep.map(|k| k as u64)),
        }
    }

    pub fn push(&mut self, mut row: SortRow) -> Result<()> {
        for i in 0..row.1.len().min(self.ord.colls.len()) {
            if let (Some(c), Value::Bytes(b)) = (self.ord.raw_coll(i), &row.1[i]) {
                if !c.compares_in_place(b) {
                    self.materialize(i);
                }
            }
            self.ord.hold(i, &mut row.1[i]);
        }
        self.mem_bytes += row_bytes(&row);
        self.mem.push(row);
        if let Some(k) = self.keep {
            // Top-N: cut back to the first k whenever twice that many are held.
            if self.mem.len() >= 2 * k.max(512) {
                self.sort_mem();
                self.mem.truncate(k);
                self.mem_bytes = self.mem.iter().map(row_bytes).sum();
            }
        }
        if self.mem_bytes > self.budget {
            self.spill()?;
        }
        Ok(())
    }

    fn sort_mem(&mut self) {
        let ord = &self.ord;
        if let Some(order) = self.prefix_order() {
            let mut from: Vec<usize> = order.into_iter().map(|(_, i)| i).collect();
            permute(&mut self.mem, &mut from);
            return;
        }
        self.mem.sort_by(|a, b| ord.cmp(&a.1, &b.1));
    }

    /// When the first key holds strings compared in place (every row's a
    /// string): the order of the rows in memory as (prefix, position) pairs,
    /// sorted by the strings' `in_place_prefix` and, between equal prefixes,
    /// by the rows' keys; stable as `sort_mem`'s sort. Most pairs of rows
    /// then compare as two numbers, not under the collation.
    fn prefix_order(&self) -> Option<Vec<(u64, usize)>> {
        let c = self.ord.raw_coll(0)?;
        let desc = self.ord.dirs.first().copied().unwrap_or(false);
        let mut order = self
            .mem
            .iter()
            .enumerate()
            .map(|(i, r)| match r.1.first() {
                Some(Value::Bytes(b)) => Some((c.in_place_prefix(b), i)),
                _ => None,
            })
            .collect::<Option<Vec<_>>>()?;
        let (ord, mem) = (&self.ord, &self.mem);
        order.sort_by(|x, y| {
            let o = x.0.cmp(&y.0);
            if o.is_ne() {
                return if desc { o.reverse() } else { o };
            }
            match (mem.get(x.1), mem.get(y.1)) {
                (Some(a), Some(b)) => ord.cmp(&a.1, &b.1),
                _ => Ordering::Equal,
            }
        });
        Some(order)
    }

    /// Turns key `i`'s strings held in memory into their sort keys, and holds
    /// sort keys for it from now on.
    fn materialize(&mut self, i: usize) {
        if self.ord.raw_coll(i).is_none() {
            return;
        }
        if let Some(r) = self.ord.raw.get_mut(i) {
            *r = false;
        }
        for row in &mut self.mem {
            if let Some(v) = row.1.get_mut(i) {
                self.ord.hold(i, v);
            }
        }
        self.mem_bytes = self.mem.iter().map(row_bytes).sum();
    }

    /// Materializes every key: runs on disk hold sort keys, so that rows of
    /// different runs compare alike.
    fn materialize_all(&mut self) {
        for i in 0..self.ord.raw.len() {
            self.materialize(i);
        }
    }

    /// Writes the sorted memory buffer as a run.
    fn spill(&mut self) -> Result<()> {
        self.materialize_all();
        self.sort_mem();
        if let Some(k) = self.keep {
            self.mem.truncate(k);
        }
        let fmt = RowRuns(self.ord.clone());
        let mem = &self.mem;
        self.runs.spill(&fmt, |w| {
            for r in mem {
                fmt.write(w, r)?;
            }
            Ok(mem.len() as u64)
        })?;
        self.mem.clear();
        self.mem_bytes = 0;
        Ok(())
    }

    /// Number of runs written to disk (0: the sort stayed in memory).
    pub fn spilled_runs(&self) -> usize {
        self.runs.spilled()
    }

    /// The most run files that were open at once so far.
    pub fn peak_open_runs(&self) -> usize {
        self.runs.peak_open()
    }

    /// Runs merged before the final merge (see `runmerge::MAX_RUNS`).
    pub fn early_merges(&self) -> usize {
        self.runs.early_merges()
    }

    /// Polls `check` while merging runs: KILL and the statement's deadline
    /// stop a long merge (see `Env::interrupt`).
    pub fn set_interrupt(&mut self, check: Option<crate::runmerge::Interrupt>) {
        if let Some(c) = check {
            self.runs.set_interrupt(c);
        }
    }

    /// Calls `f` with each row in order until it returns false.
    pub fn finish(self, f: &mut dyn FnMut(Vec<Value>) -> Result<bool>) -> Result<()> {
        self.finish_rows(&mut |(out, _)| f(out))
    }

    /// Calls `f` with each row and its sort keys in order until it returns false.
    pub fn finish_rows(mut self, f: &mut dyn FnMut(SortRow) -> Result<bool>) -> Result<()> {
        let mut left = self.keep.unwrap_or(usize::MAX);
        let mut f = |row: SortRow| -> Result<bool> {
            if left == 0 {
                return Ok(false);
            }
            left -= 1;
            f(row)
        };
        if self.runs.is_empty() {
            self.sort_mem();
            for row in self.mem {
                if !f(row)? {
                    break;
                }
            }
            return Ok(());
        }
        if !self.mem.is_empty() {
            self.spill()?;
        }
        let fmt = RowRuns(self.ord.clone());
        self.runs.merge(&fmt, &mut |row| f(std::mem::take(row)))
    }
}

impl Sorter {
    /// Calls `f` with each row in order and, when its sort keys are equal to
    /// the previous row's, that previous row (DISTINCT over the sort keys,
    /// `tail.rs`), until `f` returns false.
    pub fn finish_runs(
        mut self,
        f: &mut dyn FnMut(&SortRow, Option<&SortRow>) -> Result<bool>,
    ) -> Result<()> {
        if !self.runs.is_empty() {
            // As `finish_rows` will (spilling the rest): compare sort keys.
            self.materialize_all();
        }
        let ord = self.ord.clone();
        let mut prev: Option<SortRow> = None;
        self.finish_rows(&mut |row| {
            let same = prev.as_ref().filter(|p| ord.cmp(&p.1, &row.1).is_eq());
            let go = f(&row, same)?;
            prev = Some(row);
            Ok(go)
        })
    }
}

/// The runs of a row sort: per row its encoding's length (u32 little-endian)
/// and the encoding; rows ordered by their keys (materialized: sort keys).
struct RowRuns(KeyOrder);

impl RunFormat for RowRuns {
    type Entry = SortRow;

    fn write(&self, w: &mut RunWriter<'_>, r: &SortRow) -> Result<()> {
        let mut buf = Vec::new();
        encode_row(r, &mut buf);
        let len = u32::try_from(buf.len())
            .map_err(|_| SqlError::unsupported("a sorted row of more than 4 GiB"))?;
        w.write_all(&len.to_le_bytes())
            .and_then(|_| w.write_all(&buf))
            .map_err(io_err)
    }

    fn read(&self, r: &mut BufReader<File>, row: &mut SortRow) -> Result<()> {
        let mut len = [0u8; 4];
        r.read_exact(&mut len).map_err(io_err)?;
        let mut buf = vec![0u8; u32::from_le_bytes(len) as usize];
        r.read_exact(&mut buf).map_err(io_err)?;
        *row = decode_row(&buf).ok_or_else(|| SqlError::internal("sort run file is corrupt"))?;
        Ok(())
    }

    fn cmp(&self, a: &SortRow, b: &SortRow) -> Ordering {
        self.0.cmp(&a.1, &b.1)
    }
}

fn encode_row(r: &SortRow, out: &mut Vec<u8>) {
    for vs in [&r.0, &r.1] {
        out.extend_from_slice(&(vs.len() as u32).to_le_bytes());
        for v in vs {
            encode_value(v, out);
        }
    }
}

/// A value's exact image: a type tag, then its bits (strings length-prefixed). Also the
/// correlated-subquery memo's key (`select::correlated`).
pub(crate) fn encode_value(v: &Value, out: &mut Vec<u8>) {
    match v {
        Value::Null => out.push(0),
        Value::Int(i) => {
            out.push(1);
            out.extend_from_slice(&i.to_le_bytes());
        }
        Value::UInt(u) => {
            out.push(2);
            out.extend_from_slice(&u.to_le_bytes());
        }
        Value::Double(d) => {
            out.push(3);
            out.extend_from_slice(&d.to_bits().to_le_bytes());
        }
        Value::Decimal(m, s) => {
            out.push(4);
            out.extend_from_slice(&m.to_le_bytes());
            out.push(*s);
        }
        Value::Bytes(b) => {
            out.push(5);
            out.extend_from_slice(&(b.len() as u32).to_le_bytes());
            out.extend_from_slice(b);
        }
        Value::Date(d) => {
            out.push(6);
            out.extend_from_slice(&d.to_le_bytes());
        }
        Value::DateTime(d) => {
            out.push(7);
            out.extend_from_slice(&d.to_le_bytes());
        }
        Value::Time(t) => {
            out.push(8);
            out.extend_from_slice(&t.to_le_bytes());
        }
    }
}

struct Cur<'a>(&'a [u8]);

impl Cur<'_> {
    fn take(&mut self, n: usize) -> Option<&[u8]> {
        if self.0.len() < n {
            return None;
        }
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        Some(a)
    }
    fn arr<const N: usize>(&mut self) -> Option<[u8; N]> {
        self.take(N)?.try_into().ok()
    }
}

fn decode_row(b: &[u8]) -> Option<SortRow> {
    let mut c = Cur(b);
    let out = decode_values(&mut c)?;
    let keys = decode_values(&mut c)?;
    c.0.is_empty().then_some((out, keys))
}

fn decode_values(c: &mut Cur) -> Option<Vec<Value>> {
    let n = u32::from_le_bytes(c.arr()?) as usize;
    let mut vs = Vec::with_capacity(n.min(4096));
    for _ in 0..n {
        let v = match c.take(1)?[0] {
            0 => Value::Null,
            1 => Value::Int(i64::from_le_bytes(c.arr()?)),
            2 => Value::UInt(u64::from_le_bytes(c.arr()?)),
            3 => Value::Double(f64::from_bits(u64::from_le_bytes(c.arr()?))),
            4 => {
                let m = i128::from_le_bytes(c.arr()?);
                Value::Decimal(m, c.take(1)?[0])
            }
            5 => {
                let n = u32::from_le_bytes(c.arr()?) as usize;
                Value::Bytes(c.take(n)?.to_vec())
            }
            6 => Value::Date(i32::from_le_bytes(c.arr()?)),
            7 => Value::DateTime(i64::from_le_bytes(c.arr()?)),
            8 => Value::Time(i64::from_le_bytes(c.arr()?)),
            _ => return None,
        };
        vs.push(v);
    }
    Some(vs)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(n: u64, seed: u64) -> Vec<SortRow> {
        let mut rng = testkit::Rng::new(seed);
        (0..n)
            .map(|i| {
                let k = match rng.below(5) {
                    0 => Value::Null,
                    1 => Value::Int(rng.range(-50, 50)),
                    2 => {
                        let n = rng.below(20) as usize;
                        Value::Bytes(rng.bytes(n))
                    }
                    3 => Value::Double(rng.range(-9, 9) as f64 / 4.0),
                    _ => Value::Decimal(rng.range(-999, 999) as i128, 2),
                };
                (vec![Value::UInt(i), k.clone()], vec![k, Value::UInt(i)])
            })
            .collect()
    }

    fn sorted(
        input: Vec<SortRow>,
        dirs: Vec<bool>,
        budget: usize,
        keep: Option<usize>,
    ) -> (Vec<Vec<Value>>, usize) {
        let mut s = Sorter::new(dirs, budget, keep);
        for r in input {
            s.push(r).unwrap();
        }
        let runs = s.spilled_runs();
        let mut out = Vec::new();
        s.finish(&mut |r| {
            out.push(r);
            Ok(true)
        })
        .unwrap();
        (out, runs)
    }

    /// Equal, or the first difference (without printing thousands of rows).
    fn same_rows(got: &[Vec<Value>], want: &[Vec<Value>], seed: u64) {
        let first = got.iter().zip(want).position(|(a, b)| a != b);
        assert!(
            first.is_none() && got.len() == want.len(),
            "SEED={seed}: {} rows vs {}, first difference at {first:?}: {:?} vs {:?}",
            got.len(),
            want.len(),
            first.map(|i| &got[i]),
            first.map(|i| &want[i])
        );
    }

    #[test]
    fn external_sort_equals_in_memory_sort() {
        let seed = testkit::seed("external_sort_equals_in_memory_sort");
        for dirs in [vec![false, false], vec![true, false], vec![false, true]] {
            let input = rows(20_000, seed);
            let mut expect = input.clone();
            let ord = KeyOrder::new(dirs.clone(), vec![]);
            expect.sort_by(|a, b| ord.cmp(&a.1, &b.1));
            let expect: Vec<Vec<Value>> = expect.into_iter().map(|r| r.0).collect();
            let (mem, runs0) = sorted(input.clone(), dirs.clone(), usize::MAX, None);
            assert_eq!(runs0, 0);
            same_rows(&mem, &expect, seed);
            let (ext, runs) = sorted(input.clone(), dirs.clone(), 64 << 10, None);
            assert!(runs > 5, "only {runs} runs");
            same_rows(&ext, &expect, seed);
            let (top, _) = sorted(input, dirs.clone(), 64 << 10, Some(777));
            same_rows(&top, &expect[..777], seed);
        }
    }

    /// Hundreds of runs (a 64 KiB budget): the merged output is the stable
    /// sort's, top-N too, and the run files open at once stay bounded by the
    /// tiered merge (before it every run stayed open to the end: EMFILE past
    /// ~1000 runs, and each row cost a comparison per run).
    #[test]
    fn many_runs_merge_with_bounded_open_files() {
        let seed = testkit::seed("many_runs_merge_with_bounded_open_files");
        let input = rows(120_000, seed);
        let dirs = vec![false, true];
        let ord = KeyOrder::new(dirs.clone(), vec![]);
        let mut want = input.clone();
        want.sort_by(|a, b| ord.cmp(&a.1, &b.1));
        let want: Vec<Vec<Value>> = want.into_iter().map(|r| r.0).collect();
        for keep in [None, Some(50_000)] {
            let mut s = Sorter::new(dirs.clone(), 64 << 10, keep);
            for r in input.clone() {
                s.push(r).unwrap();
            }
            let (runs, peak) = (s.spilled_runs(), s.peak_open_runs());
            assert!(
                runs > crate::runmerge::MAX_RUNS + crate::runmerge::FAN_IN,
                "SEED={seed}: only {runs} runs"
            );
            assert!(s.early_merges() > 0, "SEED={seed}");
            assert!(
                peak <= crate::runmerge::MAX_RUNS + 1,
                "SEED={seed}: {peak} run files open at once for {runs} runs"
            );
            let mut out = Vec::new();
            s.finish(&mut |r| {
                out.push(r);
                Ok(true)
            })
            .unwrap();
            same_rows(&out, &want[..keep.unwrap_or(want.len())], seed);
        }
    }

    /// Review of the bulk fixes (s31): fewer than `MAX_RUNS` runs are merged
    /// once, at the end (each row written once), not in tiers of `FAN_IN`
    /// while they are spilled.
    #[test]
    fn fewer_than_max_runs_are_merged_only_at_the_end() {
        let seed = testkit::seed("fewer_than_max_runs_are_merged_only_at_the_end");
        let input = rows(30_000, seed);
        let mut s = Sorter::new(vec![false, false], 64 << 10, None);
        for r in input.clone() {
            s.push(r).unwrap();
        }
        let runs = s.spilled_runs();
        assert!(
            (2 * crate::runmerge::FAN_IN..crate::runmerge::MAX_RUNS).contains(&runs),
            "SEED={seed}: {runs} runs"
        );
        assert_eq!(s.early_merges(), 0, "SEED={seed}: {runs} runs");
        assert_eq!(s.peak_open_runs(), runs, "SEED={seed}");
        let mut n = 0;
        s.finish(&mut |_| {
            n += 1;
            Ok(true)
        })
        .unwrap();
        assert_eq!(n, input.len());
    }

    /// An interruption (KILL) stops a merge of runs while they are spilled;
    /// its runs are then lost, and the sort refuses to go on (before, the
    /// next merge gave the rows of the runs left, silently short).
    #[test]
    fn an_interrupted_merge_breaks_the_sort() {
        use std::sync::atomic::{AtomicBool, Ordering};
        use std::sync::Arc;
        let seed = testkit::seed("an_interrupted_merge_breaks_the_sort");
        let killed = Arc::new(AtomicBool::new(false));
        let mut s = Sorter::new(vec![false, false], 64 << 10, None);
        let k = killed.clone();
        s.set_interrupt(Some(Arc::new(move || match k.load(Ordering::Relaxed) {
            true => Err(SqlError::query_interrupted()),
            false => Ok(()),
        })));
        killed.store(true, Ordering::Relaxed);
        let mut failed = None;
        for (i, r) in rows(200_000, seed).into_iter().enumerate() {
            if let Err(e) = s.push(r) {
                failed = Some((i, e));
                break;
            }
        }
        let (i, e) = failed.expect("the merge at MAX_RUNS runs polls the interruption");
        assert_eq!(e.code, 1317, "SEED={seed}: {e:?}");
        assert_eq!(
            s.spilled_runs(),
            crate::runmerge::MAX_RUNS,
            "SEED={seed}: row {i}"
        );
        killed.store(false, Ordering::Relaxed);
        let e = s.finish(&mut |_| Ok(true)).expect_err("broken");
        assert!(e.msg.contains("abandoned"), "SEED={seed}: {e:?}");
    }

    /// Strings of a few characters that compare equal under general_ci in
    /// several spellings (case, trailing spaces, an accent), some non-ASCII.
    /// `long`: up to 12 parts (past `in_place_prefix`'s eight bytes), no NULL
    /// (the first key's prefixes decide most comparisons only then).
    fn words(rng: &mut testkit::Rng, n: usize, ascii_only: bool, long: bool) -> Vec<Value> {
        let parts: &[&str] = &["a", "A", "b", " ", "\t", "_", "z", "é", "E"];
        (0..n)
            .map(|_| {
                if !long && rng.below(20) == 0 {
                    return Value::Null;
                }
                let len = rng.below(if long { 13 } else { 4 }) as usize;
                let mut w = String::new();
                for _ in 0..len {
                    let k = rng.below(parts.len() as u64 - 2 * ascii_only as u64) as usize;
                    w.push_str(parts[k]);
                }
                Value::Bytes(w.into_bytes())
            })
            .collect()
    }

    /// A sort comparing strings in place under their collation gives the rows
    /// in the order of their materialized sort keys (`Expr::SortKey`), in
    /// memory, spilled and top-N, with ties in arrival order; `finish_runs`
    /// marks exactly the rows whose keys equal the previous row's.
    #[test]
    fn collated_keys_sort_as_their_sort_keys() {
        let seed = testkit::seed("collated_keys_sort_as_their_sort_keys");
        let mut rng = testkit::Rng::new(seed);
        for ((coll, ascii_only), long) in [
            (Collation::Utf8mb4GeneralCi, true),
            (Collation::Utf8mb4GeneralCi, false),
            (Collation::Utf8mb4Bin, false),
            (Collation::Utf8mb4UnicodeCi, true),
            (Collation::Latin1SwedishNopadCi, true),
            (Collation::Binary, false),
        ]
        .into_iter()
        .flat_map(|c| [(c, false), (c, true)])
        {
            let n = 6000;
            let (a, b) = (
                words(&mut rng, n, ascii_only, long),
                words(&mut rng, n, true, false),
            );
            let raw: Vec<SortRow> = (0..n)
                .map(|i| {
                    (
                        vec![Value::UInt(i as u64)],
                        vec![a[i].clone(), b[i].clone()],
                    )
                })
                .collect();
            let key = |v: &Value| match v {
                Value::Bytes(s) => Value::Bytes(coll.sort_key(s)),
                v => v.clone(),
            };
            let keyed: Vec<SortRow> = raw
                .iter()
                .map(|(o, k)| (o.clone(), k.iter().map(key).collect()))
                .collect();
            for dirs in [vec![false, false], vec![true, false]] {
                let colls = vec![Some(coll), Some(coll)];
                let run = |budget: usize, keep: Option<usize>| {
                    let mut s = Sorter::collated(dirs.clone(), colls.clone(), budget, keep);
                    for r in raw.clone() {
                        s.push(r).unwrap();
                    }
                    let spilled = s.spilled_runs() > 0;
                    let mut out = Vec::new();
                    let mut same = Vec::new();
                    s.finish_runs(&mut |r, prev| {
                        out.push(r.0.clone());
                        same.push(prev.is_some());
                        Ok(true)
                    })
                    .unwrap();
                    (out, same, spilled)
                };
                let (want, _) = sorted(keyed.clone(), dirs.clone(), usize::MAX, None);
                let (mem, same, spilled) = run(usize::MAX, None);
                assert!(!spilled);
                same_rows(&mem, &want, seed);
                // Marked rows: equal sort keys to the previous one.
                let pos: Vec<usize> = want
                    .iter()
                    .map(|r| r[0].to_i128().unwrap() as usize)
                    .collect();
                for i in 1..n {
                    let eq = keyed[pos[i]].1 == keyed[pos[i - 1]].1;
                    assert_eq!(same[i], eq, "SEED={seed} {coll:?} row {i}");
                }
                let (ext, _, spilled) = run(64 << 10, None);
                assert!(spilled);
                same_rows(&ext, &want, seed);
                let (top, _, _) = run(usize::MAX, Some(700));
                same_rows(&top, &want[..700], seed);
            }
        }
    }

    #[test]
    fn permute_puts_every_element_where_its_position_says() {
        let seed = testkit::seed("permute_puts_every_element_where_its_position_says");
        let mut rng = testkit::Rng::new(seed);
        for n in 0..40usize {
            let mut from: Vec<usize> = (0..n).collect();
            // Fisher-Yates with the seeded generator.
            for i in (1..n).rev() {
                from.swap(i, rng.below(i as u64 + 1) as usize);
            }
            let want: Vec<usize> = from.iter().map(|&i| i * 10).collect();
            let mut v: Vec<usize> = (0..n).map(|i| i * 10).collect();
            permute(&mut v, &mut from.clone());
            assert_eq!(v, want, "SEED={seed} n={n}");
        }
    }

    #[test]
    fn sort_order_is_total_over_mixed_kinds() {
        let seed = testkit::seed("sort_order_is_total_over_mixed_kinds");
        let mut rng = testkit::Rng::new(seed);
        let mut vals: Vec<Value> = (0..3000)
            .map(|_| match rng.below(9) {
                0 => Value::Null,
                1 => Value::Int(rng.range(-3, 3)),
                2 => Value::UInt(rng.below(4)),
                3 => Value::Double(rng.range(-6, 6) as f64 / 2.0),
                4 => Value::Decimal(rng.range(-300, 300) as i128, rng.below(3) as u8),
                5 => Value::Bytes(vec![b'0' + rng.below(4) as u8]),
                6 => Value::Date(rng.range(0, 3) as i32),
                7 => Value::DateTime(rng.range(0, 3)),
                _ => Value::Time(rng.range(-2, 2)),
            })
            .collect();
        // Panics if the order is not total; then check it is sorted pairwise.
        vals.sort_by(sort_cmp);
        for w in vals.windows(2) {
            assert_ne!(sort_cmp(&w[0], &w[1]), Ordering::Greater, "SEED={seed}");
        }
        for (a, b) in [
            (Value::Int(2), Value::Decimal(150, 2)),
            (Value::Bytes(b"b".to_vec()), Value::Bytes(b"a ".to_vec())),
        ] {
            assert_eq!(sort_cmp(&a, &b), compare(&a, &b));
        }
    }

    #[test]
    fn run_rows_round_trip_and_reject_truncation() {
        for r in rows(200, 5) {
            let mut b = Vec::new();
            encode_row(&r, &mut b);
            assert_eq!(decode_row(&b), Some(r.clone()));
            for cut in 0..b.len() {
                assert_eq!(decode_row(&b[..cut]), None);
            }
        }
    }
}
