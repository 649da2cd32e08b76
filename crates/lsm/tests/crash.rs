//! Crash test against the real file system: a child process (this test
//! binary, re-run with `STRATA_CRASH_CHILD=dir`) writes synced batches and
//! prints each acknowledged batch number; the parent kills it with SIGKILL
//! at a random moment, reopens the database and checks that every
//! acknowledged batch is present, that no batch is half applied, and that
//! what was recovered is a prefix of the write history (no hole).
//! `CRASH_CYCLES` (default 50) sets the number of kill/recover cycles.
mod common;

use common::{seed, temp_dir, Rng};
use lsm::{CfOptions, Db, Options, WriteBatch, WriteOptions};
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn opts() -> Options {
    Options {
        default_cf: CfOptions {
            write_buffer_size: 64 << 10,
            target_file_size: 64 << 10,
            max_bytes_for_level_base: 256 << 10,
            level0_compaction_trigger: 2,
            ..CfOptions::default()
        },
        ..Options::default()
    }
}

fn batch_keys(n: u64) -> [Vec<u8>; 3] {
    [
        format!("a{n:010}").into_bytes(),
        format!("b{n:010}").into_bytes(),
        format!("c{n:010}").into_bytes(),
    ]
}

/// The child: continues the history from the last batch present.
#[test]
fn crash_child_writer() {
    let Ok(dir) = std::env::var("STRATA_CRASH_CHILD") else {
        return;
    };
    let db = Db::open(&dir, opts()).unwrap();
    let mut n = db
        .get(b"next")
        .unwrap()
        .map(|v| u64::from_le_bytes(v.try_into().unwrap()))
        .unwrap_or(0);
    let out = std::io::stdout();
    loop {
        let mut b = WriteBatch::new();
        for k in batch_keys(n) {
            b.put(&k, &n.to_le_bytes().repeat(8));
        }
        b.put(b"next", &(n + 1).to_le_bytes());
        db.write(
            WriteOptions {
                sync: n % 4 != 3,
                disable_wal: false,
            },
            b,
        )
        .unwrap();
        if n % 4 != 3 {
            use std::io::Write;
            let mut o = out.lock();
            writeln!(o, "{n}").unwrap();
            o.flush().unwrap();
        }
        n += 1;
    }
}

#[test]
fn crash_kill9_recovers_a_prefix_with_every_acknowledged_write() {
    let s = seed("crash_kill9");
    let mut r = Rng::new(s);
    let cycles: usize = std::env::var("CRASH_CYCLES")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(50);
    let dir = temp_dir("crash");
    let exe = std::env::current_exe().unwrap();
    let mut acked: i64 = -1;
    for cycle in 0..cycles {
        let mut child = Command::new(&exe)
            .args([
                "--exact",
                "crash_child_writer",
                "--nocapture",
                "--test-threads=1",
            ])
            .env("STRATA_CRASH_CHILD", &dir)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let reader = std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Ok(n) = line.trim().parse::<i64>() {
                    let _ = tx.send(n);
                }
            }
        });
        let run_for = Duration::from_millis(50 + r.below(400));
        let t = Instant::now();
        while t.elapsed() < run_for {
            while let Ok(n) = rx.try_recv() {
                acked = acked.max(n);
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        reader.join().unwrap();
        while let Ok(n) = rx.try_recv() {
            acked = acked.max(n);
        }
        // Recover and check.
        let db = Db::open(&dir, opts()).unwrap();
        let next = db
            .get(b"next")
            .unwrap()
            .map(|v| u64::from_le_bytes(v.try_into().unwrap()))
            .unwrap_or(0) as i64;
        assert!(
            next > acked,
            "seed {s} cycle {cycle}: acknowledged batch {acked} lost (recovered up to {})",
            next - 1
        );
        // Every batch below `next` is whole; nothing at or above it exists.
        let mut it = db.iter(Default::default()).unwrap();
        it.seek_to_first();
        let mut counts = [0i64; 3];
        while it.valid() {
            let k = it.key();
            if k != b"next" {
                let i = (k[0] - b'a') as usize;
                let n: i64 = std::str::from_utf8(&k[1..]).unwrap().parse().unwrap();
                assert_eq!(
                    n,
                    counts[i],
                    "seed {s} cycle {cycle}: hole before key {}",
                    String::from_utf8_lossy(k)
                );
                assert_eq!(it.value(), (n as u64).to_le_bytes().repeat(8).as_slice());
                counts[i] += 1;
            }
            it.next();
        }
        it.status().unwrap();
        assert_eq!(
            counts, [next; 3],
            "seed {s} cycle {cycle}: batches not whole"
        );
        db.close().unwrap();
    }
    eprintln!(
        "crash test: {cycles} cycles, {} batches acknowledged",
        acked + 1
    );
    assert!(acked > 0, "the child never acknowledged a write");
    let _ = std::fs::remove_dir_all(&dir);
}
