//! The command-line tools end to end: strata-dbbench's db_bench-style
//! result lines and `--duration` semantics, and strata-tool's dumps of the
//! three file kinds (table, WAL, manifest), including a corrupted table.
use std::path::{Path, PathBuf};
use std::process::Command;

fn tmpdir(name: &str) -> PathBuf {
    testkit::unique_temp_path(&format!("tool-{name}"))
}

fn run(bin: &str, args: &[&str]) -> (bool, String, String) {
    let o = Command::new(bin).args(args).output().expect("run tool");
    (
        o.status.success(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn dbbench(args: &[&str]) -> String {
    let (ok, out, err) = run(env!("CARGO_BIN_EXE_strata-dbbench"), args);
    assert!(ok, "strata-dbbench {args:?} failed: {err}");
    out
}

fn tool(args: &[&str]) -> (bool, String, String) {
    run(env!("CARGO_BIN_EXE_strata-tool"), args)
}

fn files(dir: &Path, suffix: &str) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path().display().to_string())
        .filter(|p| p.ends_with(suffix) || p.contains(suffix))
        .collect();
    v.sort();
    v
}

/// (micros/op, ops/sec, operations) from a db_bench-style line.
fn result_line(out: &str, bench: &str) -> (f64, f64, u64) {
    let line = out
        .lines()
        .find(|l| l.starts_with(bench) && l.contains(" : "))
        .unwrap_or_else(|| panic!("no {bench} line in:\n{out}"));
    let w: Vec<&str> = line.split_whitespace().collect();
    assert_eq!((w[3], w[5]), ("micros/op", "ops/sec"), "{line}");
    let ops_pos = w.iter().position(|x| x.starts_with("operations")).unwrap();
    (
        w[2].parse().unwrap(),
        w[4].parse().unwrap(),
        w[ops_pos - 1].parse().unwrap(),
    )
}

#[test]
fn dbbench_lines_and_table_and_manifest_dumps() {
    let d = tmpdir("fill");
    let db = format!("--db={}", d.display());
    let out = dbbench(&[&db, "--num=2000", "--benchmarks=fillseq,flush", "--sync=0"]);
    let (micros, ops, n) = result_line(&out, "fillseq");
    assert_eq!(n, 2000);
    assert!(micros > 0.0 && ops > 0.0);
    let out = dbbench(&[
        &db,
        "--num=2000",
        "--use_existing_db=1",
        "--benchmarks=readrandom",
        "--reads=500",
    ]);
    assert!(out.contains("(500 of 500 found)"), "{out}");

    let sst = files(&d, ".sst");
    assert_eq!(sst.len(), 1, "{sst:?}");
    let (ok, out, err) = tool(&["sst", &sst[0]]);
    assert!(ok, "{err}");
    assert!(out.contains("num_entries: 2000"), "{out}");
    let entries = out.lines().filter(|l| l.contains(" Value => ")).count();
    assert_eq!(entries, 2000);

    let man = files(&d, "MANIFEST-");
    let (ok, out, err) = tool(&["manifest", &man[0]]);
    assert!(ok, "{err}");
    assert!(out.contains("num_entries: 2000"), "{out}");
    assert!(out.lines().all(|l| l.starts_with('@')), "{out}");

    // A flipped byte inside the table: a corruption error naming the file,
    // never a dump of wrong entries.
    let mut bytes = std::fs::read(&sst[0]).unwrap();
    let mid = bytes.len() / 3;
    bytes[mid] ^= 0x40;
    std::fs::write(&sst[0], bytes).unwrap();
    let (ok, _, err) = tool(&["sst", &sst[0]]);
    assert!(!ok, "corrupted table dumped without error");
    let name = Path::new(&sst[0])
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    assert!(
        err.to_lowercase().contains("corrupt") && err.contains(&name),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn wal_dump_shows_every_batch() {
    let d = tmpdir("wal");
    {
        let db = lsm::Db::open(&d, lsm::Options::default()).unwrap();
        for i in 0..10u32 {
            db.put(format!("key{i:02}").as_bytes(), b"value").unwrap();
        }
        db.delete(b"key03").unwrap();
        // Dropped without close: the memtable is not flushed, the WAL keeps it.
    }
    let logs: Vec<String> = files(&d, ".log")
        .into_iter()
        .filter(|p| std::fs::metadata(p).map(|m| m.len() > 0).unwrap_or(false))
        .collect();
    assert_eq!(logs.len(), 1, "{logs:?}");
    let (ok, out, err) = tool(&["wal", &logs[0]]);
    assert!(ok, "{err}");
    assert_eq!(
        out.lines().filter(|l| l.starts_with('@')).count(),
        11,
        "{out}"
    );
    assert!(out.contains("key07 => value"), "{out}");
    assert!(
        out.lines()
            .any(|l| l.contains("Delete") && l.contains("key03")),
        "{out}"
    );
    let (ok, _, err) = tool(&["nope", &logs[0]]);
    assert!(!ok && err.contains("unknown command"), "{err}");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn duration_ends_a_benchmark_by_the_clock_alone() {
    // db_bench's fillsync does --num synced writes per thread over the first
    // num/1000 keys ("(N ops)" names that key space), unless --duration is
    // given: then only the clock stops it (RocksDB's `Duration`).
    let d = tmpdir("dur");
    let db = format!("--db={}", d.display());
    let out = dbbench(&[
        &db,
        "--num=1000",
        "--threads=2",
        "--benchmarks=fillsync,readseq",
    ]);
    assert_eq!(result_line(&out, "fillsync").2, 2000);
    assert!(out.contains("(1 ops)"), "{out}");
    // One key (0), read by each of the two readseq threads.
    assert_eq!(result_line(&out, "readseq").2, 2);
    let _ = std::fs::remove_dir_all(&d);
    let out = dbbench(&[
        &db,
        "--num=1000000",
        "--threads=2",
        "--duration=1",
        "--benchmarks=fillsync",
    ]);
    let (_, _, n) = result_line(&out, "fillsync");
    assert!(
        n > 2 && n < 2_000_000,
        "--duration=1 stopped after {n} operations"
    );
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn chained_run_finds_what_db_bench_finds() {
    // `db_bench --num=1000 --seed=42 --key_size=16 --value_size=100
    // --benchmarks=fillseq,fillrandom,overwrite,readrandom,seekrandom --seek_nexts=10`
    // (RocksDB 7.8.3) printed "(874 of 1000 found)" for readrandom and "(876 of 1000
    // found)" for seekrandom, and `ldb scan` listed 872 keys: fillrandom starts a fresh
    // database and each benchmark's thread draws with its own seed.
    let d = tmpdir("chain");
    let db = format!("--db={}", d.display());
    let out = dbbench(&[
        &db,
        "--num=1000",
        "--seed=42",
        "--seek_nexts=10",
        "--benchmarks=fillseq,fillrandom,overwrite,readrandom,seekrandom,readseq",
    ]);
    assert!(
        out.contains("readrandom") && out.contains("(874 of 1000 found)"),
        "{out}"
    );
    assert!(out.contains("(876 of 1000 found)"), "{out}");
    assert_eq!(result_line(&out, "readseq").2, 872, "{out}");
    // --use_existing_db skips the fills, as db_bench does.
    let out = dbbench(&[
        &db,
        "--num=1000",
        "--use_existing_db=1",
        "--benchmarks=fillrandom,readseq",
    ]);
    assert!(out.contains("fillrandom   : skipped"), "{out}");
    assert_eq!(result_line(&out, "readseq").2, 872, "{out}");
    let _ = std::fs::remove_dir_all(&d);
}
