//! Row encoding: builders that write text-protocol rows ([`TextRow`]) and
//! binary-protocol rows ([`BinaryRow`], null bitmap with offset 2) straight into the
//! connection's output buffer, without per-value allocations.

use std::fmt::Display;
use std::io::{Read, Write};

use crate::codec::put_lenenc_bytes;
use crate::conn::Conn;
use crate::consts::ColumnType;
use crate::error::{Error, Result};

/// Formats `v` in decimal into the tail of `buf`, returning the digits.
fn fmt_u64(buf: &mut [u8; 20], mut v: u64) -> &[u8] {
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            return &buf[i..];
        }
    }
}

fn put_text_u64(out: &mut Vec<u8>, neg: bool, v: u64) {
    let mut buf = [0u8; 20];
    let digits = fmt_u64(&mut buf, v);
    out.push((digits.len() + usize::from(neg)) as u8);
    if neg {
        out.push(b'-');
    }
    out.extend_from_slice(digits);
}

/// Text form of a double: shortest round-trip digits, plain notation for magnitudes in
/// [1e-4, 1e15), otherwise exponent notation like MySQL (`1e20`, `1.5e-7`).
fn write_f64(w: &mut Vec<u8>, v: f64) {
    let a = v.abs();
    let _ = if a != 0.0 && !(1e-4..1e15).contains(&a) && a.is_finite() {
        write!(w, "{v:e}")
    } else {
        write!(w, "{v}")
    };
}

fn write_f32(w: &mut Vec<u8>, v: f32) {
    let a = v.abs();
    let _ = if a != 0.0 && !(1e-4..1e15).contains(&a) && a.is_finite() {
        write!(w, "{v:e}")
    } else {
        write!(w, "{v}")
    };
}

/// A text-protocol row being built (from [`Conn::text_row`]). Each `push_*` appends
/// one column; [`TextRow::finish`] closes the packet. Dropping it unfinished discards it.
pub struct TextRow<'a, S: Read + Write> {
    conn: &'a mut Conn<S>,
    done: bool,
}

impl<'a, S: Read + Write> TextRow<'a, S> {
    /// The output buffer, or `None` once the row is finished (later pushes are ignored).
    fn buf(&mut self) -> Option<&mut Vec<u8>> {
        if self.done {
            None
        } else {
            Some(self.conn.io.out())
        }
    }

    pub fn push_null(&mut self) -> &mut Self {
        if let Some(out) = self.buf() {
            out.push(0xFB);
        }
        self
    }

    pub fn push_bytes(&mut self, b: &[u8]) -> &mut Self {
        if let Some(out) = self.buf() {
            put_lenenc_bytes(out, b);
        }
        self
    }

    pub fn push_str(&mut self, s: &str) -> &mut Self {
        self.push_bytes(s.as_bytes())
    }

    pub fn push_i64(&mut self, v: i64) -> &mut Self {
        if let Some(out) = self.buf() {
            put_text_u64(out, v < 0, v.unsigned_abs());
        }
        self
    }

    pub fn push_u64(&mut self, v: u64) -> &mut Self {
        if let Some(out) = self.buf() {
            put_text_u64(out, false, v);
        }
        self
    }

    pub fn push_f64(&mut self, v: f64) -> &mut Self {
        let mut s = std::mem::take(&mut self.conn.scratch);
        s.clear();
        write_f64(&mut s, v);
        self.push_bytes(&s);
        self.conn.scratch = s;
        self
    }

    pub fn push_f32(&mut self, v: f32) -> &mut Self {
        let mut s = std::mem::take(&mut self.conn.scratch);
        s.clear();
        write_f32(&mut s, v);
        self.push_bytes(&s);
        self.conn.scratch = s;
        self
    }

    /// Any `Display` value (decimals, dates, ...), formatted into a reused buffer.
    pub fn push_display(&mut self, v: &dyn Display) -> &mut Self {
        let mut s = std::mem::take(&mut self.conn.scratch);
        s.clear();
        let _ = write!(s, "{v}");
        self.push_bytes(&s);
        self.conn.scratch = s;
        self
    }

    /// Closes the row packet.
    pub fn finish(mut self) -> Result<()> {
        if self.done {
            return Ok(());
        }
        self.done = true;
        self.conn.io.end_packet()
    }
}

impl<S: Read + Write> Drop for TextRow<'_, S> {
    fn drop(&mut self) {
        if !self.done {
            self.conn.io.abandon_packet();
        }
    }
}

/// A binary-protocol row being built (from [`Conn::binary_row`]). Values must be pushed
/// in column order, each encoded as its column definition's type says.
pub struct BinaryRow<'a, S: Read + Write> {
    conn: &'a mut Conn<S>,
    ncols: usize,
    col: usize,
    bitmap_at: usize,
    err: Option<String>,
    done: bool,
}

impl<'a, S: Read + Write> BinaryRow<'a, S> {
    fn next_col(&mut self) -> bool {
        if self.done {
            return false;
        }
        if self.col >= self.ncols {
            if self.err.is_none() {
                self.err = Some(format!("more than {} values pushed", self.ncols));
            }
            return false;
        }
        self.col += 1;
        true
    }

    pub fn push_null(&mut self) -> &mut Self {
        if self.next_col() {
            let bit = self.col - 1 + 2;
            let at = self.bitmap_at + bit / 8;
            self.conn.io.out()[at] |= 1 << (bit % 8);
        }
        self
    }

    fn push_fixed(&mut self, col_type: ColumnType, le: [u8; 8]) -> &mut Self {
        match col_type.fixed_width() {
            Some(w) if !matches!(col_type, ColumnType::Float | ColumnType::Double) => {
                if self.next_col() {
                    self.conn.io.out().extend_from_slice(&le[..w]);
                }
            }
            _ => {
                if self.err.is_none() && !self.done {
                    self.err = Some(format!("integer pushed for column type {col_type:?}"));
                }
            }
        }
        self
    }

    /// A signed integer, in the width of `col_type` (TINY 1, SHORT/YEAR 2,
    /// LONG/INT24 4, LONGLONG 8 bytes; the value is truncated to that width).
    pub fn push_i64(&mut self, col_type: ColumnType, v: i64) -> &mut Self {
        self.push_fixed(col_type, v.to_le_bytes())
    }

    /// An unsigned integer, in the width of `col_type`.
    pub fn push_u64(&mut self, col_type: ColumnType, v: u64) -> &mut Self {
        self.push_fixed(col_type, v.to_le_bytes())
    }

    /// A FLOAT column value.
    pub fn push_f32(&mut self, v: f32) -> &mut Self {
        if self.next_col() {
            self.conn.io.out().extend_from_slice(&v.to_le_bytes());
        }
        self
    }

    /// A DOUBLE column value.
    pub fn push_f64(&mut self, v: f64) -> &mut Self {
        if self.next_col() {
            self.conn.io.out().extend_from_slice(&v.to_le_bytes());
        }
        self
    }

    /// A length-encoded value: strings, DECIMAL text, blobs, JSON, bits.
    pub fn push_bytes(&mut self, b: &[u8]) -> &mut Self {
        if self.next_col() {
            put_lenenc_bytes(self.conn.io.out(), b);
        }
        self
    }

    pub fn push_str(&mut self, s: &str) -> &mut Self {
        self.push_bytes(s.as_bytes())
    }

    /// A length-encoded value formatted from `Display` (e.g. a decimal).
    pub fn push_display(&mut self, v: &dyn Display) -> &mut Self {
        let mut s = std::mem::take(&mut self.conn.scratch);
        s.clear();
        let _ = write!(s, "{v}");
        self.push_bytes(&s);
        self.conn.scratch = s;
        self
    }

    /// A DATE column value (4 bytes, or 0 for 0000-00-00).
    pub fn push_date(&mut self, year: u16, month: u8, day: u8) -> &mut Self {
        self.push_datetime(year, month, day, 0, 0, 0, 0)
    }

    /// A DATETIME/TIMESTAMP column value in the shortest of the 0/4/7/11-byte forms.
    #[allow(clippy::too_many_arguments)]
    pub fn push_datetime(
        &mut self,
        year: u16,
        month: u8,
        day: u8,
        hour: u8,
        minute: u8,
        second: u8,
        micro: u32,
    ) -> &mut Self {
        if !self.next_col() {
            return self;
        }
        let out = self.conn.io.out();
        let len: u8 = if micro != 0 {
            11
        } else if hour != 0 || minute != 0 || second != 0 {
            7
        } else if year != 0 || month != 0 || day != 0 {
            4
        } else {
            0
        };
        out.push(len);
        if len >= 4 {
            out.extend_from_slice(&year.to_le_bytes());
            out.extend_from_slice(&[month, day]);
        }
        if len >= 7 {
            out.extend_from_slice(&[hour, minute, second]);
        }
        if len == 11 {
            out.extend_from_slice(&micro.to_le_bytes());
        }
        self
    }

    /// A TIME column value (0, 8 or 12 bytes).
    pub fn push_time(
        &mut self,
        neg: bool,
        days: u32,
        hours: u8,
        minutes: u8,
        seconds: u8,
        micro: u32,
    ) -> &mut Self {
        if !self.next_col() {
            return self;
        }
        let out = self.conn.io.out();
        let zero = days == 0 && hours == 0 && minutes == 0 && seconds == 0 && micro == 0;
        if zero {
            out.push(0);
            return self;
        }
        out.push(if micro != 0 { 12 } else { 8 });
        out.push(u8::from(neg));
        out.extend_from_slice(&days.to_le_bytes());
        out.extend_from_slice(&[hours, minutes, seconds]);
        if micro != 0 {
            out.extend_from_slice(&micro.to_le_bytes());
        }
        self
    }

    /// Closes the row packet; `Err(Misuse)` (row discarded) if the values pushed do not
    /// match the column count or a value did not fit its type.
    pub fn finish(mut self) -> Result<()> {
        if self.done {
            return Ok(());
        }
        self.done = true;
        let err = self.err.take().or_else(|| {
            (self.col != self.ncols)
                .then(|| format!("{} values pushed for {} columns", self.col, self.ncols))
        });
        match err {
            Some(e) => {
                self.conn.io.abandon_packet();
                Err(Error::Misuse(e))
            }
            None => self.conn.io.end_packet(),
        }
    }
}

impl<S: Read + Write> Drop for BinaryRow<'_, S> {
    fn drop(&mut self) {
        if !self.done {
            self.conn.io.abandon_packet();
        }
    }
}

impl<S: Read + Write> Conn<S> {
    /// Starts a text-protocol row (COM_QUERY result sets).
    pub fn text_row(&mut self) -> TextRow<'_, S> {
        self.io.begin_packet();
        TextRow {
            conn: self,
            done: false,
        }
    }

    /// Starts a binary-protocol row of `ncols` values (COM_STMT_EXECUTE result sets).
    pub fn binary_row(&mut self, ncols: usize) -> BinaryRow<'_, S> {
        let out = self.io.begin_packet();
        out.push(0x00);
        let bitmap_at = out.len();
        out.resize(bitmap_at + (ncols + 7 + 2) / 8, 0);
        BinaryRow {
            conn: self,
            ncols,
            col: 0,
            bitmap_at,
            err: None,
            done: false,
        }
    }

    /// Convenience: one text row from optional byte strings (`None` = NULL).
    pub fn send_text_row(&mut self, values: &[Option<&[u8]>]) -> Result<()> {
        let mut r = self.text_row();
        for v in values {
            match v {
                Some(b) => r.push_bytes(b),
                None => r.push_null(),
            };
        }
        r.finish()
    }
}
