//! PAD SPACE order with characters that weigh less than a space: MariaDB
//! compares as if the shorter string were padded with spaces, so 'a\t' <
//! 'a' = 'a ' < 'a!' (observed on MariaDB 10.11 under utf8mb4_bin,
//! utf8mb4_general_ci, utf8mb4_unicode_ci and latin1_swedish_ci). Checked
//! here: `Collation::compare` against the reference (pad, then compare),
//! key images' byte order against `compare` (seeded, `SEED=`), SQL ORDER
//! BY / ranges / MIN / MAX on indexed and unindexed columns against the
//! model, and tables in the old key format (format 1, trimmed weights)
//! read, written, checked and upgraded by ALTER TABLE ... FORCE.
mod common;
use common::{check_ok, q, texts, TestDb};
use rel::collation::{pad::reference_cmp, Collation};
use rel::keycodec::KeyFormat;
use std::cmp::Ordering;

const COLLS: [Collation; 10] = [
    Collation::Utf8mb4Bin,
    Collation::Utf8mb4GeneralCi,
    Collation::Utf8mb4UnicodeCi,
    Collation::Utf8mb4Unicode520Ci,
    Collation::Utf8mb3GeneralCi,
    Collation::Latin1SwedishCi,
    Collation::Latin1Bin,
    Collation::Latin1GeneralCs,
    Collation::Utf8mb4NopadBin,
    Collation::Utf8mb4UnicodeNopadCi,
];

/// A random string of characters around a space's weight.
fn random_string(r: &mut testkit::Rng, c: Collation) -> String {
    const CHARS: &[char] = &[
        'a', 'A', 'b', 's', ' ', ' ', '\t', '\n', '\u{1}', '!', '\u{7f}', 'é', 'ß', '~',
    ];
    const WIDE: &[char] = &['\u{3000}', '\u{AD}', '一'];
    let n = r.below(12);
    (0..n)
        .map(|_| {
            if c.charset() != "latin1" && r.one_in(12) {
                WIDE[r.below(WIDE.len() as u64) as usize]
            } else {
                CHARS[r.below(CHARS.len() as u64) as usize]
            }
        })
        .collect()
}

#[test]
fn compare_and_key_images_follow_the_padded_reference() {
    let seed = testkit::seed("collation_pad");
    let mut r = testkit::Rng::new(seed);
    for c in COLLS {
        let mut strs: Vec<Vec<u8>> = (0..250)
            .map(|_| random_string(&mut r, c).into_bytes())
            .collect();
        // A byte that is not UTF-8 now and then.
        strs.push(b"a\xff".to_vec());
        strs.push(b"a\t\xff".to_vec());
        let images: Vec<Vec<u8>> = strs.iter().map(|s| c.sort_key(s)).collect();
        for (i, a) in strs.iter().enumerate() {
            for (j, b) in strs.iter().enumerate() {
                let want = reference_cmp(c, a, b);
                let got = c.compare(a, b);
                assert_eq!(got, want, "seed {seed} {c:?} {a:?} {b:?}");
                assert_eq!(
                    images[i].cmp(&images[j]),
                    got,
                    "seed {seed} {c:?} key images of {a:?} {b:?}"
                );
                if got.is_eq() {
                    let (mut wa, mut wb) = (vec![], vec![]);
                    c.weights(a, &mut wa);
                    c.weights(b, &mut wb);
                    assert_eq!(wa, wb, "{c:?}: equal strings hash alike");
                }
            }
        }
    }
}

#[test]
fn every_pad_space_collation_pads_with_one_unit() {
    for c in rel::collation::ALL {
        assert_eq!(c.pad_unit().is_some(), c.pad_space(), "{c:?}");
    }
    let c = Collation::Utf8mb4Bin;
    let order = |x: &[u8], y: &[u8]| c.compare(x, y);
    assert_eq!(order(b"a\t", b"a"), Ordering::Less);
    assert_eq!(order(b"a", b"a  "), Ordering::Equal);
    assert_eq!(order(b"a \t", b"a"), Ordering::Less);
    assert_eq!(order(b"a\x7f", b"a"), Ordering::Greater);
    assert_eq!(order(b"", b"\t"), Ordering::Greater);
    assert_eq!(
        Collation::Utf8mb4NopadBin.compare(b"a\t", b"a"),
        Ordering::Greater
    );
}

fn lit(x: &str) -> String {
    format!("'{}'", x.replace('\\', "\\\\"))
}

#[test]
fn sql_order_ranges_and_min_max_follow_the_model() {
    let seed = testkit::seed("collation_pad_sql");
    let mut r = testkit::Rng::new(seed);
    let db = TestDb::open("sql-coll-pad");
    let mut s = common::session_in_d(&db);
    let t = |s: &mut sql::Session, sql: &str| texts(q(s, sql));
    for c in COLLS {
        let name = c.name();
        let cs = c.charset();
        q(&mut s, "DROP TABLE IF EXISTS r");
        q(
            &mut s,
            &format!(
                "CREATE TABLE r (id INT PRIMARY KEY, s VARCHAR(20) CHARACTER SET {cs} COLLATE {name}, \
                 u VARCHAR(20) CHARACTER SET {cs} COLLATE {name}, KEY ks (s))"
            ),
        );
        let strs: Vec<String> = (0..200).map(|_| random_string(&mut r, c)).collect();
        let values: Vec<String> = strs
            .iter()
            .enumerate()
            .map(|(i, x)| format!("({i}, {}, {})", lit(x), lit(x)))
            .collect();
        q(
            &mut s,
            &format!("INSERT INTO r VALUES {}", values.join(",")),
        );
        let cmp = |a: &str, b: &str| c.compare(a.as_bytes(), b.as_bytes());
        let mut want: Vec<usize> = (0..strs.len()).collect();
        want.sort_by(|&a, &b| cmp(&strs[a], &strs[b]).then(a.cmp(&b)));
        let want: Vec<String> = want.iter().map(|i| i.to_string()).collect();
        for col in ["s", "u"] {
            assert_eq!(
                t(&mut s, &format!("SELECT id FROM r ORDER BY {col}, id")),
                want,
                "seed {seed} {name} ORDER BY {col}"
            );
        }
        // Index order (no sort): non-decreasing under the model.
        for sql in [
            "SELECT id FROM r FORCE INDEX (ks) ORDER BY s",
            "SELECT id FROM r FORCE INDEX (ks) ORDER BY s DESC",
        ] {
            let ids: Vec<usize> = t(&mut s, sql).iter().map(|x| x.parse().unwrap()).collect();
            assert_eq!(ids.len(), strs.len());
            let desc = sql.ends_with("DESC");
            for w in ids.windows(2) {
                let o = cmp(&strs[w[0]], &strs[w[1]]);
                let o = if desc { o.reverse() } else { o };
                assert!(o.is_le(), "seed {seed} {name} {sql}: {w:?}");
            }
        }
        // MIN / MAX: model-equal to the model's extremes.
        let mut sorted: Vec<&String> = strs.iter().collect();
        sorted.sort_by(|a, b| cmp(a, b));
        for col in ["s", "u"] {
            let got = q(&mut s, &format!("SELECT MIN({col}), MAX({col}) FROM r"));
            let text = |v: &sql::Value| String::from_utf8(v.text()).unwrap();
            let (lo, hi) = (text(&got[0][0]), text(&got[0][1]));
            assert!(
                cmp(&lo, sorted[0]).is_eq(),
                "seed {seed} {name} MIN({col}) {lo:?}"
            );
            assert!(
                cmp(&hi, sorted[sorted.len() - 1]).is_eq(),
                "seed {seed} {name} MAX({col})"
            );
        }
        // Ranges through the index and through the unindexed column.
        for _ in 0..25 {
            let p = random_string(&mut r, c);
            let p2 = random_string(&mut r, c);
            let count = |f: &dyn Fn(&str) -> bool| strs.iter().filter(|x| f(x)).count().to_string();
            let cases: Vec<(String, String)> = vec![
                (format!("< {}", lit(&p)), count(&|x| cmp(x, &p).is_lt())),
                (format!("<= {}", lit(&p)), count(&|x| cmp(x, &p).is_le())),
                (format!("> {}", lit(&p)), count(&|x| cmp(x, &p).is_gt())),
                (format!(">= {}", lit(&p)), count(&|x| cmp(x, &p).is_ge())),
                (format!("= {}", lit(&p)), count(&|x| cmp(x, &p).is_eq())),
                (
                    format!("BETWEEN {} AND {}", lit(&p), lit(&p2)),
                    count(&|x| cmp(x, &p).is_ge() && cmp(x, &p2).is_le()),
                ),
            ];
            for (cond, want) in cases {
                for (col, hint) in [("s", "FORCE INDEX (ks)"), ("u", "")] {
                    let sql = format!("SELECT COUNT(*) FROM r {hint} WHERE {col} {cond}");
                    assert_eq!(
                        t(&mut s, &sql),
                        vec![want.clone()],
                        "seed {seed} {name}: {sql}"
                    );
                }
            }
        }
        check_ok(&mut s, "r");
    }
}

/// The ids of `t` in ORDER BY `col` order as one string.
fn order(s: &mut sql::Session, sql: &str) -> String {
    texts(q(s, sql)).join(",")
}

const ROWS: &str = "INSERT INTO t VALUES (1,'a','a','k1'),(2,'a\\t','a\\t','k2'),\
    (3,'a\\n','a\\n','k3'),(4,'a ','a ','k4'),(5,'a!','a!','k5'),(6,'a \\t','a \\t','k6'),\
    (7,'','','k7'),(8,'\\t','\\t','k8'),(9,'a~','a~','k9'),(10,'ab','ab','k10')";
/// MariaDB 10.11's order of ROWS by s (and by g), ties by id.
const MARIADB_ORDER: &str = "8,7,2,3,6,1,4,5,10,9";

/// Checks answers MariaDB gives on ROWS, through the index and not.
fn check_mariadb_answers(s: &mut sql::Session, label: &str) {
    for sql in [
        "SELECT id FROM t ORDER BY s, id",
        "SELECT id FROM t ORDER BY g, id",
        "SELECT id FROM t IGNORE INDEX (ks) ORDER BY s, id",
        "SELECT id FROM t ORDER BY CONCAT(s), id",
    ] {
        assert_eq!(order(s, sql), MARIADB_ORDER, "{label}: {sql}");
    }
    for (sql, want) in [
        ("SELECT id FROM t WHERE s < 'a' ORDER BY id", "2,3,6,7,8"),
        (
            "SELECT id FROM t FORCE INDEX (ks) WHERE s < 'a' ORDER BY id",
            "2,3,6,7,8",
        ),
        (
            "SELECT id FROM t FORCE INDEX (kg) WHERE g < 'a' ORDER BY id",
            "2,3,6,7,8",
        ),
        (
            "SELECT id FROM t FORCE INDEX (ks) WHERE s >= 'a' ORDER BY id",
            "1,4,5,9,10",
        ),
        (
            "SELECT id FROM t WHERE s BETWEEN 'a\\t' AND 'a' ORDER BY id",
            "1,2,3,4,6",
        ),
        ("SELECT id FROM t WHERE g = 'A' ORDER BY id", "1,4"),
        (
            "SELECT HEX(MIN(s)), HEX(MAX(s)) FROM t WHERE id IN (1, 2)",
            "6109|61",
        ),
        (
            "SELECT HEX(MIN(g)), HEX(MAX(g)) FROM t WHERE id IN (1, 3, 5)",
            "610A|6121",
        ),
        ("SELECT COUNT(DISTINCT s), COUNT(DISTINCT g) FROM t", "9|9"),
    ] {
        assert_eq!(order(s, sql), want, "{label}: {sql}");
    }
    let (code, _) = common::fails(s, "INSERT INTO t VALUES (11, 'x', 'x', 'k1 ')");
    assert_eq!(code, 1062, "{label}: 'k1 ' duplicates 'k1' in UNIQUE ku");
    q(s, "INSERT INTO t VALUES (11, 'x', 'x', 'k1\\t')");
    q(s, "DELETE FROM t WHERE id = 11");
}

fn create_pad_table(s: &mut sql::Session) {
    q(
        s,
        "CREATE TABLE t (id INT PRIMARY KEY, s VARCHAR(20) COLLATE utf8mb4_bin, \
         g VARCHAR(20) COLLATE utf8mb4_general_ci, k VARCHAR(20) COLLATE utf8mb4_bin, \
         KEY ks (s), KEY kg (g), UNIQUE KEY ku (k))",
    );
}

#[test]
fn sql_answers_match_mariadb_with_tab_and_lf() {
    let db = TestDb::open("sql-coll-pad-fixed");
    let mut s = common::session_in_d(&db);
    create_pad_table(&mut s);
    q(&mut s, ROWS);
    check_mariadb_answers(&mut s, "new table");
    check_ok(&mut s, "t");
}

fn open(dir: &testkit::TempDir) -> std::sync::Arc<sql::Instance> {
    let o = sql::InstanceOptions {
        sync_on_commit: false,
        ..Default::default()
    };
    sql::Instance::open(&dir.0, &o).unwrap()
}

fn key_format(inst: &sql::Instance) -> KeyFormat {
    inst.catalog.state().table("d", "t").unwrap().def.key_format
}

#[test]
fn tables_in_the_old_key_format_open_answer_and_upgrade() {
    let dir = testkit::TempDir::new("sql-coll-pad-old");
    {
        let inst = open(&dir);
        let mut s = inst.session(1, "root", None);
        q(&mut s, "CREATE DATABASE d");
        q(&mut s, "USE d");
        create_pad_table(&mut s);
        // Turn the (empty) table into one of a release before key formats:
        // its definition is then written as those releases wrote it (a
        // version before 7), and its rows are written with format 1 keys.
        let base = inst.catalog.state().table("d", "t").unwrap().clone();
        let mut def = base.def.clone();
        def.key_format = KeyFormat::Trimmed;
        def.derive();
        assert!(def.encode()[0] < rel::schema::TABLE_DEF_V7);
        inst.catalog
            .replace_table(&base, def, false, false)
            .unwrap();
        q(&mut s, ROWS);
        // Format 1 keys: 'a\t' as the bytes without trailing spaces.
        let def = inst.catalog.state().table("d", "t").unwrap().def.clone();
        let ks = def.secondary[0].id;
        let mut key = rel::keycodec::index_prefix(ks).to_vec();
        key.extend_from_slice(&[1, b'a', b'\t', 0, 1]);
        key.extend_from_slice(&(2u32 ^ 0x8000_0000).to_be_bytes());
        assert!(
            inst.catalog.db().get(&key).unwrap().is_some(),
            "format 1 key of row 2"
        );
    }
    // Reopened: still format 1, right answers (its PAD SPACE keys serve
    // equality only), writes and CHECK TABLE.
    {
        let inst = open(&dir);
        assert_eq!(key_format(&inst), KeyFormat::Trimmed);
        let mut s = inst.session(1, "root", None);
        q(&mut s, "USE d");
        check_mariadb_answers(&mut s, "format 1");
        q(&mut s, "INSERT INTO t VALUES (12, 'b\\t', 'b\\t', 'k12')");
        q(&mut s, "UPDATE t SET g = 'B' WHERE id = 12");
        q(&mut s, "DELETE FROM t WHERE id = 12");
        check_ok(&mut s, "t");
        // Metadata-only changes keep the format.
        q(&mut s, "ALTER TABLE t ALTER COLUMN g SET DEFAULT 'z'");
        q(&mut s, "CREATE INDEX kg2 ON t (g, s)");
        assert_eq!(key_format(&inst), KeyFormat::Trimmed);
        check_ok(&mut s, "t");
        check_mariadb_answers(&mut s, "format 1 after CREATE INDEX");
        // ALTER TABLE ... FORCE rebuilds into format 2.
        q(&mut s, "ALTER TABLE t FORCE");
        assert_eq!(key_format(&inst), KeyFormat::PadSpace);
        check_ok(&mut s, "t");
        check_mariadb_answers(&mut s, "after FORCE");
    }
    let inst = open(&dir);
    assert_eq!(key_format(&inst), KeyFormat::PadSpace);
    let mut s = inst.session(1, "root", None);
    q(&mut s, "USE d");
    check_mariadb_answers(&mut s, "format 2 reopened");
    check_ok(&mut s, "t");
}
