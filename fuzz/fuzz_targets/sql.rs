//! The SQL path (parse -> bind -> plan -> execute) on arbitrary statement text against a small
//! schema in one instance (created on the first input, recreated when a statement dropped
//! it). Each input is split on NUL bytes into statements run by one session; any statement
//! may fail with an error, none may panic or overflow the stack.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sql::result::Collect;
use sql::{Instance, InstanceOptions};
use std::sync::{Arc, OnceLock};

const SCHEMA: &str = include_str!("../../crates/sql/tests/fuzz_schema.sql");

const DATA: &[&str] = &[
    "INSERT IGNORE INTO t1 VALUES (1, 'abc', 1.50, '2020-01-01', 0.5, 7, 'text'), \
     (2, NULL, NULL, NULL, NULL, NULL, NULL), (3, 'ABC', -3.25, '1999-12-31', -1e10, 0, '')",
    "INSERT IGNORE INTO t2 (y, z, w, v) VALUES (1, 'z', '2020-01-01 10:00:00', X'00ff'), (NULL, '', NULL, NULL)",
];

fn instance() -> &'static Arc<Instance> {
    static I: OnceLock<Arc<Instance>> = OnceLock::new();
    I.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("strata-fuzz-sql-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let opts = InstanceOptions {
            sync_on_commit: false,
            block_cache_size: 4 << 20,
            write_buffer_size: 1 << 20,
            ..Default::default()
        };
        Instance::open(&dir, &opts).expect("open the fuzz instance")
    })
}

fuzz_target!(|data: &[u8]| {
    // On a thread with a server connection thread's stack.
    std::thread::scope(|sc| {
        let h = std::thread::Builder::new()
            .stack_size(sql::SESSION_STACK_SIZE)
            .spawn_scoped(sc, || run(data))
            .expect("spawn");
        if let Err(p) = h.join() {
            std::panic::resume_unwind(p);
        }
    });
});

fn run(data: &[u8]) {
    let inst = instance();
    let mut s = inst.session(1, "root", None);
    for st in SCHEMA.split(";\n").chain(DATA.iter().copied()) {
        let _ = s.query(st, &mut Collect::default());
    }
    for part in data.split(|b| *b == 0).take(8) {
        let text = String::from_utf8_lossy(part);
        let _ = s.query(&text, &mut Collect::default());
    }
    let _ = s.query("ROLLBACK", &mut Collect::default());
}
