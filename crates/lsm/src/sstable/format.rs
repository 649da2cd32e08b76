//! Table layout pieces: block handles, the block trailer (compression type
//! + checksum), compression codecs and the fixed-size footer. The whole
//! layout is described in docs/formats/sstable.md.
//!
//! ```text
//! block trailer := type: u8 (0 none, 1 lz4, 2 zstd) | crc: fixed32
//!                  crc = masked CRC32C of (stored block bytes + type byte)
//! footer (80 B) := filter, range_del, properties, index handles:
//!                  4 x (offset fixed64, size fixed64)
//!                  format_version: fixed32 | crc: fixed32 (masked CRC32C of
//!                  the 72 bytes before it) | magic: fixed64
//! ```
use crate::coding::{
    get_fixed32, get_fixed64, mask_crc, put_fixed32, put_fixed64, put_varint64, unmask_crc, Decoder,
};
use crate::error::{Error, Result};
use crate::vfs::RandomAccessFile;

/// Magic number at the end of every table ("STRATAT1" little-endian-ish).
pub const MAGIC: u64 = 0x3154_4154_4152_5453;
/// Current table format version (2: the properties block holds the key
/// range). Readers accept every version from 1.
pub const FORMAT_VERSION: u32 = 2;
/// Footer size in bytes.
pub const FOOTER_SIZE: usize = 80;
/// Block trailer size in bytes.
pub const TRAILER_SIZE: usize = 5;

/// Where a block lives in a file (size excludes the trailer).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BlockHandle {
    /// Byte offset of the block.
    pub offset: u64,
    /// Stored (possibly compressed) size, without trailer.
    pub size: u64,
}

impl BlockHandle {
    /// Appends the varint encoding (used in index entries).
    pub fn encode_varint(&self, dst: &mut Vec<u8>) {
        put_varint64(dst, self.offset);
        put_varint64(dst, self.size);
    }
    /// Decodes the varint encoding.
    pub fn decode_varint(src: &[u8]) -> Option<BlockHandle> {
        let mut d = Decoder::new(src);
        Some(BlockHandle {
            offset: d.varint64()?,
            size: d.varint64()?,
        })
    }
}

/// Per-block compression. Persisted values; never renumber.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compression {
    /// Stored as is.
    None = 0,
    /// LZ4 block format with the uncompressed size prepended.
    Lz4 = 1,
    /// Zstandard (level 1 unless configured otherwise).
    Zstd = 2,
}

impl Compression {
    /// RocksDB's name (`kNoCompression`, `kLZ4Compression`, `kZSTD`), as option strings spell it.
    pub fn rocksdb_name(self) -> &'static str {
        match self {
            Compression::None => "kNoCompression",
            Compression::Lz4 => "kLZ4Compression",
            Compression::Zstd => "kZSTD",
        }
    }

    /// Parses db_bench style names (`none`, `lz4`, `zstd`).
    pub fn from_name(s: &str) -> Option<Compression> {
        match s.to_ascii_lowercase().as_str() {
            "none" | "no" | "knocompression" => Some(Compression::None),
            "lz4" | "klz4compression" => Some(Compression::Lz4),
            "zstd" | "kzstd" => Some(Compression::Zstd),
            _ => None,
        }
    }
    pub(crate) fn from_u8(b: u8) -> Option<Compression> {
        match b {
            0 => Some(Compression::None),
            1 => Some(Compression::Lz4),
            2 => Some(Compression::Zstd),
            _ => None,
        }
    }
}

/// Compresses `raw`; falls back to `None` when it saves less than 1/8.
pub fn compress(raw: &[u8], c: Compression) -> (Vec<u8>, Compression) {
    let out = match c {
        Compression::None => None,
        Compression::Lz4 => Some(lz4_flex::block::compress_prepend_size(raw)),
        Compression::Zstd => zstd_compress(raw).ok(),
    };
    match out {
        Some(o) if o.len() < raw.len() - raw.len() / 8 => (o, c),
        _ => (raw.to_vec(), Compression::None),
    }
}

/// Shortest match the Zstd match finder takes (`ZSTD_c_minMatch`). Level 1
/// picks 5 for a block of 16 KiB or less, 6 up to 256 KiB and 7 above (zstd's
/// clevels.h); this sets 6 for every block (a block over 256 KiB, one huge row,
/// gets 6 instead of 7). On sysbench rows (keys, tabs and digit groups: the
/// short matches come from the row framing, not from the random digits) the
/// 5-byte matches cost more to code than Huffman-coded literals: with 6,
/// 16 KiB blocks compress to 1.6% fewer bytes in 34% fewer instructions and
/// decode in 34% fewer (bench/results/write-cpu-2026-11-27.md); English text
/// and source gain 2% in size. A reader needs nothing: the frame format is the
/// same.
const ZSTD_MIN_MATCH: u32 = 6;

/// The fast match finder's step (`ZSTD_c_targetLength` of the fast strategy:
/// it skips ahead faster after positions that found no match), with Huffman
/// literals kept on (`ZSTD_c_literalCompressionMode`: zstd turns them off for
/// any targetLength above 0, which would lose sysbench's 2x). Measured on
/// 16 KiB blocks with zstd 1.5.7 (bench/results/write-cpu-2026-11-27b.md):
/// on 400 blocks of real sysbench tables 3 compresses in 24% fewer
/// instructions for 1.5% more bytes (decompression 4% dearer); on English
/// text and Rust source 14-19% fewer instructions for 7% more bytes, and 6-12%
/// cheaper decompression (fewer matches). With 2: text +3% bytes for 8-11%
/// fewer instructions, sysbench 16% fewer. The last level, where
/// Zstd is used, is rewritten about once per unit of the level ratio per byte
/// (~10 times with the engine's default ratio, ~6 with the server's), so its
/// compression is the engine's largest CPU cost under writes. A reader needs nothing: the frame
/// format is the same.
const ZSTD_TARGET_LENGTH: u32 = 3;

/// Compresses one block as a Zstd frame (level 1, `ZSTD_MIN_MATCH`,
/// `ZSTD_TARGET_LENGTH`) with this
/// thread's reused context: a fresh one per block (`zstd::bulk::compress`)
/// allocated and set up its tables for every block written by flushes,
/// compactions and bulk loads.
fn zstd_compress(raw: &[u8]) -> std::io::Result<Vec<u8>> {
    thread_local! {
        static CCTX: std::cell::RefCell<Option<zstd::bulk::Compressor<'static>>> =
            const { std::cell::RefCell::new(None) };
    }
    CCTX.with(|c| {
        let mut c = c.borrow_mut();
        if c.is_none() {
            let mut z = zstd::bulk::Compressor::new(1)?;
            z.set_parameter(zstd::zstd_safe::CParameter::MinMatch(ZSTD_MIN_MATCH))?;
            z.set_parameter(zstd::zstd_safe::CParameter::TargetLength(
                ZSTD_TARGET_LENGTH,
            ))?;
            z.set_parameter(zstd::zstd_safe::CParameter::LiteralCompressionMode(
                zstd::zstd_safe::ParamSwitch::Enable,
            ))?;
            *c = Some(z);
        }
        match c.as_mut() {
            Some(z) => z.compress(raw),
            None => Err(std::io::Error::other("no zstd context")),
        }
    })
}

/// Decompresses one Zstd frame with this thread's reused context: a fresh
/// context per block (`zstd::bulk::decompress`) cost a ~100 KB allocation and
/// its setup on every block read (4% of server CPU under sysbench reads).
fn zstd_decompress(data: &[u8], capacity: usize) -> std::io::Result<Vec<u8>> {
    thread_local! {
        static DCTX: std::cell::RefCell<Option<zstd::bulk::Decompressor<'static>>> =
            const { std::cell::RefCell::new(None) };
    }
    DCTX.with(|d| {
        let mut d = d.borrow_mut();
        if d.is_none() {
            *d = Some(zstd::bulk::Decompressor::new()?);
        }
        match d.as_mut() {
            Some(z) => z.decompress(data, capacity),
            None => zstd::bulk::decompress(data, capacity),
        }
    })
}

fn decompress(typ: u8, data: Vec<u8>, name: &str, offset: u64) -> Result<Vec<u8>> {
    let bad = |what: String| Error::corruption(name, offset, what);
    match Compression::from_u8(typ) {
        Some(Compression::None) => Ok(data),
        Some(Compression::Lz4) => lz4_flex::block::decompress_size_prepended(&data)
            .map_err(|e| bad(format!("lz4 block: {e}"))),
        Some(Compression::Zstd) => {
            let n = zstd::zstd_safe::get_frame_content_size(&data)
                .ok()
                .flatten()
                .ok_or_else(|| bad("zstd block without size".into()))?;
            if n > 1 << 30 {
                return Err(bad("zstd block too large".into()));
            }
            zstd_decompress(&data, n as usize).map_err(|e| bad(format!("zstd block: {e}")))
        }
        None => Err(bad(format!("unknown compression type {typ}"))),
    }
}

/// Appends a block and its trailer to `out`; returns the handle.
pub fn encode_block(out: &mut Vec<u8>, offset: u64, raw: &[u8], c: Compression) -> BlockHandle {
    let (data, used) = compress(raw, c);
    let typ = used as u8;
    let crc = crc32c::crc32c_append(crc32c::crc32c(&data), &[typ]);
    out.extend_from_slice(&data);
    out.push(typ);
    put_fixed32(out, mask_crc(crc));
    BlockHandle {
        offset,
        size: data.len() as u64,
    }
}

/// Reads, verifies and decompresses the block at `h`.
pub fn read_block(file: &dyn RandomAccessFile, h: BlockHandle, name: &str) -> Result<Vec<u8>> {
    let len = usize::try_from(h.size).ok().filter(|n| *n < 1 << 30);
    let len = len.ok_or_else(|| Error::corruption(name, h.offset, "block size out of range"))?;
    if h.offset.saturating_add(h.size + TRAILER_SIZE as u64) > file.size() {
        return Err(Error::corruption(
            name,
            h.offset,
            "block handle beyond end of file",
        ));
    }
    let buf = file.read_at(h.offset, len + TRAILER_SIZE)?;
    decode_block(buf, h, name)
}

/// Verifies and decompresses a block whose bytes (with trailer) are `buf`.
pub fn decode_block(mut buf: Vec<u8>, h: BlockHandle, name: &str) -> Result<Vec<u8>> {
    let len = h.size as usize;
    if buf.len() != len + TRAILER_SIZE {
        return Err(Error::corruption(name, h.offset, "short block read"));
    }
    let typ = buf[len];
    let stored = get_fixed32(&buf[len + 1..]).unwrap_or(0);
    let crc = crc32c::crc32c(&buf[..len + 1]);
    if unmask_crc(stored) != crc {
        return Err(Error::corruption(name, h.offset, "block checksum mismatch"));
    }
    buf.truncate(len);
    decompress(typ, buf, name, h.offset)
}

/// The fixed-size table footer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Footer {
    /// Bloom filter block (size 0 when absent).
    pub filter: BlockHandle,
    /// Range tombstone block (size 0 when absent).
    pub range_del: BlockHandle,
    /// Properties block.
    pub properties: BlockHandle,
    /// Index block.
    pub index: BlockHandle,
}

impl Footer {
    /// Encodes the footer (exactly [`FOOTER_SIZE`] bytes).
    pub fn encode(&self) -> Vec<u8> {
        let mut v = Vec::with_capacity(FOOTER_SIZE);
        for h in [self.filter, self.range_del, self.properties, self.index] {
            put_fixed64(&mut v, h.offset);
            put_fixed64(&mut v, h.size);
        }
        put_fixed32(&mut v, FORMAT_VERSION);
        let crc = mask_crc(crc32c::crc32c(&v));
        put_fixed32(&mut v, crc);
        put_fixed64(&mut v, MAGIC);
        v
    }

    /// Decodes and verifies a footer read from `offset` of `name`.
    pub fn decode(b: &[u8], name: &str, offset: u64) -> Result<Footer> {
        let bad = |what: &str| Error::corruption(name, offset, format!("table footer: {what}"));
        if b.len() != FOOTER_SIZE {
            return Err(bad("wrong size"));
        }
        if get_fixed64(&b[72..]) != Some(MAGIC) {
            return Err(bad("bad magic number (not a Strata table?)"));
        }
        let stored = get_fixed32(&b[68..]).unwrap_or(0);
        if unmask_crc(stored) != crc32c::crc32c(&b[..68]) {
            return Err(bad("checksum mismatch"));
        }
        let version = get_fixed32(&b[64..]).unwrap_or(0);
        if !(1..=FORMAT_VERSION).contains(&version) {
            return Err(bad(&format!("unsupported format version {version}")));
        }
        let h = |i: usize| BlockHandle {
            offset: get_fixed64(&b[i * 16..]).unwrap_or(0),
            size: get_fixed64(&b[i * 16 + 8..]).unwrap_or(0),
        };
        Ok(Footer {
            filter: h(0),
            range_del: h(1),
            properties: h(2),
            index: h(3),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn footer_round_trip_and_corruption() {
        let f = Footer {
            filter: BlockHandle { offset: 1, size: 2 },
            range_del: BlockHandle { offset: 3, size: 0 },
            properties: BlockHandle { offset: 5, size: 6 },
            index: BlockHandle { offset: 7, size: 8 },
        };
        let e = f.encode();
        assert_eq!(e.len(), FOOTER_SIZE);
        assert_eq!(Footer::decode(&e, "t", 0).unwrap(), f);
        for i in 0..FOOTER_SIZE {
            let mut b = e.clone();
            b[i] ^= 1;
            assert!(Footer::decode(&b, "t", 0).unwrap_err().is_corruption());
        }
    }

    #[test]
    fn codecs_round_trip() {
        let raw: Vec<u8> = (0..10_000u32).map(|i| (i % 7) as u8).collect();
        for c in [Compression::None, Compression::Lz4, Compression::Zstd] {
            let mut out = Vec::new();
            let h = encode_block(&mut out, 0, &raw, c);
            let fs = crate::vfs::MemFs::new();
            use crate::vfs::Fs;
            let p = std::path::Path::new("/b");
            crate::vfs::write_file_synced(&fs, p, &out).unwrap();
            let f = fs.open(p).unwrap();
            assert_eq!(read_block(f.as_ref(), h, "b").unwrap(), raw);
            fs.flip_bit(p, 3, 2);
            assert!(read_block(f.as_ref(), h, "b").unwrap_err().is_corruption());
        }
    }

    /// 16 KiB of sysbench-like rows from a fixed seed: `id`, `k`, then `c` and
    /// `pad` as groups of 11 random digits joined by '-' (tab-separated).
    fn sysbench_rows() -> Vec<u8> {
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut raw = Vec::new();
        let mut id = 1;
        while raw.len() < 16 << 10 {
            let k = next() % 100_000;
            raw.extend_from_slice(format!("{id}\t{k}").as_bytes());
            for groups in [10, 5] {
                raw.push(b'\t');
                for g in 0..groups {
                    if g > 0 {
                        raw.push(b'-');
                    }
                    for _ in 0..11 {
                        raw.push(b'0' + (next() % 10) as u8);
                    }
                }
            }
            raw.push(b'\n');
            id += 1;
        }
        raw.truncate(16 << 10);
        raw
    }

    /// A level-1 context with the minimum match and/or the target length
    /// that `zstd_compress` sets; `huffman` forces Huffman-coded literals on
    /// (as `zstd_compress` does), else zstd decides.
    fn level_1_with(
        min_match: Option<u32>,
        target_length: bool,
        huffman: bool,
    ) -> zstd::bulk::Compressor<'static> {
        use zstd::zstd_safe::{CParameter, ParamSwitch};
        let mut z = zstd::bulk::Compressor::new(1).unwrap();
        if let Some(m) = min_match {
            z.set_parameter(CParameter::MinMatch(m)).unwrap();
        }
        if target_length {
            z.set_parameter(CParameter::TargetLength(ZSTD_TARGET_LENGTH))
                .unwrap();
        }
        if huffman {
            z.set_parameter(CParameter::LiteralCompressionMode(ParamSwitch::Enable))
                .unwrap();
        }
        z
    }

    /// The `Block_Type` of a Zstd frame's first block (RFC 8878 3.1.1.2: 0
    /// Raw, 1 RLE, 2 Compressed) and, for a Compressed block, the
    /// `Literals_Block_Type` of its literals section (3.1.1.3.1: 0 Raw, 1 RLE,
    /// 2 Compressed = Huffman-coded, 3 Treeless), read after the frame header
    /// (3.1.1.1).
    fn first_block_types(frame: &[u8]) -> (u32, Option<u8>) {
        assert_eq!(frame[..4], [0x28, 0xb5, 0x2f, 0xfd], "Zstd magic number");
        let fhd = frame[4];
        let single_segment = fhd & 0x20 != 0;
        let window = if single_segment { 0 } else { 1 };
        let dict = [0, 1, 2, 4][usize::from(fhd & 3)];
        let fcs = match fhd >> 6 {
            0 => usize::from(single_segment),
            1 => 2,
            2 => 4,
            _ => 8,
        };
        let block = 5 + window + dict + fcs;
        let header = u32::from_le_bytes([frame[block], frame[block + 1], frame[block + 2], 0]);
        let block_type = (header >> 1) & 3;
        (block_type, (block_type == 2).then(|| frame[block + 3] & 3))
    }

    #[test]
    fn zstd_blocks_skip_short_matches() {
        // The minimum match is set: our frame is what a level-1 context with
        // ZSTD_MIN_MATCH writes, and not what level 1 as is writes (it codes
        // 5-byte repeats around the tabs and short numbers as matches). No
        // size comparison: which is smaller may change with a zstd upgrade.
        let raw = sysbench_rows();
        let (ours, c) = compress(&raw, Compression::Zstd);
        assert_eq!(c, Compression::Zstd);
        let all = level_1_with(Some(ZSTD_MIN_MATCH), true, true)
            .compress(&raw)
            .unwrap();
        assert_eq!(ours, all, "min match {ZSTD_MIN_MATCH}");
        let plain = level_1_with(None, true, true).compress(&raw).unwrap();
        assert_ne!(ours, plain, "the minimum match was not applied");
        // Any reader decodes it: ours, a fresh context, a streaming one.
        assert_eq!(decompress(2, ours.clone(), "b", 0).unwrap(), raw);
        assert_eq!(zstd::bulk::decompress(&ours, raw.len()).unwrap(), raw);
        assert_eq!(zstd::stream::decode_all(&ours[..]).unwrap(), raw);
    }

    #[test]
    fn old_plain_level_1_blocks_still_decode() {
        // Files written before ZSTD_MIN_MATCH hold plain level-1 frames
        // (`zstd::bulk::compress(raw, 1)`): the reader decodes them as they
        // are, through a whole block with its trailer too, on a thread whose
        // context already decoded one of our frames.
        let raw = sysbench_rows();
        let (ours, _) = compress(&raw, Compression::Zstd);
        assert_eq!(decompress(2, ours, "b", 0).unwrap(), raw);
        for input in [raw.clone(), raw[..100].to_vec(), vec![b'x'; 70_000]] {
            let plain = zstd::bulk::compress(&input, 1).unwrap();
            assert_eq!(decompress(2, plain.clone(), "b", 0).unwrap(), input);
            let mut block = plain.clone();
            block.push(Compression::Zstd as u8);
            put_fixed32(
                &mut block,
                mask_crc(crc32c::crc32c_append(crc32c::crc32c(&plain), &[2])),
            );
            let h = BlockHandle {
                offset: 0,
                size: plain.len() as u64,
            };
            assert_eq!(decode_block(block, h, "b").unwrap(), input);
        }
    }

    #[test]
    fn zstd_blocks_step_faster_and_keep_huffman_literals() {
        // ZSTD_TARGET_LENGTH changes the frames (the match finder skips ahead
        // faster), while the literals stay Huffman-coded: zstd's fast strategy
        // with a target length stores literals raw unless
        // LiteralCompressionMode is forced on (random digits would then take
        // 8 bits each instead of about 3.5). Checked on the frame itself, the
        // first block's literals section header (RFC 8878 3.1.1.3.1), not on
        // sizes, which may move with a zstd upgrade.
        let raw = sysbench_rows();
        let (ours, _) = compress(&raw, Compression::Zstd);
        let unaccelerated = level_1_with(Some(ZSTD_MIN_MATCH), false, false)
            .compress(&raw)
            .unwrap();
        assert_ne!(
            ours, unaccelerated,
            "target length {ZSTD_TARGET_LENGTH} had no effect"
        );
        // A Compressed block with Compressed (Huffman-coded) literals.
        let huffman = (2, Some(2));
        assert_eq!(
            first_block_types(&ours),
            huffman,
            "our literals are not Huffman-coded"
        );
        assert_eq!(first_block_types(&unaccelerated), huffman);
        // The check tells them apart: with the target length alone (zstd
        // choosing the literals mode) they are not Huffman-coded.
        let plain_literals = level_1_with(Some(ZSTD_MIN_MATCH), true, false)
            .compress(&raw)
            .unwrap();
        assert_ne!(first_block_types(&plain_literals), huffman);
        // Only a loose size guard.
        assert!(
            ours.len() * 2 <= unaccelerated.len() * 3,
            "{} bytes vs {} without acceleration",
            ours.len(),
            unaccelerated.len()
        );
        assert_eq!(decompress(2, ours, "b", 0).unwrap(), raw);
    }
}
