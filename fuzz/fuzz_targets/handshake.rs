//! A server-side connection on an arbitrary byte stream: the handshake (greeting, response,
//! plugin switch, authentication against one account with and one without a password), then
//! command packets until the stream ends or a read fails. Nothing may panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::io::{Cursor, Read, Write};

struct Mem {
    input: Cursor<Vec<u8>>,
}

impl Read for Mem {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.input.read(buf)
    }
}

impl Write for Mem {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fuzz_target!(|data: &[u8]| {
    let mut c = wire::Conn::new(
        Mem {
            input: Cursor::new(data.to_vec()),
        },
        1,
        "fuzz",
    );
    c.set_max_packet(1 << 20);
    let lookup = |u: &str| match u {
        "root" => Some(wire::Credentials::empty()),
        "user" => Some(wire::Credentials::from_password(b"pw")),
        _ => None,
    };
    if c.handshake(&lookup).is_ok() {
        for _ in 0..64 {
            if c.read_command().is_err() {
                break;
            }
        }
    }
});
