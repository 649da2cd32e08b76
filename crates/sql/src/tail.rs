//! The stages of a query after its scan when it needs all rows first, each in bounded
//! memory (tmp_table_size): GROUP BY groups (`Grouper`: a hash table of groups, then
//! rows of new groups spilled to disk sorted by group key and aggregated group by
//! group), DISTINCT (`Tail`'s hash set of row images, then rows spilled sorted by
//! image and deduplicated; or, when the ORDER BY keys are the output columns, after the
//! sort: duplicates are then neighbours), and ORDER BY / OFFSET / LIMIT (a `Sorter`).
use crate::agg::{feed, finish, new_state, Group};
use crate::bind::AggSpec;
use crate::collate::image;
use crate::error::Result;
use crate::expr::{Env, Expr};
use crate::result::ResultSink;
use crate::sort::Sorter;
use rel::collation::Collation;
use rel::value::Value;
use std::collections::{HashMap, HashSet};

/// Rough bytes of a value held in memory.
fn value_bytes(v: &Value) -> usize {
    match v {
        Value::Bytes(b) => 32 + b.len(),
        _ => 32,
    }
}

/// GROUP BY: groups in a hash table up to the budget; later rows of groups not in it
/// are spilled, sorted by their group's key image, and aggregated one group at a time.
/// A group is either wholly in the table or wholly spilled.
pub struct Grouper<'a> {
    gexprs: &'a [Expr],
    /// Per group expression: the collation strings group by.
    colls: &'a [Option<Collation>],
    aggs: &'a [AggSpec],
    index: HashMap<Vec<u8>, usize>,
    groups: Vec<Group>,
    bytes: usize,
    budget: usize,
    spill: Option<Sorter>,
    /// Polled by the spill's merges (KILL, the statement's deadline).
    interrupt: Option<crate::runmerge::Interrupt>,
}

impl<'a> Grouper<'a> {
    pub fn new(
        gexprs: &'a [Expr],
        colls: &'a [Option<Collation>],
        aggs: &'a [AggSpec],
        budget: usize,
    ) -> Grouper<'a> {
        Grouper {
            gexprs,
            colls,
            aggs,
            index: HashMap::new(),
            groups: Vec::new(),
            bytes: 0,
            budget: budget.max(64 << 10),
            spill: None,
            interrupt: None,
        }
    }

    /// Polls `check` while the spilled groups' runs are merged (see
    /// `Env::interrupt`).
    pub fn set_interrupt(&mut self, check: Option<crate::runmerge::Interrupt>) {
        self.interrupt = check;
    }

    fn key(&self, row: &[Value], env: &dyn Env) -> Result<(Vec<Value>, Vec<u8>)> {
        let mut key = Vec::with_capacity(self.gexprs.len());
        let mut img = Vec::new();
        for (i, g) in self.gexprs.iter().enumerate() {
            let v = g.eval(row, env)?;
            image(&v, self.colls.get(i).copied().flatten(), &mut img);
            key.push(v);
        }
        Ok((key, img))
    }

    fn new_group(&self, key: Vec<Value>) -> Group {
        Group {
            key,
            states: self.aggs.iter().map(new_state).collect(),
            seen: vec![None; self.aggs.len()],
        }
    }

    /// Adds one input row.
    pub fn push(&mut self, row: &[Value], env: &dyn Env) -> Result<()> {
        // Without GROUP BY every row is in the one group (made by the first
        // row: the table is empty then, so it is never spilled).
        if self.gexprs.is_empty() {
            if let Some(g) = self.groups.first_mut() {
                return feed(g, self.aggs, row, env);
            }
        }
        let (key, img) = self.key(row, env)?;
        if let Some(&i) = self.index.get(&img) {
            return feed(&mut self.groups[i], self.aggs, row, env);
        }
        if self.spill.is_none() && self.bytes < self.budget {
            self.bytes += 96
                + img.len() * 2
                + key.iter().map(value_bytes).sum::<usize>()
                + 64 * self.aggs.len();
            let g = self.new_group(key);
            self.groups.push(g);
            self.index.insert(img, self.groups.len() - 1);
            let i = self.groups.len() - 1;
            return feed(&mut self.groups[i], self.aggs, row, env);
        }
        let (budget, check) = (self.budget, &self.interrupt);
        let s = self.spill.get_or_insert_with(|| {
            let mut s = Sorter::new(vec![false], budget, None);
            s.set_interrupt(check.clone());
            s
        });
        s.push((row.to_vec(), vec![Value::Bytes(img)]))
    }

    /// Calls `f` with each finished group row (group values, then aggregate results).
    /// `always_one`: a query without GROUP BY has one group even without rows.
    pub fn finish(
        mut self,
        env: &dyn Env,
        always_one: bool,
        f: &mut dyn FnMut(Vec<Value>) -> Result<()>,
    ) -> Result<()> {
        if self.groups.is_empty() && self.spill.is_none() && always_one {
            let g = self.new_group(vec![]);
            self.groups.push(g);
        }
        let aggs = self.aggs;
        let mut n = 0usize;
        let mut emit = |g: Group, f: &mut dyn FnMut(Vec<Value>) -> Result<()>| -> Result<()> {
            n += 1;
            let mut grow = g.key;
            for (s, a) in g.states.into_iter().zip(aggs) {
                grow.push(finish(s, a, env, n)?);
            }
            f(grow)
        };
        for g in std::mem::take(&mut self.groups) {
            emit(g, f)?;
        }
        if let Some(s) = self.spill.take() {
            let mut cur: Option<(Vec<u8>, Group)> = None;
            s.finish(&mut |row| {
                let (key, img) = self.key(&row, env)?;
                if cur.as_ref().is_none_or(|(c, _)| *c != img) {
                    if let Some((_, g)) = cur.take() {
                        emit(g, f)?;
                    }
                    cur = Some((img, self.new_group(key)));
                }
                if let Some((_, g)) = cur.as_mut() {
                    feed(g, aggs, &row, env)?;
                }
                Ok(true)
            })?;
            if let Some((_, g)) = cur {
                emit(g, f)?;
            }
        }
        Ok(())
    }
}

/// DISTINCT, then ORDER BY (or arrival order) with OFFSET and LIMIT.
pub struct Tail {
    dedup: Option<Dedup>,
    /// DISTINCT after the sort (`Tail::new`'s `by_keys`).
    by_keys: bool,
    /// Per output column: the collation DISTINCT compares strings by.
    colls: Vec<Option<Collation>>,
    sorter: Sorter,
    /// Rows past DISTINCT (FOUND_ROWS with SQL_CALC_FOUND_ROWS).
    pub total: u64,
    /// Polled by the sorts' merges (KILL, the statement's deadline).
    interrupt: Option<crate::runmerge::Interrupt>,
}

struct Dedup {
    seen: HashSet<Vec<u8>>,
    bytes: usize,
    budget: usize,
    spill: Option<Sorter>,
}

fn row_image(out: &[Value], colls: &[Option<Collation>]) -> Vec<u8> {
    let mut img = Vec::new();
    for (i, v) in out.iter().enumerate() {
        image(v, colls.get(i).copied().flatten(), &mut img);
    }
    img
}

impl Tail {
    /// `dirs`: ORDER BY directions (empty: arrival order), `key_colls` the collation
    /// each key's strings compare under in the sorter (`Sorter::collated`); `keep`:
    /// OFFSET + LIMIT rows. `by_keys`: every output column is an ORDER BY key, under
    /// its DISTINCT collation, and the keys are nothing else, so rows DISTINCT holds
    /// equal have equal keys and are neighbours in the sort: DISTINCT is done on the
    /// sorted rows (without LIMIT only: a top-N sort would keep duplicates instead).
    pub fn new(
        distinct: bool,
        colls: Vec<Option<Collation>>,
        (dirs, key_colls): (Vec<bool>, Vec<Option<Collation>>),
        by_keys: bool,
        budget: usize,
        keep: Option<usize>,
    ) -> Tail {
        let budget = budget.max(64 << 10);
        let by_keys = distinct && by_keys && keep.is_none() && !dirs.is_empty();
        Tail {
            colls,
            by_keys,
            dedup: (distinct && !by_keys).then(|| Dedup {
                seen: HashSet::new(),
                bytes: 0,
                budget,
                spill: None,
            }),
            sorter: Sorter::collated(dirs, key_colls, budget, keep),
            total: 0,
            interrupt: None,
        }
    }

    /// Polls `check` while the sorts merge runs (see `Env::interrupt`).
    pub fn set_interrupt(&mut self, check: Option<crate::runmerge::Interrupt>) {
        self.sorter.set_interrupt(check.clone());
        self.interrupt = check;
    }

    /// Adds an output row with its ORDER BY keys.
    pub fn push(&mut self, out: Vec<Value>, keys: Vec<Value>) -> Result<()> {
        if self.by_keys {
            return self.sorter.push((out, keys));
        }
        if let Some(d) = &mut self.dedup {
            let img = row_image(&out, &self.colls);
            if d.seen.contains(&img) {
                return Ok(());
            }
            if d.spill.is_some() || d.bytes >= d.budget {
                let width = out.len();
                let mut row = out;
                row.extend(keys);
                row.push(Value::UInt(width as u64));
                let (budget, check) = (d.budget, &self.interrupt);
                return d
                    .spill
                    .get_or_insert_with(|| {
                        let mut s = Sorter::new(vec![false], budget, None);
                        s.set_interrupt(check.clone());
                        s
                    })
                    .push((row, vec![Value::Bytes(img)]));
            }
            d.bytes += 64 + img.len() * 2;
            d.seen.insert(img);
        }
        self.total += 1;
        self.sorter.push((out, keys))
    }

    /// Sends the rows to `sink` past `offset`, at most `limit`; returns rows sent.
    pub fn finish(
        mut self,
        sink: &mut dyn ResultSink,
        offset: u64,
        limit: Option<u64>,
    ) -> Result<(u64, u64)> {
        if self.by_keys {
            return self.finish_by_keys(sink, offset, limit);
        }
        if let Some(mut d) = self.dedup.take() {
            if let Some(s) = d.spill.take() {
                let mut last: Option<Vec<u8>> = None;
                let sorter = &mut self.sorter;
                let colls = &self.colls;
                let total = &mut self.total;
                s.finish(&mut |mut row| {
                    let width = match row.pop() {
                        Some(Value::UInt(w)) => w as usize,
                        _ => row.len(),
                    };
                    let keys = row.split_off(width.min(row.len()));
                    let img = row_image(&row, colls);
                    if last.as_ref() != Some(&img) {
                        last = Some(img);
                        *total += 1;
                        sorter.push((row, keys))?;
                    }
                    Ok(true)
                })?;
            }
        }
        let (mut skipped, mut sent) = (0u64, 0u64);
        self.sorter.finish(&mut |out| {
            if skipped < offset {
                skipped += 1;
                return Ok(true);
            }
            if limit.is_some_and(|l| sent >= l) {
                return Ok(false);
            }
            sink.row(&out)?;
            sent += 1;
            Ok(true)
        })?;
        Ok((sent, self.total))
    }

    /// DISTINCT on the sorted rows: a row is dropped when its keys equal the
    /// previous row's and its image equals that of a row kept since the keys
    /// last changed. The keys are the output columns, so rows of equal images
    /// have equal keys (one exception: an integer and a DOUBLE of equal value
    /// past 2^53 may sort apart and both be kept), while rows of equal keys
    /// may differ in image when a column mixes kinds of values (a DATE and the
    /// DATETIME of its midnight). Every row is counted, none sent past `limit`.
    fn finish_by_keys(
        self,
        sink: &mut dyn ResultSink,
        offset: u64,
        limit: Option<u64>,
    ) -> Result<(u64, u64)> {
        let colls = &self.colls;
        // Images of the rows kept among the current run of equal keys (empty
        // while the run has one row).
        let mut kept: Vec<Vec<u8>> = Vec::new();
        let (mut total, mut sent) = (0u64, 0u64);
        self.sorter.finish_runs(&mut |row, prev| {
            match prev {
                None => kept.clear(),
                Some(p) => {
                    if kept.is_empty() {
                        kept.push(row_image(&p.0, colls));
                    }
                    let img = row_image(&row.0, colls);
                    if kept.contains(&img) {
                        return Ok(true);
                    }
                    kept.push(img);
                }
            }
            total += 1;
            if total > offset && limit.is_none_or(|l| sent < l) {
                sink.row(&row.0)?;
                sent += 1;
            }
            Ok(true)
        })?;
        Ok((sent, total))
    }
}
