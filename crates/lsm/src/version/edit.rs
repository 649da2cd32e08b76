//! Version edits: the manifest's records. Each edit changes one column
//! family's file set and may carry database-wide counters.
//!
//! ```text
//! edit := (tag: varint32 | field)*
//!   1 comparator: lenprefixed name      6 new file: level varint32, number,
//!   2 log number: varint64                size, smallest lp, largest lp,
//!   3 next file number: varint64          smallest_seq, largest_seq,
//!   4 last sequence: varint64             entries, deletions, range deletions
//!   5 deleted file: level varint32,       (varint64 each unless noted)
//!     number varint64                   7 column family id: varint32
//!   8 add column family: lenprefixed    9 drop column family (no payload)
//!  10 max column family id: varint32  11 new file, version 2: the
//!                                        fields of 6, then global seq
//! ```
//! Tag 11 is written only for a file with a global sequence number (an
//! ingested table whose entries all take that number when read); every
//! other file is written as tag 6, so a manifest without ingestions stays
//! readable by older binaries, and one with them is refused by them.
//! Tag numbers are persisted: never reuse one. An unknown tag is corruption
//! (an older binary must not silently misread a newer manifest).
use crate::coding::{put_length_prefixed, put_varint32, put_varint64, Decoder};
use crate::error::{Error, Result};

/// A new table in a level.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct NewFile {
    /// File number.
    pub number: u64,
    /// Size in bytes.
    pub size: u64,
    /// Smallest internal key.
    pub smallest: Vec<u8>,
    /// Largest internal key.
    pub largest: Vec<u8>,
    /// Smallest sequence number.
    pub smallest_seq: u64,
    /// Largest sequence number.
    pub largest_seq: u64,
    /// Point entries.
    pub num_entries: u64,
    /// Point tombstones.
    pub num_deletions: u64,
    /// Range tombstones.
    pub num_range_deletions: u64,
    /// When not 0, the sequence number of every entry of the file, whatever
    /// the file itself holds (RocksDB's global sequence number: an ingested
    /// table is published without being rewritten). `smallest`, `largest`
    /// and the seq fields above hold it already.
    pub global_seq: u64,
}

/// One manifest record.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct VersionEdit {
    /// Column family this edit applies to.
    pub cf: u32,
    /// Comparator name (first edit of a column family).
    pub comparator: Option<String>,
    /// WAL files older than this hold nothing for this column family.
    pub log_number: Option<u64>,
    /// Next file number to allocate.
    pub next_file_number: Option<u64>,
    /// Last sequence number used.
    pub last_sequence: Option<u64>,
    /// Creates a column family with this name.
    pub add_cf: Option<String>,
    /// Drops the column family.
    pub drop_cf: bool,
    /// Highest column family id ever allocated.
    pub max_cf: Option<u32>,
    /// (level, file number) removed.
    pub deleted: Vec<(usize, u64)>,
    /// (level, file) added.
    pub added: Vec<(usize, NewFile)>,
}

impl VersionEdit {
    /// Encodes the edit.
    pub fn encode(&self) -> Vec<u8> {
        let mut v = Vec::new();
        put_varint32(&mut v, 7);
        put_varint32(&mut v, self.cf);
        if let Some(c) = &self.comparator {
            put_varint32(&mut v, 1);
            put_length_prefixed(&mut v, c.as_bytes());
        }
        for (tag, val) in [
            (2, self.log_number),
            (3, self.next_file_number),
            (4, self.last_sequence),
        ] {
            if let Some(x) = val {
                put_varint32(&mut v, tag);
                put_varint64(&mut v, x);
            }
        }
        if let Some(n) = &self.add_cf {
            put_varint32(&mut v, 8);
            put_length_prefixed(&mut v, n.as_bytes());
        }
        if self.drop_cf {
            put_varint32(&mut v, 9);
        }
        if let Some(m) = self.max_cf {
            put_varint32(&mut v, 10);
            put_varint32(&mut v, m);
        }
        for (level, n) in &self.deleted {
            put_varint32(&mut v, 5);
            put_varint32(&mut v, *level as u32);
            put_varint64(&mut v, *n);
        }
        for (level, f) in &self.added {
            put_varint32(&mut v, if f.global_seq == 0 { 6 } else { 11 });
            put_varint32(&mut v, *level as u32);
            put_varint64(&mut v, f.number);
            put_varint64(&mut v, f.size);
            put_length_prefixed(&mut v, &f.smallest);
            put_length_prefixed(&mut v, &f.largest);
            for x in [
                f.smallest_seq,
                f.largest_seq,
                f.num_entries,
                f.num_deletions,
                f.num_range_deletions,
            ] {
                put_varint64(&mut v, x);
            }
            if f.global_seq != 0 {
                put_varint64(&mut v, f.global_seq);
            }
        }
        v
    }

    /// Decodes an edit; `Corruption` on malformed bytes or unknown tags.
    pub fn decode(b: &[u8]) -> Result<VersionEdit> {
        let bad = |what: &str| Error::corruption("", 0, format!("version edit: {what}"));
        let mut e = VersionEdit::default();
        let mut d = Decoder::new(b);
        while !d.is_empty() {
            let tag = d.varint32().ok_or_else(|| bad("bad tag"))?;
            let ok = match tag {
                1 => d
                    .length_prefixed()
                    .and_then(|s| std::str::from_utf8(s).ok())
                    .map(|s| e.comparator = Some(s.to_string())),
                2 => d.varint64().map(|x| e.log_number = Some(x)),
                3 => d.varint64().map(|x| e.next_file_number = Some(x)),
                4 => d.varint64().map(|x| e.last_sequence = Some(x)),
                5 => (|| Some(e.deleted.push((level(d.varint32()?)?, d.varint64()?))))(),
                6 | 11 => (|| {
                    let lvl = level(d.varint32()?)?;
                    let mut f = NewFile {
                        number: d.varint64()?,
                        size: d.varint64()?,
                        smallest: d.length_prefixed()?.to_vec(),
                        largest: d.length_prefixed()?.to_vec(),
                        smallest_seq: d.varint64()?,
                        largest_seq: d.varint64()?,
                        num_entries: d.varint64()?,
                        num_deletions: d.varint64()?,
                        num_range_deletions: d.varint64()?,
                        global_seq: 0,
                    };
                    if tag == 11 {
                        f.global_seq = d.varint64().filter(|g| *g != 0)?;
                    }
                    e.added.push((lvl, f));
                    Some(())
                })(),
                7 => d.varint32().map(|x| e.cf = x),
                8 => d
                    .length_prefixed()
                    .and_then(|s| std::str::from_utf8(s).ok())
                    .map(|s| e.add_cf = Some(s.to_string())),
                9 => {
                    e.drop_cf = true;
                    Some(())
                }
                10 => d.varint32().map(|x| e.max_cf = Some(x)),
                _ => return Err(bad(&format!("unknown tag {tag}"))),
            };
            ok.ok_or_else(|| bad(&format!("truncated field for tag {tag}")))?;
        }
        Ok(e)
    }
}

fn level(x: u32) -> Option<usize> {
    let l = x as usize;
    (l < crate::options::NUM_LEVELS).then_some(l)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_rejects_garbage() {
        let e = VersionEdit {
            cf: 3,
            comparator: Some("strata.Bytewise".into()),
            log_number: Some(9),
            next_file_number: Some(20),
            last_sequence: Some(1000),
            add_cf: Some("idx".into()),
            drop_cf: false,
            max_cf: Some(3),
            deleted: vec![(1, 5), (2, 6)],
            added: vec![(
                1,
                NewFile {
                    number: 7,
                    size: 100,
                    smallest: b"a".to_vec(),
                    largest: b"z".to_vec(),
                    ..Default::default()
                },
            )],
        };
        let b = e.encode();
        assert_eq!(VersionEdit::decode(&b).unwrap(), e);
        assert!(VersionEdit::decode(&[99]).is_err());
        assert!(VersionEdit::decode(&b[..b.len() - 1]).is_err());
    }

    /// A file with a global sequence number is a tag-11 record carrying it;
    /// one without stays a tag-6 record, byte for byte what older binaries
    /// write and read (old manifests decode with global_seq 0).
    #[test]
    fn global_seq_is_a_version_2_new_file_record() {
        let file = |g| NewFile {
            number: 7,
            size: 100,
            smallest: b"a".to_vec(),
            largest: b"z".to_vec(),
            smallest_seq: g,
            largest_seq: g,
            num_entries: 3,
            global_seq: g,
            ..Default::default()
        };
        let edit = |g| VersionEdit {
            cf: 0,
            added: vec![(0, file(g))],
            ..Default::default()
        };
        let old = edit(0).encode();
        // cf tag 7, cf 0, then the new-file tag.
        assert_eq!(&old[..3], &[7, 0, 6]);
        assert_eq!(VersionEdit::decode(&old).unwrap(), edit(0));
        let new = edit(300).encode();
        assert_eq!(&new[..3], &[7, 0, 11]);
        assert_eq!(VersionEdit::decode(&new).unwrap(), edit(300));
        assert!(VersionEdit::decode(&new[..new.len() - 1]).is_err());
        // A version-2 record must carry a number.
        let mut zero = old.clone();
        zero[2] = 11;
        zero.push(0);
        assert!(VersionEdit::decode(&zero).is_err());
    }
}
