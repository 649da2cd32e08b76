//! K-way merge of internal iterators (LevelDB's MergingIterator): finds the
//! smallest (or largest, when moving backward) current key by a linear scan
//! over the children, which is fast for the handful of sources an LSM read
//! merges. Moving forward, the scan also notes the runner-up, so a `next`
//! whose child's new key is still below it keeps that child without a scan
//! (a range read mostly takes one source's keys in a row). Switching
//! direction re-positions every other child.
use super::InternalIterator;
use crate::error::Result;
use crate::key::Comparator;
use std::cmp::Ordering;

#[derive(PartialEq, Eq, Clone, Copy)]
enum Direction {
    Forward,
    Reverse,
}

/// Merges children into one ordered stream (duplicates are all returned).
pub struct MergingIterator {
    cmp: Comparator,
    children: Vec<Box<dyn InternalIterator>>,
    current: Option<usize>,
    /// Moving forward: the valid child with the smallest key after
    /// `current`'s at the last scan (None: no other was valid). Only
    /// `current` moves between scans, so it stays that.
    runner_up: Option<usize>,
    direction: Direction,
}

impl MergingIterator {
    /// Merges `children`.
    pub fn new(cmp: Comparator, children: Vec<Box<dyn InternalIterator>>) -> MergingIterator {
        MergingIterator {
            cmp,
            children,
            current: None,
            runner_up: None,
            direction: Direction::Forward,
        }
    }

    fn find_smallest(&mut self) {
        let mut best: Option<usize> = None;
        let mut second: Option<usize> = None;
        let below = |a: usize, b: usize| {
            self.cmp
                .compare_internal(self.children[a].key(), self.children[b].key())
                == Ordering::Less
        };
        for (i, c) in self.children.iter().enumerate() {
            if !c.valid() {
                continue;
            }
            match best {
                Some(b) if !below(i, b) => {
                    if second.is_none_or(|s| below(i, s)) {
                        second = Some(i);
                    }
                }
                _ => {
                    second = best;
                    best = Some(i);
                }
            }
        }
        self.current = best;
        self.runner_up = second;
    }

    fn find_largest(&mut self) {
        let mut best: Option<usize> = None;
        for (i, c) in self.children.iter().enumerate().rev() {
            if c.valid() {
                match best {
                    Some(b)
                        if self.cmp.compare_internal(c.key(), self.children[b].key())
                            != Ordering::Greater => {}
                    _ => best = Some(i),
                }
            }
        }
        self.current = best;
        self.runner_up = None;
    }
}

impl InternalIterator for MergingIterator {
    fn valid(&self) -> bool {
        self.current.is_some()
    }
    fn seek_to_first(&mut self) {
        for c in &mut self.children {
            c.seek_to_first();
        }
        self.direction = Direction::Forward;
        self.find_smallest();
    }
    fn seek_to_last(&mut self) {
        for c in &mut self.children {
            c.seek_to_last();
        }
        self.direction = Direction::Reverse;
        self.find_largest();
    }
    fn seek(&mut self, target: &[u8]) {
        for c in &mut self.children {
            c.seek(target);
        }
        self.direction = Direction::Forward;
        self.find_smallest();
    }
    fn next(&mut self) {
        let Some(cur) = self.current else { return };
        if self.direction == Direction::Forward {
            self.children[cur].next();
            let c = &self.children[cur];
            // Still below the runner-up (which has not moved): still the smallest.
            let stays = match self.runner_up {
                None => true,
                Some(r) => {
                    c.valid()
                        && self.cmp.compare_internal(c.key(), self.children[r].key())
                            == Ordering::Less
                }
            };
            if stays {
                if !c.valid() {
                    self.current = None;
                }
            } else {
                self.find_smallest();
            }
            return;
        }
        let key = self.children[cur].key().to_vec();
        for (i, c) in self.children.iter_mut().enumerate() {
            if i != cur {
                c.seek(&key);
                if c.valid() && self.cmp.compare_internal(&key, c.key()) == Ordering::Equal {
                    c.next();
                }
            }
        }
        self.direction = Direction::Forward;
        self.children[cur].next();
        self.find_smallest();
    }
    fn prev(&mut self) {
        let Some(cur) = self.current else { return };
        if self.direction != Direction::Reverse {
            let key = self.children[cur].key().to_vec();
            for (i, c) in self.children.iter_mut().enumerate() {
                if i != cur {
                    c.seek(&key);
                    if c.valid() {
                        c.prev();
                    } else {
                        c.seek_to_last();
                    }
                }
            }
            self.direction = Direction::Reverse;
        }
        self.children[cur].prev();
        self.find_largest();
    }
    fn key(&self) -> &[u8] {
        match self.current {
            Some(c) => self.children[c].key(),
            None => &[],
        }
    }
    fn value(&self) -> &[u8] {
        match self.current {
            Some(c) => self.children[c].value(),
            None => &[],
        }
    }
    fn status(&self) -> Result<()> {
        for c in &self.children {
            c.status()?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::iter::VecIter;
    use crate::key::{internal_key, ValueKind};

    fn src(keys: &[(&str, u64)]) -> Box<dyn InternalIterator> {
        let e = keys
            .iter()
            .map(|(k, s)| (internal_key(k.as_bytes(), *s, ValueKind::Value), vec![]))
            .collect();
        Box::new(VecIter::new(Comparator::Bytewise, e))
    }

    /// Seeded: many children of random keys, walked with random direction
    /// switches and seeks, give the sorted union at every step (the
    /// runner-up shortcut of `next` included).
    #[test]
    fn random_walks_match_the_sorted_union() {
        let seed = testkit::seed("merge_random_walks");
        let mut rng = testkit::Rng::new(seed);
        for round in 0..200 {
            let n = 1 + rng.below(6) as usize;
            let mut all = Vec::new();
            let mut children: Vec<Box<dyn InternalIterator>> = Vec::new();
            for c in 0..n {
                let mut e = Vec::new();
                for _ in 0..rng.below(12) {
                    let k = format!("k{:02}", rng.below(30));
                    // Distinct sequence numbers: no two entries are equal.
                    let s = (all.len() * 8 + c + 1) as u64;
                    let ik = internal_key(k.as_bytes(), s, ValueKind::Value);
                    all.push(ik.clone());
                    e.push((ik, vec![]));
                }
                e.sort_by(|a, b| Comparator::Bytewise.compare_internal(&a.0, &b.0));
                children.push(Box::new(VecIter::new(Comparator::Bytewise, e)));
            }
            all.sort_by(|a, b| Comparator::Bytewise.compare_internal(a, b));
            let mut m = MergingIterator::new(Comparator::Bytewise, children);
            m.seek_to_first();
            let mut at = 0usize;
            for step in 0..60 {
                let here = (at < all.len()).then(|| all[at].clone());
                assert_eq!(
                    m.valid().then(|| m.key().to_vec()),
                    here,
                    "SEED={seed} round {round} step {step}"
                );
                if !m.valid() || all.is_empty() {
                    m.seek_to_first();
                    at = 0;
                    continue;
                }
                match rng.below(10) {
                    0..=5 => {
                        m.next();
                        at += 1;
                    }
                    6 | 7 if at > 0 => {
                        m.prev();
                        at -= 1;
                    }
                    _ => {
                        at = rng.below(all.len() as u64) as usize;
                        m.seek(&all[at]);
                    }
                }
            }
        }
    }

    #[test]
    fn merges_both_directions() {
        let mut m = MergingIterator::new(
            Comparator::Bytewise,
            vec![
                src(&[("a", 1), ("c", 1)]),
                src(&[("b", 2), ("c", 5)]),
                src(&[]),
            ],
        );
        m.seek_to_first();
        let mut fwd = Vec::new();
        while m.valid() {
            fwd.push(m.key().to_vec());
            m.next();
        }
        assert_eq!(fwd.len(), 4);
        assert_eq!(crate::key::parse_internal_key(&fwd[2]).unwrap().seq, 5);
        m.seek_to_last();
        let mut back = Vec::new();
        while m.valid() {
            back.push(m.key().to_vec());
            m.prev();
        }
        back.reverse();
        assert_eq!(fwd, back);
        // Direction switch in the middle.
        m.seek(&internal_key(b"b", 9, ValueKind::Value));
        assert_eq!(crate::key::user_key(m.key()), b"b");
        m.prev();
        assert_eq!(crate::key::user_key(m.key()), b"a");
        m.next();
        assert_eq!(crate::key::user_key(m.key()), b"b");
    }
}
