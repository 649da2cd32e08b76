//! Many writer and reader threads with snapshots while flushes and
//! compactions run underneath: every snapshot sees, for each writer, an
//! exact prefix of its writes, and sees the same thing every time it looks.
mod common;

use common::{seed, temp_dir, Rng};
use lsm::{CfOptions, Db, Options, ReadOptions, WriteBatch, WriteOptions};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

fn count_prefixes(db: &Db, snap: &lsm::Snapshot, writers: usize) -> Vec<u64> {
    let mut it = db
        .iter(ReadOptions {
            snapshot: Some(snap.clone()),
            ..Default::default()
        })
        .unwrap();
    it.seek_to_first();
    let mut seen = vec![0u64; writers];
    while it.valid() {
        let k = std::str::from_utf8(it.key()).unwrap();
        let (t, i) = k.split_once('-').unwrap();
        let (t, i): (usize, u64) = (t[1..].parse().unwrap(), i.parse().unwrap());
        assert_eq!(i, seen[t], "writer {t}: hole at {} (saw {i})", seen[t]);
        assert_eq!(it.value(), format!("{t}:{i}").as_bytes());
        seen[t] += 1;
        it.next();
    }
    it.status().unwrap();
    seen
}

#[test]
fn readers_and_writers_with_snapshots_under_compaction() {
    let s = seed("concurrency");
    let dir = temp_dir("concurrency");
    let opts = Options {
        max_background_jobs: 3,
        default_cf: CfOptions {
            write_buffer_size: 32 << 10,
            target_file_size: 32 << 10,
            max_bytes_for_level_base: 128 << 10,
            level0_compaction_trigger: 2,
            ..CfOptions::default()
        },
        ..Options::default()
    };
    let db = Db::open(&dir, opts).unwrap();
    let writers = 4;
    let stop = Arc::new(AtomicBool::new(false));
    let mut hs = Vec::new();
    for t in 0..writers {
        let db = db.clone();
        hs.push(std::thread::spawn(move || {
            for i in 0..3000u64 {
                let mut b = WriteBatch::new();
                b.put(
                    format!("w{t}-{i:08}").as_bytes(),
                    format!("{t}:{i}").as_bytes(),
                );
                db.write(
                    WriteOptions {
                        sync: i % 50 == 0,
                        disable_wal: false,
                    },
                    b,
                )
                .unwrap();
            }
        }));
    }
    let mut readers = Vec::new();
    for rno in 0..3 {
        let (db, stop) = (db.clone(), stop.clone());
        readers.push(std::thread::spawn(move || {
            let mut r = Rng::new(s + rno);
            let mut checks = 0;
            while !stop.load(Ordering::Relaxed) {
                let snap = db.snapshot();
                let a = count_prefixes(&db, &snap, writers);
                if r.chance(30) {
                    std::thread::sleep(std::time::Duration::from_millis(2));
                }
                let b = count_prefixes(&db, &snap, writers);
                assert_eq!(a, b, "snapshot changed under the reader");
                // Point reads agree with the snapshot's scan.
                let t = r.below(writers as u64) as usize;
                if a[t] > 0 {
                    let i = r.below(a[t]);
                    let ro = ReadOptions {
                        snapshot: Some(snap.clone()),
                        ..Default::default()
                    };
                    let v = db
                        .get_cf(&ro, lsm::DEFAULT_CF, format!("w{t}-{i:08}").as_bytes())
                        .unwrap();
                    assert_eq!(v.as_deref(), Some(format!("{t}:{i}").as_bytes()));
                }
                checks += 1;
            }
            checks
        }));
    }
    for h in hs {
        h.join().unwrap();
    }
    stop.store(true, Ordering::Relaxed);
    let checks: usize = readers.into_iter().map(|h| h.join().unwrap()).sum();
    db.wait_for_compactions().unwrap();
    let final_counts = count_prefixes(&db, &db.snapshot(), writers);
    assert_eq!(final_counts, vec![3000; writers]);
    let st = db.stats();
    eprintln!("concurrency: {checks} snapshot checks, {} flushes, {} compactions, {} write groups for {} writes",
        st.flushes, st.compactions, st.write_groups, st.user_writes);
    assert!(st.flushes > 0 && checks > 0);
    assert!(
        st.compactions > 0,
        "no compaction ran under the readers ({} trivial moves)",
        st.trivial_moves
    );
    db.close().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}
