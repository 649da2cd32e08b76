//! Log framing shared by the write-ahead log and the manifest (LevelDB's
//! log format; described byte by byte in docs/formats/wal.md).
//!
//! ```text
//! file   := block*            block = 32 KiB; the last one may be short
//! block  := record* trailer?  trailer = zeros when < 7 bytes remain
//! record := crc: fixed32 (masked CRC32C of type + payload)
//!           length: fixed16 LE | type: u8 (1 FULL, 2 FIRST, 3 MIDDLE, 4 LAST)
//!           payload: [length bytes]
//! ```
//! A logical record that does not fit in the rest of a block is split into
//! FIRST, MIDDLE.., LAST fragments.
mod reader;
mod writer;

pub use reader::{LogReader, TailPolicy};
pub use writer::LogWriter;

/// Size of a log block.
pub const BLOCK_SIZE: usize = 32 * 1024;
/// Size of a fragment header.
pub const HEADER_SIZE: usize = 7;

/// Fragment types. Persisted; never renumber.
pub(crate) const FULL: u8 = 1;
pub(crate) const FIRST: u8 = 2;
pub(crate) const MIDDLE: u8 = 3;
pub(crate) const LAST: u8 = 4;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vfs::{Fs, MemFs};
    use std::path::Path;

    fn write(records: &[Vec<u8>]) -> (MemFs, Vec<u8>) {
        let fs = MemFs::new();
        let p = Path::new("/l");
        let mut w = LogWriter::new(fs.create(p).unwrap());
        for r in records {
            w.add_record(r).unwrap();
        }
        w.sync().unwrap();
        let data = fs.read_all(p).unwrap();
        (fs, data)
    }

    fn read_all(data: Vec<u8>, policy: TailPolicy) -> crate::Result<Vec<Vec<u8>>> {
        let mut r = LogReader::new(data, "l", policy);
        let mut out = Vec::new();
        while let Some(rec) = r.next_record()? {
            out.push(rec);
        }
        Ok(out)
    }

    #[test]
    fn round_trip_across_blocks() {
        let recs: Vec<Vec<u8>> = (0..200)
            .map(|i| vec![i as u8; (i * 997) % 70_000])
            .collect();
        let (_fs, data) = write(&recs);
        assert_eq!(read_all(data, TailPolicy::Strict).unwrap(), recs);
    }

    #[test]
    fn torn_tail_is_dropped_and_middle_corruption_reported() {
        let recs: Vec<Vec<u8>> = (0..50).map(|i| vec![i as u8; 1000]).collect();
        let (_fs, data) = write(&recs);
        // Torn tail: cut the last record in half.
        let torn = data[..data.len() - 500].to_vec();
        let got = read_all(torn, TailPolicy::TolerateTornTail).unwrap();
        assert_eq!(got, recs[..49].to_vec());
        // A flipped bit in the middle, with valid records after it: an error.
        let mut bad = data.clone();
        bad[10_000] ^= 0x10;
        let err = read_all(bad.clone(), TailPolicy::TolerateTornTail).unwrap_err();
        assert!(err.is_corruption(), "{err}");
        assert!(err.to_string().contains("offset"), "{err}");
        // Point-in-time recovery stops at the bad record instead.
        let got = read_all(bad, TailPolicy::PointInTime).unwrap();
        assert!(got.len() < 50 && got[..] == recs[..got.len()]);
    }
}
