//! A transaction's annex: bytes the layer above appends alongside its
//! writes (the binary log's record of the transaction), rolled back with
//! statements and savepoints like the writes, and committed in the same
//! engine batch as one sequence-keyed put (`prefix` + the put's own engine
//! sequence number, so records sort in commit order). An annex holding only
//! its header writes nothing.

/// See the module docs.
#[derive(Debug, Clone)]
pub struct Annex {
    pub(crate) cf: u32,
    pub(crate) prefix: Vec<u8>,
    header_len: usize,
    bytes: Vec<u8>,
    /// A position the owner remembers with a tag of its own (e.g. "the last
    /// thing appended was for table t"): [`Annex::mark`] gives it back only
    /// while nothing was appended or rolled back since.
    mark: (u64, usize),
}

impl Annex {
    pub(crate) fn new(cf: u32, prefix: &[u8], header: Vec<u8>) -> Annex {
        Annex {
            cf,
            prefix: prefix.to_vec(),
            header_len: header.len(),
            bytes: header,
            mark: (u64::MAX, usize::MAX),
        }
    }

    /// Appends bytes.
    pub fn push(&mut self, b: &[u8]) {
        self.bytes.extend_from_slice(b);
    }

    /// The bytes (header first).
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// True when nothing but the header is held.
    pub fn is_empty(&self) -> bool {
        self.bytes.len() == self.header_len
    }

    /// Remembers `tag` at the current end.
    pub fn set_mark(&mut self, tag: u64) {
        self.mark = (tag, self.bytes.len());
    }

    /// The tag set by [`Annex::set_mark`] if the annex still ends where it
    /// was set.
    pub fn mark(&self) -> Option<u64> {
        (self.mark.1 == self.bytes.len()).then_some(self.mark.0)
    }

    pub(crate) fn len(&self) -> usize {
        self.bytes.len()
    }

    pub(crate) fn truncate(&mut self, len: usize) {
        self.bytes.truncate(len.max(self.header_len));
    }

    /// Empties the annex down to its header (after a commit).
    pub(crate) fn clear(&mut self) {
        self.bytes.truncate(self.header_len);
    }
}
