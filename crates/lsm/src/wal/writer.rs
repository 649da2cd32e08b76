//! Appends framed records to a log file.
use super::{BLOCK_SIZE, FIRST, FULL, HEADER_SIZE, LAST, MIDDLE};
use crate::coding::mask_crc;
use crate::error::Result;
use crate::vfs::WritableFile;

/// Writes records; one writer per file, used by one thread at a time.
pub struct LogWriter {
    file: Box<dyn WritableFile>,
    block_offset: usize,
}

impl LogWriter {
    /// Starts writing at the beginning of `file`.
    pub fn new(file: Box<dyn WritableFile>) -> LogWriter {
        LogWriter {
            file,
            block_offset: 0,
        }
    }

    /// Appends one logical record (buffered until `flush` or `sync`).
    pub fn add_record(&mut self, mut data: &[u8]) -> Result<()> {
        let mut begin = true;
        loop {
            let left = BLOCK_SIZE - self.block_offset;
            if left < HEADER_SIZE {
                if left > 0 {
                    self.file.append(&[0u8; HEADER_SIZE][..left])?;
                }
                self.block_offset = 0;
            }
            let avail = BLOCK_SIZE - self.block_offset - HEADER_SIZE;
            let n = data.len().min(avail);
            let end = n == data.len();
            let typ = match (begin, end) {
                (true, true) => FULL,
                (true, false) => FIRST,
                (false, true) => LAST,
                (false, false) => MIDDLE,
            };
            self.emit(typ, &data[..n])?;
            data = &data[n..];
            begin = false;
            if end {
                return Ok(());
            }
        }
    }

    fn emit(&mut self, typ: u8, payload: &[u8]) -> Result<()> {
        let mut crc = crc32c::crc32c(&[typ]);
        crc = crc32c::crc32c_append(crc, payload);
        let mut h = [0u8; HEADER_SIZE];
        h[..4].copy_from_slice(&mask_crc(crc).to_le_bytes());
        h[4..6].copy_from_slice(&(payload.len() as u16).to_le_bytes());
        h[6] = typ;
        self.file.append(&h)?;
        self.file.append(payload)?;
        self.block_offset += HEADER_SIZE + payload.len();
        Ok(())
    }

    /// Hands buffered bytes to the OS (survives a process crash, not a power loss).
    pub fn flush(&mut self) -> Result<()> {
        self.file.flush()
    }

    /// Makes every record durable.
    pub fn sync(&mut self) -> Result<()> {
        self.file.sync()
    }

    /// Bytes written to the file so far.
    pub fn size(&self) -> u64 {
        self.file.size()
    }
}
