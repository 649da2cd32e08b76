//! strata-tool: dumps Strata's on-disk files.
//!
//!   strata-tool sst FILE        properties, range tombstones and every entry
//!   strata-tool wal FILE        every write batch (sequence, ops)
//!   strata-tool manifest FILE   every version edit
use lsm::key::parse_internal_key;
use lsm::sstable::Table;
use lsm::version::VersionEdit;
use lsm::vfs::{Fs, OsFs};
use lsm::wal::{LogReader, TailPolicy};
use lsm::{Comparator, WriteBatch};
use std::path::Path;
use std::sync::Arc;

/// `println!` that returns an error instead of panicking when stdout is
/// closed (`strata-tool sst F | head`).
macro_rules! out {
    ($($t:tt)*) => {{
        use std::io::Write;
        writeln!(std::io::stdout().lock(), $($t)*).map_err(|e| format!("stdout: {e}"))?;
    }};
}

fn show(b: &[u8]) -> String {
    if b.iter().all(|c| c.is_ascii_graphic() || *c == b' ') {
        String::from_utf8_lossy(b).into_owned()
    } else {
        b.iter().map(|c| format!("{c:02x}")).collect()
    }
}

fn run() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(cmd), Some(file)) = (args.first(), args.get(1)) else {
        return Err("usage: strata-tool sst|wal|manifest FILE".into());
    };
    let fs = OsFs;
    let path = Path::new(file);
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    match cmd.as_str() {
        "sst" => {
            let f = fs.open(path).map_err(|e| e.to_string())?;
            let stats = Arc::new(lsm::stats::Stats::default());
            let t = Arc::new(
                Table::open(f, &name, Comparator::Bytewise, None, stats, None, true)
                    .map_err(|e| e.to_string())?,
            );
            let props = t.properties();
            for (k, v) in props.pairs() {
                out!("{k}: {v}");
            }
            for (k, ikey) in [
                ("smallest_key", &props.smallest_key),
                ("largest_key", &props.largest_key),
            ] {
                match parse_internal_key(ikey) {
                    Some(p) => out!("{k}: {} @{} {:?}", show(p.user_key), p.seq, p.kind),
                    None => out!("{k}: (none)"),
                }
            }
            for r in t.range_tombstones() {
                out!(
                    "range tombstone [{}, {}) @{}",
                    show(&r.start),
                    show(&r.end),
                    r.seq
                );
            }
            let mut it = t.iter(false);
            use lsm::iter::InternalIterator;
            it.seek_to_first();
            while it.valid() {
                match parse_internal_key(it.key()) {
                    Some(p) => out!(
                        "{} @{} {:?} => {}",
                        show(p.user_key),
                        p.seq,
                        p.kind,
                        show(it.value())
                    ),
                    None => out!("(malformed key {})", show(it.key())),
                }
                it.next();
            }
            it.status().map_err(|e| e.to_string())
        }
        "wal" | "manifest" => {
            let data = fs.read_all(path).map_err(|e| e.to_string())?;
            let mut r = LogReader::new(data, &name, TailPolicy::TolerateTornTail);
            while let Some(rec) = r.next_record().map_err(|e| e.to_string())? {
                let off = r.last_record_offset;
                if cmd == "wal" {
                    let b = WriteBatch::from_data(rec).map_err(|e| e.to_string())?;
                    out!("@{off} seq {} count {}", b.seq(), b.count());
                    for op in b.ops().map_err(|e| e.to_string())? {
                        out!(
                            "  cf {} {:?} {} => {}",
                            op.cf,
                            op.kind,
                            show(op.key),
                            show(op.value)
                        );
                    }
                } else {
                    out!(
                        "@{off} {:?}",
                        VersionEdit::decode(&rec).map_err(|e| e.to_string())?
                    );
                }
            }
            if let Some(t) = r.dropped_tail_at {
                out!("(torn tail dropped at offset {t})");
            }
            Ok(())
        }
        other => Err(format!("unknown command {other}; use sst, wal or manifest")),
    }
}

fn main() {
    if let Err(e) = run() {
        if e.contains("Broken pipe") {
            return; // the reader went away (`| head`): not an error
        }
        eprintln!("strata-tool: {e}");
        std::process::exit(1);
    }
}
