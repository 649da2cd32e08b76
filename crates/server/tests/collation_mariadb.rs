//! Strata's collation weights against MariaDB's (started by the test, as in
//! diff_mariadb.rs): every BMP character's WEIGHT_STRING (and a sample of the
//! supplementary planes) under general_ci, unicode_ci (UCA 4.0.0),
//! unicode_520_ci, uca1400_ai_ci and the latin1 collations must equal the weights
//! `rel::collation` uses; then random strings (seeded, `SEED=`; with TAB,
//! LF and other characters below a space, so PAD SPACE order) must rank
//! the same under ORDER BY / = (DENSE_RANK over the collation) and weigh
//! the same under WEIGHT_STRING. This proves the generated tables
//! (crates/rel/tools/gen_collation_tables.py) and the absence of
//! contractions. Without MariaDB the test is skipped, unless
//! `STRATA_DIFF_REQUIRE=1`.
#![allow(clippy::unwrap_used)]

mod common;

use common::maria::{MariaDb, MARIADBD};
use common::{hex, Rng};
use mysql::prelude::Queryable;
use mysql::Conn;
use rel::collation::Collation;

/// Strata's weights of `s` as MariaDB's WEIGHT_STRING writes them (two bytes
/// per weight; latin1 collations one byte).
fn strata_weights(c: Collation, s: &str) -> Vec<u8> {
    let mut w = Vec::new();
    c.weights(s.as_bytes(), &mut w);
    if c.charset() == "latin1" {
        return w.chunks(2).map(|p| p[p.len() - 1]).collect();
    }
    w
}

/// Compares each character's weights in `lo..=hi` (every `step`th).
fn check_chars(m: &mut Conn, c: Collation, lo: u32, hi: u32, step: u32) {
    let sql = if c.charset() == "latin1" {
        format!(
            "SELECT ORD(CONVERT(CHAR(seq USING latin1) USING utf32)), \
             WEIGHT_STRING(CHAR(seq USING latin1) COLLATE {}) FROM seq_0_to_255",
            c.name()
        )
    } else {
        format!(
            "SELECT seq, WEIGHT_STRING(CONVERT(CHAR(seq USING utf32) USING utf8mb4) COLLATE {}) \
             FROM seq_{lo}_to_{hi}_step_{step} WHERE seq NOT BETWEEN 55296 AND 57343",
            c.name()
        )
    };
    let rows: Vec<(u32, Vec<u8>)> = m.query(sql).unwrap();
    assert!(!rows.is_empty());
    let mut bad = Vec::new();
    for (cp, want) in rows {
        let ch = char::from_u32(cp).unwrap();
        if ch == ' ' && c.pad_space() {
            continue; // WEIGHT_STRING keeps it; PAD SPACE comparisons trim it
        }
        let got = strata_weights(c, &ch.to_string());
        if got != want {
            bad.push(format!(
                "U+{cp:04X}: MariaDB {} Strata {}",
                hex(&want),
                hex(&got)
            ));
        }
    }
    assert!(
        bad.is_empty(),
        "{}: {} characters differ, e.g. {:?}",
        c.name(),
        bad.len(),
        &bad[..bad.len().min(10)]
    );
}

/// A random character; now and then one that weighs below a space (TAB,
/// LF, other control characters: PAD SPACE sorts 'a\t' before 'a').
fn random_char(r: &mut Rng) -> char {
    const BELOW_SPACE: &[char] = &['\t', '\n', '\u{1}', '\u{1F}', '\r'];
    const SPECIAL: &[char] = &[
        'ß', 'ﬁ', 'æ', 'Æ', 'ǅ', 'ŉ', 'Å', 'å', 'ı', 'İ', '\u{200B}', '\u{00AD}', ' ', '_', '-',
        'ä', 'Ä', 's', 'S',
    ];
    loop {
        let cp = match r.below(10) {
            9 => BELOW_SPACE[r.below(BELOW_SPACE.len() as u64) as usize] as u32,
            0 | 1 => r.range(0x20, 0x7E) as u32,
            2 => r.range(0xA0, 0x24F) as u32,
            3 => r.range(0x300, 0x36F) as u32,
            4 => r.range(0x370, 0x52F) as u32,
            5 => r.range(0x4E00, 0x4E40) as u32,
            6 => r.range(0xA0, 0xFFFD) as u32,
            7 => r.range(0x10000, 0x10FFFF) as u32,
            _ => SPECIAL[r.below(SPECIAL.len() as u64) as usize] as u32,
        };
        match char::from_u32(cp) {
            Some(c) if !c.is_control() || BELOW_SPACE.contains(&c) => return c,
            _ => {}
        }
    }
}

/// The characters UCA 14.0.0's contractions start with (DUCET's multi-
/// character entries; e.g. 'л' + U+0306, Thai and Lao prevowels): random
/// strings for uca1400 leave them out.
const CONTRACTS: &[u32] = &[
    0x004C, 0x006C, 0x0418, 0x0438, 0x0627, 0x0648, 0x064A, 0x09C7, 0x0B47, 0x0B92, 0x0BC6, 0x0BC7,
    0x0C46, 0x0CBF, 0x0CC6, 0x0CCA, 0x0D46, 0x0D47, 0x0DD9, 0x0DDC, 0x0E40, 0x0E41, 0x0E42, 0x0E43,
    0x0E44, 0x0E4D, 0x0EC0, 0x0EC1, 0x0EC2, 0x0EC3, 0x0EC4, 0x0ECD, 0x0F71, 0x0FB2, 0x0FB3, 0x1025,
    0x11131, 0x11132, 0x11347, 0x114B9, 0x115B8, 0x115B9, 0x11935, 0x19B5, 0x19B6, 0x19B7, 0x19BA,
    0x1B05, 0x1B07, 0x1B09, 0x1B0B, 0x1B0D, 0x1B11, 0x1B3A, 0x1B3C, 0x1B3E, 0x1B3F, 0x1B42, 0xAAB5,
    0xAAB6, 0xAAB9, 0xAABB, 0xAABC,
];

/// Dense ranks of `strs` under `c`, by Strata's comparison.
fn strata_ranks(c: Collation, strs: &[String]) -> Vec<u64> {
    let mut order: Vec<usize> = (0..strs.len()).collect();
    order.sort_by(|&a, &b| c.compare(strs[a].as_bytes(), strs[b].as_bytes()));
    let mut ranks = vec![0; strs.len()];
    let mut rank = 0;
    for (i, &k) in order.iter().enumerate() {
        if i == 0
            || c.compare(strs[order[i - 1]].as_bytes(), strs[k].as_bytes())
                .is_ne()
        {
            rank += 1;
        }
        ranks[k] = rank;
    }
    ranks
}

/// Random strings ranked by MariaDB and by Strata under `c`, and weighed
/// under `nopad` when given (WEIGHT_STRING does not trim trailing spaces).
fn check_random(m: &mut Conn, r: &mut Rng, seed: u64, c: Collation, nopad: Option<Collation>) {
    let mut strs = Vec::new();
    while strs.len() < 1500 {
        let n = r.below(7);
        let s: String = (0..n).map(|_| random_char(r)).collect();
        if c.charset() == "utf8mb3" && s.chars().any(|ch| ch as u32 > 0xFFFF) {
            continue;
        }
        if c.name().contains("uca1400") && s.chars().any(|ch| CONTRACTS.contains(&(ch as u32))) {
            continue; // contractions: MariaDB has them, Strata does not (documented)
        }
        strs.push(s);
    }
    let cs = c.charset();
    m.query_drop("DROP TABLE IF EXISTS r").unwrap();
    m.query_drop(format!(
        "CREATE TABLE r (id INT PRIMARY KEY, s VARCHAR(40) CHARACTER SET {cs})"
    ))
    .unwrap();
    for chunk in strs.chunks(300).enumerate() {
        let values: Vec<String> = chunk
            .1
            .iter()
            .enumerate()
            .map(|(i, s)| {
                format!(
                    "({}, CONVERT(X'{}' USING utf8mb4))",
                    chunk.0 * 300 + i,
                    hex(s.as_bytes())
                )
            })
            .collect();
        m.query_drop(format!("INSERT INTO r VALUES {}", values.join(",")))
            .unwrap();
    }
    let rows: Vec<(usize, u64, Vec<u8>)> = m
        .query(format!(
            "SELECT id, DENSE_RANK() OVER (ORDER BY s COLLATE {}), WEIGHT_STRING(s COLLATE {}) \
             FROM r",
            c.name(),
            nopad.unwrap_or(c).name()
        ))
        .unwrap();
    assert_eq!(rows.len(), strs.len());
    let ranks = strata_ranks(c, &strs);
    for (id, rank, w) in rows {
        let s = &strs[id];
        if let Some(nopad) = nopad {
            assert_eq!(
                strata_weights(nopad, s),
                w,
                "seed {seed}: WEIGHT_STRING({:?} COLLATE {})",
                s,
                nopad.name()
            );
        }
        if ranks[id] != rank {
            let other = (0..strs.len()).find(|&k| ranks[k] == ranks[id] && k != id);
            panic!(
                "seed {seed}: {:?} ranks {} in MariaDB, {} in Strata under {} (Strata ties it \
                 with {:?})",
                s,
                rank,
                ranks[id],
                c.name(),
                other.map(|k| &strs[k])
            );
        }
    }
}

#[test]
fn collation_weights_and_order_match_mariadb() {
    let Some(maria) = MariaDb::start() else {
        assert!(
            std::env::var("STRATA_DIFF_REQUIRE").is_err(),
            "MariaDB ({MARIADBD}) is required (STRATA_DIFF_REQUIRE is set)"
        );
        eprintln!("collation_mariadb: {MARIADBD} not found: skipped");
        return;
    };
    let mut m = maria.conn().unwrap();
    m.query_drop("CREATE DATABASE c").unwrap();
    m.query_drop("USE c").unwrap();
    use Collation as C;
    for c in [
        C::Utf8mb4GeneralNopadCi,
        C::Utf8mb4UnicodeNopadCi,
        C::Utf8mb4Unicode520NopadCi,
        C::Utf8mb4Uca1400NopadAiCi,
    ] {
        check_chars(&mut m, c, 0, 0xFFFF, 1);
        check_chars(&mut m, c, 0x10000, 0x10FFFF, 7);
    }
    for c in [
        C::Latin1SwedishNopadCi,
        C::Latin1GeneralCi,
        C::Latin1GeneralCs,
    ] {
        check_chars(&mut m, c, 0, 255, 1);
    }
    let seed = testkit::seed("collation_mariadb");
    let mut r = Rng::new(seed);
    for (c, nopad) in [
        (C::Utf8mb4UnicodeCi, Some(C::Utf8mb4UnicodeNopadCi)),
        (C::Utf8mb3UnicodeCi, Some(C::Utf8mb3UnicodeNopadCi)),
        (C::Utf8mb4Unicode520Ci, Some(C::Utf8mb4Unicode520NopadCi)),
        (C::Utf8mb4GeneralCi, Some(C::Utf8mb4GeneralNopadCi)),
        (C::Utf8mb4UnicodeNopadCi, Some(C::Utf8mb4UnicodeNopadCi)),
        (C::Utf8mb4NopadBin, None),
        (C::Utf8mb4Bin, None),
        (C::Utf8mb4Uca1400AiCi, Some(C::Utf8mb4Uca1400NopadAiCi)),
        (C::Utf8mb3Uca1400AiCi, Some(C::Utf8mb3Uca1400NopadAiCi)),
        (C::Utf8mb4Uca1400NopadAiCi, Some(C::Utf8mb4Uca1400NopadAiCi)),
    ] {
        check_random(&mut m, &mut r, seed, c, nopad);
    }
}
