//! Packet framing: the 3-byte length + 1-byte sequence id header, splitting payloads of
//! 0xFFFFFF bytes or more into several packets on write and reassembling them on read,
//! buffered input, and the single output buffer that responses are appended to.

use std::io::{ErrorKind, Read, Write};

use crate::error::{Error, Result};

/// Largest payload one physical packet can carry.
pub const MAX_PAYLOAD: usize = 0xFF_FFFF;
/// Default cap on one logical client packet (MySQL's `max_allowed_packet` default).
pub const DEFAULT_MAX_PACKET: usize = 64 << 20;
/// Output is written to the socket early once this much is buffered.
const AUTO_FLUSH_BYTES: usize = 1 << 20;
const READ_BUF: usize = 16 << 10;
/// Payload buffers grow by at most this much per read.
const GROW_STEP: usize = 1 << 20;

/// A byte stream carrying MySQL packets, with buffered input and output.
#[derive(Debug)]
pub struct PacketStream<S> {
    stream: S,
    rbuf: Box<[u8]>,
    rpos: usize,
    rend: usize,
    out: Vec<u8>,
    /// Start of the packet being built in `out` (its header placeholder), if any.
    open: Option<usize>,
    seq: u8,
    max_packet: usize,
}

impl<S: Read + Write> PacketStream<S> {
    pub fn new(stream: S) -> Self {
        PacketStream {
            stream,
            rbuf: vec![0u8; READ_BUF].into_boxed_slice(),
            rpos: 0,
            rend: 0,
            out: Vec::with_capacity(16 << 10),
            open: None,
            seq: 0,
            max_packet: DEFAULT_MAX_PACKET,
        }
    }

    pub fn get_ref(&self) -> &S {
        &self.stream
    }

    pub fn get_mut(&mut self) -> &mut S {
        &mut self.stream
    }

    pub fn into_inner(self) -> S {
        self.stream
    }

    /// Takes the input read ahead of the last packet (bytes the client sent after it),
    /// leaving the read buffer empty: after an SSLRequest these are the start of the
    /// client's TLS handshake, which the TLS layer must see first.
    pub fn take_read_ahead(&mut self) -> Vec<u8> {
        let v = self.rbuf[self.rpos..self.rend].to_vec();
        self.rpos = 0;
        self.rend = 0;
        v
    }

    pub fn set_max_packet(&mut self, n: usize) {
        self.max_packet = n.max(1024);
    }

    pub fn max_packet(&self) -> usize {
        self.max_packet
    }

    /// Sequence id the next packet (read or written) is expected to carry.
    pub fn seq(&self) -> u8 {
        self.seq
    }

    pub fn reset_seq(&mut self) {
        self.seq = 0;
    }

    /// Fills `dst` completely from the buffered stream.
    fn read_exact_buf(&mut self, mut dst: &mut [u8]) -> Result<()> {
        while !dst.is_empty() {
            if self.rpos < self.rend {
                let n = dst.len().min(self.rend - self.rpos);
                dst[..n].copy_from_slice(&self.rbuf[self.rpos..self.rpos + n]);
                self.rpos += n;
                dst = &mut dst[n..];
                continue;
            }
            // Large remainders bypass the buffer.
            let n = if dst.len() >= self.rbuf.len() {
                read_some(&mut self.stream, dst)?
            } else {
                let n = read_some(&mut self.stream, &mut self.rbuf)?;
                self.rpos = 0;
                self.rend = n;
                0
            };
            dst = &mut dst[n..];
        }
        Ok(())
    }

    /// Reads one logical packet (reassembling split packets). `Err(Io(UnexpectedEof))`
    /// when the peer closed; `Err(PacketTooLarge)` when it exceeds the max packet size
    /// (the rest of it is left unread: the connection must be closed).
    pub fn read_packet(&mut self) -> Result<Vec<u8>> {
        let mut payload = Vec::new();
        loop {
            let mut hdr = [0u8; 4];
            self.read_exact_buf(&mut hdr)?;
            let len = usize::from(hdr[0]) | usize::from(hdr[1]) << 8 | usize::from(hdr[2]) << 16;
            self.seq = hdr[3].wrapping_add(1);
            let total = payload.len() + len;
            if total > self.max_packet {
                return Err(Error::PacketTooLarge(total));
            }
            // Grow as bytes arrive, so a header alone cannot make us allocate 16 MiB.
            while payload.len() < total {
                let start = payload.len();
                let step = (total - start).min(GROW_STEP);
                payload.resize(start + step, 0);
                self.read_exact_buf(&mut payload[start..])?;
            }
            if len < MAX_PAYLOAD {
                return Ok(payload);
            }
        }
    }

    /// Starts a packet in the output buffer; the payload is appended to [`Self::out`]
    /// and the packet closed by [`Self::end_packet`]. An unclosed packet is discarded
    /// by the next `begin_packet`.
    pub fn begin_packet(&mut self) -> &mut Vec<u8> {
        if let Some(start) = self.open.take() {
            self.out.truncate(start);
        }
        self.open = Some(self.out.len());
        self.out.extend_from_slice(&[0, 0, 0, 0]);
        &mut self.out
    }

    /// The output buffer (only meaningful between `begin_packet` and `end_packet`).
    pub fn out(&mut self) -> &mut Vec<u8> {
        &mut self.out
    }

    /// Drops the packet being built.
    pub fn abandon_packet(&mut self) {
        if let Some(start) = self.open.take() {
            self.out.truncate(start);
        }
    }

    /// Length of the open packet's payload so far.
    pub fn open_len(&self) -> usize {
        match self.open {
            Some(start) => self.out.len() - start - 4,
            None => 0,
        }
    }

    /// Closes the packet started by `begin_packet`: writes its header, splitting it into
    /// several packets when it is 0xFFFFFF bytes or longer.
    pub fn end_packet(&mut self) -> Result<()> {
        let Some(start) = self.open.take() else {
            return Err(Error::Misuse("end_packet without begin_packet".into()));
        };
        let len = self.out.len() - start - 4;
        if len < MAX_PAYLOAD {
            let h = (len as u32).to_le_bytes();
            self.out[start..start + 4].copy_from_slice(&[h[0], h[1], h[2], self.seq]);
            self.seq = self.seq.wrapping_add(1);
        } else {
            let payload = self.out.split_off(start + 4);
            self.out.truncate(start);
            self.out
                .reserve(payload.len() + 4 * (payload.len() / MAX_PAYLOAD + 1));
            let mut chunks = payload.chunks(MAX_PAYLOAD);
            for chunk in chunks.by_ref() {
                let h = (chunk.len() as u32).to_le_bytes();
                self.out.extend_from_slice(&[h[0], h[1], h[2], self.seq]);
                self.out.extend_from_slice(chunk);
                self.seq = self.seq.wrapping_add(1);
            }
            if payload.len().is_multiple_of(MAX_PAYLOAD) {
                self.out.extend_from_slice(&[0, 0, 0, self.seq]);
                self.seq = self.seq.wrapping_add(1);
            }
        }
        if self.out.len() >= AUTO_FLUSH_BYTES {
            self.write_out()?;
        }
        Ok(())
    }

    /// Appends one complete packet.
    pub fn write_packet(&mut self, payload: &[u8]) -> Result<()> {
        self.begin_packet().extend_from_slice(payload);
        self.end_packet()
    }

    fn write_out(&mut self) -> Result<()> {
        if !self.out.is_empty() {
            self.stream.write_all(&self.out)?;
            self.out.clear();
        }
        Ok(())
    }

    /// Writes everything buffered to the stream (one `write_all`) and flushes it.
    pub fn flush(&mut self) -> Result<()> {
        self.abandon_packet();
        self.write_out()?;
        self.stream.flush()?;
        Ok(())
    }

    /// Bytes buffered and not yet written.
    pub fn pending(&self) -> usize {
        self.out.len()
    }
}

fn read_some<S: Read>(s: &mut S, buf: &mut [u8]) -> Result<usize> {
    loop {
        match s.read(buf) {
            Ok(0) => {
                return Err(Error::Io(std::io::Error::new(
                    ErrorKind::UnexpectedEof,
                    "connection closed by peer",
                )))
            }
            Ok(n) => return Ok(n),
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) => return Err(Error::Io(e)),
        }
    }
}
