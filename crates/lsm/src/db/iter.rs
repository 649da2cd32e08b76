//! The user's iterator (LevelDB's DBIter): turns the merged stream of
//! internal entries into the newest visible value of each user key at the
//! read snapshot, skipping deleted keys, keys hidden by range tombstones and
//! keys outside the bounds or the seek prefix. Moves both ways.
use super::read::ReadView;
use crate::error::Result;
use crate::iter::InternalIterator;
use crate::key::{self, Comparator, SeqNo, ValueKind, KIND_FOR_SEEK, MAX_SEQ};
use crate::options::ReadOptions;
use crate::range_del::Tombstones;
use std::cmp::Ordering;

#[derive(PartialEq, Eq, Clone, Copy)]
enum Dir {
    Forward,
    Reverse,
}

/// Iterates over user keys and values.
pub struct DbIterator {
    inner: Box<dyn InternalIterator>,
    cmp: Comparator,
    seq: SeqNo,
    tombs: Tombstones,
    dir: Dir,
    valid: bool,
    key: Vec<u8>,
    value: Vec<u8>,
    lower: Option<Vec<u8>>,
    upper: Option<Vec<u8>>,
    prefix_len: Option<usize>,
    prefix_mode: bool,
    prefix: Option<Vec<u8>>,
    _view: ReadView,
    _opts: ReadOptions,
}

impl DbIterator {
    pub(crate) fn new(
        inner: Box<dyn InternalIterator>,
        cmp: Comparator,
        view: ReadView,
        tombs: Tombstones,
        opts: ReadOptions,
    ) -> Self {
        DbIterator {
            inner,
            cmp,
            seq: view.seq,
            tombs,
            dir: Dir::Forward,
            valid: false,
            key: Vec::new(),
            value: Vec::new(),
            lower: opts.lower_bound.clone(),
            upper: opts.upper_bound.clone(),
            prefix_len: view.opts.prefix_len,
            prefix_mode: opts.prefix_same_as_start,
            prefix: None,
            _view: view,
            _opts: opts,
        }
    }

    /// True when positioned on a key.
    pub fn valid(&self) -> bool {
        self.valid
    }
    /// The current key.
    pub fn key(&self) -> &[u8] {
        &self.key
    }
    /// The current value: moving forward, the inner iterator's (it stays on
    /// the entry found), not copied; moving backward, the copy taken (the
    /// inner iterator has gone past the entry).
    pub fn value(&self) -> &[u8] {
        if self.valid && self.dir == Dir::Forward {
            self.inner.value()
        } else {
            &self.value
        }
    }
    /// The first error met (corruption, I/O).
    pub fn status(&self) -> Result<()> {
        self.inner.status()
    }
    /// The order of the column family iterated (bounds and directions are
    /// in this order).
    pub fn comparator(&self) -> Comparator {
        self.cmp
    }

    fn hidden(&self, user_key: &[u8], seq: SeqNo) -> bool {
        !self.tombs.is_empty() && self.tombs.max_covering(user_key) > seq
    }

    fn out_of_upper(&self, uk: &[u8]) -> bool {
        if let Some(u) = &self.upper {
            if self.cmp.compare(uk, u) != Ordering::Less {
                return true;
            }
        }
        if let Some(p) = &self.prefix {
            if !uk.starts_with(p) {
                return true;
            }
        }
        false
    }

    fn out_of_lower(&self, uk: &[u8]) -> bool {
        if let Some(l) = &self.lower {
            if self.cmp.compare(uk, l) == Ordering::Less {
                return true;
            }
        }
        if let Some(p) = &self.prefix {
            if !uk.starts_with(p) {
                return true;
            }
        }
        false
    }

    fn find_next_user_entry(&mut self, mut skipping: bool) {
        // `self.key` holds the key to skip when `skipping`.
        while self.inner.valid() {
            if let Some(p) = key::parse_internal_key(self.inner.key()) {
                if self.out_of_upper(p.user_key) {
                    break;
                }
                if p.seq <= self.seq {
                    match p.kind {
                        ValueKind::Delete | ValueKind::SingleDelete => {
                            self.key.clear();
                            self.key.extend_from_slice(p.user_key);
                            skipping = true;
                        }
                        ValueKind::Value => {
                            let skip = skipping
                                && self.cmp.compare(p.user_key, &self.key) != Ordering::Greater;
                            if !skip {
                                if self.hidden(p.user_key, p.seq) {
                                    self.key.clear();
                                    self.key.extend_from_slice(p.user_key);
                                    skipping = true;
                                } else {
                                    // The inner iterator stays here: `value` reads it.
                                    self.key.clear();
                                    self.key.extend_from_slice(p.user_key);
                                    self.valid = true;
                                    return;
                                }
                            }
                        }
                        ValueKind::RangeDelete => {}
                    }
                }
            }
            self.inner.next();
        }
        self.valid = false;
    }

    fn find_prev_user_entry(&mut self) {
        let mut found = false; // a live value for self.key is saved
        while self.inner.valid() {
            if let Some(p) = key::parse_internal_key(self.inner.key()) {
                if self.out_of_lower(p.user_key) {
                    break;
                }
                if p.seq <= self.seq {
                    if found && self.cmp.compare(p.user_key, &self.key) == Ordering::Less {
                        break;
                    }
                    let live = p.kind == ValueKind::Value && !self.hidden(p.user_key, p.seq);
                    if p.kind != ValueKind::RangeDelete {
                        found = live;
                        if live {
                            self.key.clear();
                            self.key.extend_from_slice(p.user_key);
                            self.value.clear();
                            self.value.extend_from_slice(self.inner.value());
                        }
                    }
                }
            }
            self.inner.prev();
        }
        self.valid = found;
        if !found {
            self.dir = Dir::Forward;
        }
    }

    /// Positions at the first key (>= lower bound).
    pub fn seek_to_first(&mut self) {
        self.prefix = None;
        self.dir = Dir::Forward;
        match self.lower.clone() {
            Some(l) => self
                .inner
                .seek(&key::internal_key(&l, MAX_SEQ, KIND_FOR_SEEK)),
            None => self.inner.seek_to_first(),
        }
        self.find_next_user_entry(false);
    }

    /// Positions at the last key (< upper bound).
    pub fn seek_to_last(&mut self) {
        self.prefix = None;
        self.dir = Dir::Reverse;
        match self.upper.clone() {
            Some(u) => {
                self.inner
                    .seek(&key::internal_key(&u, MAX_SEQ, KIND_FOR_SEEK));
                if self.inner.valid() {
                    self.inner.prev();
                } else {
                    self.inner.seek_to_last();
                }
            }
            None => self.inner.seek_to_last(),
        }
        self.find_prev_user_entry();
    }

    fn set_prefix(&mut self, target: &[u8]) {
        self.prefix = match (self.prefix_mode, self.prefix_len) {
            (true, Some(n)) if target.len() >= n => Some(target[..n].to_vec()),
            _ => None,
        };
    }

    /// Positions at the first key >= `target`.
    pub fn seek(&mut self, target: &[u8]) {
        self.set_prefix(target);
        self.dir = Dir::Forward;
        let t = match &self.lower {
            Some(l) if self.cmp.compare(target, l) == Ordering::Less => l.clone(),
            _ => target.to_vec(),
        };
        self.inner
            .seek(&key::internal_key(&t, self.seq.min(MAX_SEQ), KIND_FOR_SEEK));
        self.find_next_user_entry(false);
    }

    /// Positions at the last key <= `target`.
    pub fn seek_for_prev(&mut self, target: &[u8]) {
        self.set_prefix(target);
        self.dir = Dir::Reverse;
        let mut t = target.to_vec();
        if let Some(u) = &self.upper {
            if self.cmp.compare(&t, u) != Ordering::Less {
                self.inner
                    .seek(&key::internal_key(u, MAX_SEQ, KIND_FOR_SEEK));
                if self.inner.valid() {
                    self.inner.prev();
                } else {
                    self.inner.seek_to_last();
                }
                self.find_prev_user_entry();
                return;
            }
            t = target.to_vec();
        }
        // First entry after every version of `t`.
        self.inner
            .seek(&key::internal_key(&t, 0, ValueKind::Delete));
        while self.inner.valid()
            && self.cmp.compare(key::user_key(self.inner.key()), &t) != Ordering::Greater
        {
            self.inner.next();
        }
        if self.inner.valid() {
            self.inner.prev();
        } else {
            self.inner.seek_to_last();
        }
        self.find_prev_user_entry();
    }

    /// Moves to the next key.
    pub fn next(&mut self) {
        if !self.valid {
            return;
        }
        if self.dir == Dir::Reverse {
            self.dir = Dir::Forward;
            // inner is before the current key's entries: move onto them.
            if self.inner.valid() {
                self.inner.next();
            } else {
                self.inner.seek_to_first();
            }
        } else {
            self.inner.next();
        }
        self.find_next_user_entry(true);
    }

    /// Moves to the previous key.
    pub fn prev(&mut self) {
        if !self.valid {
            return;
        }
        if self.dir == Dir::Forward {
            // Step back past every entry of the current key.
            loop {
                self.inner.prev();
                if !self.inner.valid() {
                    self.valid = false;
                    return;
                }
                if self.cmp.compare(key::user_key(self.inner.key()), &self.key) == Ordering::Less {
                    break;
                }
            }
            self.dir = Dir::Reverse;
        }
        self.find_prev_user_entry();
    }
}
