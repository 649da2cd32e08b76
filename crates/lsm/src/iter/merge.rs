//! K-way merge of internal iterators (LevelDB's MergingIterator): finds the
//! smallest (or largest, when moving backward) current key by a linear scan
//! over the children, which is fast for the handful of sources an LSM read
//! merges. Switching direction re-positions every other child.
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
    direction: Direction,
}

impl MergingIterator {
    /// Merges `children`.
    pub fn new(cmp: Comparator, children: Vec<Box<dyn InternalIterator>>) -> MergingIterator {
        MergingIterator {
            cmp,
            children,
            current: None,
            direction: Direction::Forward,
        }
    }

    fn find_smallest(&mut self) {
        let mut best: Option<usize> = None;
        for (i, c) in self.children.iter().enumerate() {
            if c.valid() {
                match best {
                    Some(b)
                        if self.cmp.compare_internal(c.key(), self.children[b].key())
                            != Ordering::Less => {}
                    _ => best = Some(i),
                }
            }
        }
        self.current = best;
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
        if self.direction != Direction::Forward {
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
        }
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
