//! The transaction's range cursor: the transaction's own buffered writes in
//! the range (copied in when the scan starts) merged over an engine
//! iterator, in ascending or descending order. A buffered put replaces the
//! engine's entry for the same key; a buffered delete hides it.
//!
//! The cursor owns everything it reads (no borrow of the transaction), and
//! hands out borrowed keys and values: an engine entry is never copied by
//! the cursor itself.
use crate::buffer::Overlay;
use crate::error::Result;
use lsm::{Comparator, DbIterator};
use std::cmp::Ordering;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cur {
    /// Not positioned on an entry (before the start or at the end).
    None,
    /// On the engine iterator's entry.
    Engine,
    /// On `overlay[pos]`.
    Overlay,
}

/// A cursor over a key range as the transaction sees it. Get entries with
/// [`TxnIter::next`]:
///
/// ```ignore
/// let mut it = txn.scan(cf, Some(b"a"), Some(b"b"), false)?;
/// while let Some((key, value)) = it.next()? {
///     // key, value: &[u8], valid until the next call
/// }
/// ```
pub struct TxnIter {
    engine: DbIterator,
    overlay: Overlay,
    pos: usize,
    reverse: bool,
    cmp: Comparator,
    cur: Cur,
    started: bool,
    done: bool,
}

impl std::fmt::Debug for TxnIter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TxnIter")
            .field("reverse", &self.reverse)
            .field("own_writes", &self.overlay.len())
            .finish_non_exhaustive()
    }
}

impl TxnIter {
    /// `overlay` must be in iteration order (by `cmp`, reversed when
    /// `reverse`) and inside the engine iterator's bounds.
    pub(crate) fn new(
        engine: DbIterator,
        overlay: Overlay,
        cmp: Comparator,
        reverse: bool,
    ) -> TxnIter {
        TxnIter {
            engine,
            overlay,
            pos: 0,
            reverse,
            cmp,
            cur: Cur::None,
            started: false,
            done: false,
        }
    }

    fn step_engine(&mut self) {
        if self.reverse {
            self.engine.prev();
        } else {
            self.engine.next();
        }
    }

    /// Settles on the next visible entry at or after the current sources'
    /// positions.
    fn settle(&mut self) -> Result<()> {
        loop {
            let e = self.engine.valid();
            if !e {
                self.engine.status()?;
            }
            let o = self.overlay.get(self.pos);
            match (e, o) {
                (false, None) => {
                    self.cur = Cur::None;
                    self.done = true;
                    return Ok(());
                }
                (true, None) => {
                    self.cur = Cur::Engine;
                    return Ok(());
                }
                (e, Some((k, v))) => {
                    let ord = if e {
                        let o = self.cmp.compare(k, self.engine.key());
                        if self.reverse {
                            o.reverse()
                        } else {
                            o
                        }
                    } else {
                        Ordering::Less
                    };
                    match ord {
                        Ordering::Greater => {
                            self.cur = Cur::Engine;
                            return Ok(());
                        }
                        Ordering::Equal => {
                            // Own write shadows the engine's entry.
                            self.step_engine();
                        }
                        Ordering::Less => {
                            if v.is_some() {
                                self.cur = Cur::Overlay;
                                return Ok(());
                            }
                            self.pos += 1;
                        }
                    }
                }
            }
        }
    }

    fn advance(&mut self) -> Result<()> {
        match self.cur {
            Cur::Engine => self.step_engine(),
            Cur::Overlay => self.pos += 1,
            Cur::None => {}
        }
        self.settle()
    }

    /// The entry the last [`TxnIter::next`] returned (None before the
    /// first call and at the end).
    pub fn current(&self) -> Option<(&[u8], &[u8])> {
        match self.cur {
            Cur::None => None,
            Cur::Engine => Some((self.engine.key(), self.engine.value())),
            Cur::Overlay => {
                let (k, v) = self.overlay.get(self.pos)?;
                Some((k.as_slice(), v.as_deref()?))
            }
        }
    }

    /// Moves to the next entry and returns it; `Ok(None)` at the end of
    /// the range (and on every later call).
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> Result<Option<(&[u8], &[u8])>> {
        if self.done {
            return Ok(None);
        }
        if self.started {
            self.advance()?;
        } else {
            self.started = true;
            if self.reverse {
                self.engine.seek_to_last();
            } else {
                self.engine.seek_to_first();
            }
            self.settle()?;
        }
        Ok(self.current())
    }

    /// Like [`TxnIter::next`], with owned copies.
    pub fn next_owned(&mut self) -> Result<Option<(Vec<u8>, Vec<u8>)>> {
        Ok(self.next()?.map(|(k, v)| (k.to_vec(), v.to_vec())))
    }

    /// Collects every remaining entry (tests, small ranges).
    pub fn collect_all(&mut self) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
        let mut out = Vec::new();
        while let Some(kv) = self.next_owned()? {
            out.push(kv);
        }
        Ok(out)
    }
}
