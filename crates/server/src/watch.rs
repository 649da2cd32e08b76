//! The server's side of the session registry (`sql::procs`): a
//! `ClientHook` on each connection's socket (KILL CONNECTION shuts it down;
//! `gone` peeks for the client's end of stream without blocking, `spoke`
//! for anything it sent), and the
//! watcher thread that stops the statement of a client that went away
//! mid-statement (checked every 200 ms for sessions running a statement).
use sql::procs::ClientHook;
use std::mem::MaybeUninit;
use std::net::{Shutdown, TcpStream};
use std::os::unix::net::UnixStream;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

/// A second handle on a client socket.
pub enum SocketHook {
    Tcp(TcpStream),
    Unix(UnixStream),
}

impl ClientHook for SocketHook {
    fn close(&self) {
        let _ = match self {
            SocketHook::Tcp(s) => s.shutdown(Shutdown::Both),
            SocketHook::Unix(s) => s.shutdown(Shutdown::Both),
        };
    }

    fn gone(&self) -> bool {
        // End of stream: the client closed its side (bytes to read are
        // pipelined commands: still there).
        self.peek() == Some(0)
    }

    fn spoke(&self) -> bool {
        self.peek().is_some()
    }
}

impl SocketHook {
    /// Peeks at the socket without blocking: Some(0) at end of stream (or
    /// a failed socket), Some(1) with bytes to read, None with nothing.
    fn peek(&self) -> Option<usize> {
        let r = match self {
            SocketHook::Tcp(s) => socket2::SockRef::from(s),
            SocketHook::Unix(s) => socket2::SockRef::from(s),
        };
        let mut buf = [MaybeUninit::<u8>::uninit(); 1];
        match r.recv_with_flags(&mut buf, libc::MSG_PEEK | libc::MSG_DONTWAIT) {
            Ok(n) => Some(n),
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::Interrupted
                ) =>
            {
                None
            }
            Err(_) => Some(0),
        }
    }
}

/// Stops the statements of clients that went away, until shutdown.
pub fn watch(sh: Arc<crate::Shared>) {
    while !sh.stopping.load(Ordering::SeqCst) {
        std::thread::sleep(Duration::from_millis(200));
        for p in sh.inst.procs.all() {
            if p.busy() && p.client_gone() {
                p.kill(true);
            }
        }
    }
}
