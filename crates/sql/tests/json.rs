//! JSON functions over JSON text (issue 11): answers as MariaDB 10.11 prints them
//! (checked against Debian's mariadbd), MySQL's `->` / `->>` operators, warnings for
//! invalid JSON and paths, aggregates, and hostile inputs (100,000-deep nesting,
//! seeded random bytes through every function) that must give NULL or 0, never a
//! crash.
#![allow(clippy::unwrap_used)]

use sql::result::Collect;
use sql::Session;

mod common;
use common::{err, q, rows, session_in_d, TestDb};

fn open() -> TestDb {
    TestDb::open("sql-json")
}

fn one(s: &mut Session, sql: &str) -> String {
    let r = rows(s, sql);
    assert_eq!(r.len(), 1, "{sql}");
    r[0].clone()
}

/// SHOW WARNINGS as `Level code message` lines.
fn warnings(s: &mut Session) -> Vec<String> {
    let mut c = Collect::default();
    s.query("SHOW WARNINGS", &mut c).unwrap();
    c.rows
        .iter()
        .map(|r| {
            r.iter()
                .map(|v| String::from_utf8_lossy(&v.text()).into_owned())
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect()
}

/// Each (expression, answer) pair, as MariaDB answers it (NULL shown as "NULL").
fn check(s: &mut Session, cases: &[(&str, &str)]) {
    for (e, want) in cases {
        let r = q(s, &format!("SELECT {e}"));
        let got = if r[0][0].is_null() {
            "NULL".to_string()
        } else {
            String::from_utf8_lossy(&r[0][0].text()).into_owned()
        };
        assert_eq!(&got, want, "SELECT {e}");
    }
}

#[test]
fn constructors_print_as_mariadb() {
    let db = open();
    let mut s = session_in_d(&db);
    check(
        &mut s,
        &[
            (
                "JSON_OBJECT('a',1,'b','x','c',null,'d',true)",
                r#"{"a": 1, "b": "x", "c": null, "d": true}"#,
            ),
            (
                "JSON_ARRAY(1,'a',null,1.5,JSON_ARRAY(2))",
                r#"[1, "a", null, 1.5, [2]]"#,
            ),
            ("JSON_ARRAY()", "[]"),
            ("JSON_OBJECT()", "{}"),
            ("JSON_OBJECT(NULL, 1)", r#"{"": 1}"#),
            ("JSON_OBJECT('k', 1 = 1, 'f', 2 < 1)", r#"{"k": true, "f": false}"#),
            (
                "JSON_OBJECT('d', DATE '2024-01-02', 'e', 'x\"y', 'i', 1/3)",
                r#"{"d": "2024-01-02", "e": "x\"y", "i": 0.3333}"#,
            ),
            (
                "JSON_ARRAY(JSON_EXTRACT('[1]','$'), JSON_QUOTE('x'), JSON_UNQUOTE('\"y\"'), '[1]')",
                r#"[[1], "\"x\"", "y", "[1]"]"#,
            ),
            (
                "JSON_OBJECT('k', JSON_KEYS('{\"a\":1}'))",
                r#"{"k": "[\"a\"]"}"#,
            ),
            ("JSON_QUOTE('a\"b\\\\c\\n\\t')", r#""a\"b\\c\n\t""#),
            ("JSON_QUOTE(1)", "NULL"),
            ("JSON_QUOTE(NULL)", "NULL"),
        ],
    );
    assert_eq!(err(&mut s, "SELECT JSON_OBJECT('a')"), 1582);
    assert_eq!(err(&mut s, "SELECT JSON_SET('{}', '$.a')"), 1582);
}

#[test]
fn extraction_and_paths() {
    let db = open();
    let mut s = session_in_d(&db);
    check(
        &mut s,
        &[
            (
                "JSON_EXTRACT('{\"a\": [1,   2,{\"b\"  :  3}]}', '$.a')",
                r#"[1, 2, {"b": 3}]"#,
            ),
            (
                "JSON_EXTRACT('{\"a\":[1,2],\"b\":{\"c\":1}}', '$.*')",
                r#"[[1, 2], {"c": 1}]"#,
            ),
            (
                "JSON_EXTRACT('{\"a\":[1,2],\"b\":{\"c\":1}}', '$.a', '$.b')",
                r#"[[1, 2], {"c": 1}]"#,
            ),
            (
                "JSON_EXTRACT('{\"a\":[1,2],\"b\":{\"c\":1}}', '$**.c')",
                "[1]",
            ),
            (
                "JSON_EXTRACT('{\"a\":{\"a\":1}}', '$**.a')",
                r#"[{"a": 1}, 1]"#,
            ),
            ("JSON_EXTRACT('{\"a\":1}', '$.b')", "NULL"),
            ("JSON_EXTRACT('{\"a\":1}', '$.b', '$.a')", "[1]"),
            ("JSON_EXTRACT('[1, 2]', '$[5]')", "NULL"),
            ("JSON_EXTRACT('{\"a b\":1}', '$.\"a b\"')", "1"),
            ("JSON_EXTRACT('1.50', '$')", "1.50"),
            ("JSON_EXTRACT('[1E2, -0, 0.10]', '$')", "[1E2, -0, 0.10]"),
            ("JSON_EXTRACT('[1,2,3]', '$[last]')", "3"),
            ("JSON_EXTRACT('[1,2,3]', '$[last-1]')", "2"),
            ("JSON_EXTRACT('[1,2,3]', '$[-1]')", "3"),
            ("JSON_EXTRACT('[1,2,3]', '$[1 to 2]')", "[2, 3]"),
            ("JSON_EXTRACT('{\"a\":1}', '$[0]')", r#"{"a": 1}"#),
            ("JSON_EXTRACT('{\"a\":1}', '$[1]')", "NULL"),
            ("JSON_EXTRACT('{\"a\":1, \"a\":2}', '$.a')", "1"),
            (
                "JSON_EXTRACT('{\"a\":[{\"b\":1},{\"b\":2}]}', '$.a[*].b')",
                "[1, 2]",
            ),
            ("JSON_EXTRACT('[1,2]', '$[ 1 ]')", "2"),
            ("JSON_EXTRACT(NULL, '$')", "NULL"),
            ("JSON_EXTRACT('[1]', NULL)", "NULL"),
            (
                "JSON_UNQUOTE(JSON_EXTRACT('{\"a\":\"x\\\\ty\"}', '$.a'))",
                "x\ty",
            ),
            ("JSON_UNQUOTE('\"a\\\\u00e9\"')", "aé"),
            ("JSON_UNQUOTE('  \"a\"  ')", "a"),
            ("JSON_UNQUOTE('abc')", "abc"),
            ("JSON_UNQUOTE('\"a\\\\qb\"')", "aqb"),
            ("JSON_TYPE('{}')", "OBJECT"),
            ("JSON_TYPE('[]')", "ARRAY"),
            ("JSON_TYPE('1e5')", "INTEGER"),
            ("JSON_TYPE('1.5')", "DOUBLE"),
            ("JSON_TYPE('\"a\"')", "STRING"),
            ("JSON_TYPE('true')", "BOOLEAN"),
            ("JSON_TYPE('null')", "NULL"),
            ("JSON_TYPE(1)", "INTEGER"),
            ("JSON_LENGTH('[1,2,[3]]')", "3"),
            ("JSON_LENGTH('{\"a\":1}')", "1"),
            ("JSON_LENGTH('\"x\"')", "1"),
            ("JSON_LENGTH('[1,2]', '$[5]')", "NULL"),
            ("JSON_DEPTH('{\"a\":[1]}')", "3"),
            ("JSON_KEYS('{\"a\":1, \"b\":{\"c\":2}}')", r#"["a", "b"]"#),
            ("JSON_KEYS('{\"a\":1, \"b\":{\"c\":2}}', '$.b')", r#"["c"]"#),
            ("JSON_KEYS('[1]')", "NULL"),
        ],
    );
}

#[test]
fn validity_and_warnings() {
    let db = open();
    let mut s = session_in_d(&db);
    assert_eq!(
        one(
            &mut s,
            "SELECT JSON_VALID('{\"a\":1}'), JSON_VALID('{a:1}'), JSON_VALID(''), JSON_VALID(NULL), \
             JSON_VALID('1.'), JSON_VALID('01'), JSON_VALID('\"\\\\x\"'), JSON_VALID(1)"
        ),
        "1|0|0|NULL|1|0|1|1"
    );
    assert_eq!(
        warnings(&mut s),
        [
            "Note 4038 Syntax error in JSON text in argument 1 to function 'json_valid' at position 2",
            "Note 4037 Unexpected end of JSON text in argument 1 to function 'json_valid'",
            "Note 4038 Syntax error in JSON text in argument 1 to function 'json_valid' at position 2",
        ]
    );
    let cases = [
        (
            "JSON_EXTRACT('{\"a\":1', '$.a')",
            "Warning 4037 Unexpected end of JSON text in argument 1 to function 'json_extract'",
        ),
        (
            "JSON_EXTRACT('{\"a\":1}', 'a')",
            "Warning 4042 Syntax error in JSON path in argument 2 to function 'json_extract' at position 1",
        ),
        (
            "JSON_EXTRACT('{\"a\":1}', '$[')",
            "Warning 4041 Unexpected end of JSON path in argument 2 to function 'json_extract'",
        ),
        (
            "JSON_TYPE('x')",
            "Warning 4038 Syntax error in JSON text in argument 1 to function 'json_type' at position 1",
        ),
        (
            "JSON_LENGTH('[1,2]', '$.*')",
            "Warning 4044 Wildcards or range in JSON path not allowed in argument 2 to function 'json_length'",
        ),
        (
            "JSON_SET('{\"a\":1}', '$.*', 5)",
            "Warning 4044 Wildcards or range in JSON path not allowed in argument 2 to function 'json_set'",
        ),
        (
            "JSON_REMOVE('[1]', '$')",
            "Warning 4051 Path expression '$' is not allowed in argument 2 to function 'json_remove'.",
        ),
        (
            "JSON_CONTAINS_PATH('{\"a\":1}', 'x', '$.a')",
            "Warning 4046 Argument 2 to function 'json_contains_path' must be \"one\" or \"all\".",
        ),
        (
            "JSON_EXTRACT('1', CONCAT('$', REPEAT('[0]', 40)))",
            "Warning 4043 Limit of 32 on JSON path depth is reached in argument 2 to function 'json_extract' at position 96",
        ),
        (
            "JSON_EXTRACT(CONCAT(REPEAT('[', 33), REPEAT(']', 33)), '$')",
            "Warning 4040 Limit of 32 on JSON nested structures depth is reached in argument 1 to function 'json_extract' at position 32",
        ),
        (
            "JSON_CONTAINS('[1]', 'x')",
            "Warning 4038 Syntax error in JSON text in argument 2 to function 'json_contains' at position 1",
        ),
    ];
    for (e, w) in cases {
        assert_eq!(one(&mut s, &format!("SELECT {e}")), "NULL", "{e}");
        assert_eq!(warnings(&mut s), [w], "{e}");
    }
    // 31 levels are allowed, 32 are not.
    assert_eq!(
        one(
            &mut s,
            "SELECT JSON_VALID(CONCAT(REPEAT('[', 31), REPEAT(']', 31))), \
             JSON_VALID(CONCAT(REPEAT('[', 32), REPEAT(']', 32)))"
        ),
        "1|0"
    );
}

#[test]
fn changes_merges_and_searches() {
    let db = open();
    let mut s = session_in_d(&db);
    check(
        &mut s,
        &[
            (
                "JSON_SET('{\"a\":1,  \"b\":2}', '$.a', 3)",
                r#"{"a": 3, "b": 2}"#,
            ),
            (
                "JSON_SET('{\"a\":1,  \"b\":2}', '$.c', 3)",
                r#"{"a": 1, "b": 2, "c": 3}"#,
            ),
            (
                "JSON_SET('{\"a\":1,  \"b\":[1,2]}', '$.b[5]', 3)",
                r#"{"a": 1, "b": [1, 2, 3]}"#,
            ),
            ("JSON_SET('{\"a\":1}', '$[1]', 5)", r#"[{"a": 1}, 5]"#),
            ("JSON_SET('{\"a\":1}', '$[0]', 5)", "5"),
            ("JSON_SET('{\"a\":1}', '$.a.b', 1)", r#"{"a": 1}"#),
            ("JSON_SET('1', '$', 2)", "2"),
            (
                "JSON_SET('{\"a\":1}', '$.b', 2, '$.b', 3)",
                r#"{"a": 1, "b": 3}"#,
            ),
            (
                "JSON_SET('{}','$.a', JSON_ARRAY(1, 2), '$.b', '[1, 2]', '$.c', 1=1, '$.d', NULL)",
                r#"{"a": [1, 2], "b": "[1, 2]", "c": true, "d": null}"#,
            ),
            (
                "JSON_INSERT('{\"a\":1,  \"b\":2}', '$.a', 3, '$.d', JSON_OBJECT('x',1))",
                r#"{"a": 1, "b": 2, "d": {"x": 1}}"#,
            ),
            ("JSON_INSERT('[1]', '$[0]', 9, '$[3]', 7)", "[1, 7]"),
            (
                "JSON_REPLACE('{\"a\":1,  \"b\":2}', '$.a', 3, '$.d', 4)",
                r#"{"a": 3, "b": 2}"#,
            ),
            (
                "JSON_REMOVE('{\"a\":1,  \"b\":2, \"c\" : 3}', '$.b')",
                r#"{"a": 1, "c": 3}"#,
            ),
            (
                "JSON_REMOVE('{\"a\":[1,2]}', '$.a[0]', '$.a[0]')",
                r#"{"a": []}"#,
            ),
            ("JSON_ARRAY_APPEND('[1,  2]', '$', 3)", "[1, 2, 3]"),
            (
                "JSON_ARRAY_APPEND('{\"a\":1}', '$.a', 3)",
                r#"{"a": [1, 3]}"#,
            ),
            (
                "JSON_ARRAY_INSERT('[1,2]', '$[0]', 'x', '$[9]', 'y')",
                r#"["x", 1, 2, "y"]"#,
            ),
            ("JSON_ARRAY_INSERT('[1]', '$', 2)", "NULL"),
            (
                "JSON_MERGE_PRESERVE('{\"a\":1}', '{\"a\":2, \"b\":3}')",
                r#"{"a": [1, 2], "b": 3}"#,
            ),
            (
                "JSON_MERGE_PRESERVE('[1]', '2', '{\"x\":1}')",
                r#"[1, 2, {"x": 1}]"#,
            ),
            ("JSON_MERGE('{\"a\":1}','[2]')", r#"[{"a": 1}, 2]"#),
            ("JSON_MERGE_PRESERVE('[]','{}')", "[{}]"),
            (
                "JSON_MERGE_PATCH('{\"a\":1, \"b\":2}', '{\"a\":null, \"c\":{\"d\":1}}')",
                r#"{"b": 2, "c": {"d": 1}}"#,
            ),
            ("JSON_MERGE_PATCH('{\"a\":1}', NULL)", "NULL"),
            ("JSON_MERGE_PATCH('{\"a\":1}','[2]')", "[2]"),
            ("JSON_CONTAINS('[1,2,{\"a\":[3,4]}]', '{\"a\":[4]}')", "1"),
            ("JSON_CONTAINS('[1,2,{\"a\":[3,4]}]', '3', '$[2].a')", "1"),
            ("JSON_CONTAINS('{\"a\":1}', '1')", "0"),
            ("JSON_CONTAINS('[1]', '1.0')", "1"),
            ("JSON_CONTAINS('[[1,2]]', '1')", "1"),
            ("JSON_CONTAINS('[1]', '1', '$[9]')", "0"),
            (
                "JSON_CONTAINS_PATH('{\"a\":1,\"b\":{\"c\":2}}', 'one', '$.a', '$.x')",
                "1",
            ),
            (
                "JSON_CONTAINS_PATH('{\"a\":1,\"b\":{\"c\":2}}', 'all', '$.a', '$.x')",
                "0",
            ),
            ("JSON_CONTAINS_PATH('{\"a\":1}', 'ONE', '$**.a')", "1"),
            (
                "JSON_SEARCH('[\"abc\", {\"x\":\"abc\"}, \"abd\"]', 'one', 'abc')",
                r#""$[0]""#,
            ),
            (
                "JSON_SEARCH('[\"abc\", {\"x\":\"abc\"}, \"abd\"]', 'all', 'ab%')",
                r#"["$[0]", "$[1].x", "$[2]"]"#,
            ),
            ("JSON_SEARCH('[\"abc\"]', 'all', 'zz')", "NULL"),
            ("JSON_SEARCH('[\"a_c\"]', 'one', 'a|_c', '|')", r#""$[0]""#),
            (
                "JSON_SEARCH('{\"a\":[\"x\",\"y\"]}', 'all', 'y', NULL, '$.a')",
                r#""$.a[1]""#,
            ),
        ],
    );
}

#[test]
fn arrow_operators_and_aggregates_over_a_table() {
    let db = open();
    let mut s = session_in_d(&db);
    q(
        &mut s,
        "CREATE TABLE docs (id INT PRIMARY KEY, doc TEXT, tag VARCHAR(10))",
    );
    q(
        &mut s,
        "INSERT INTO docs VALUES \
         (1, '{\"name\": \"ann\", \"age\": 31, \"tags\": [\"a\", \"b\"]}', 'x'), \
         (2, '{\"name\": \"bob\", \"age\": 25, \"tags\": []}', 'y'), \
         (4, 'not json', 'z')",
    );
    q(
        &mut s,
        "INSERT INTO docs SELECT 3, JSON_OBJECT('name', 'cy\\td'), NULL",
    );
    assert_eq!(
        rows(
            &mut s,
            "SELECT id, doc->'$.name', doc->>'$.name' FROM docs ORDER BY id"
        ),
        [
            "1|\"ann\"|ann",
            "2|\"bob\"|bob",
            "3|\"cy\\td\"|cy\td",
            "4|NULL|NULL"
        ]
    );
    assert_eq!(
        rows(
            &mut s,
            "SELECT id FROM docs WHERE doc->>'$.age' > 30 OR doc->'$.tags[1]' = JSON_QUOTE('b') ORDER BY id"
        ),
        ["1"]
    );
    assert_eq!(
        rows(
            &mut s,
            "SELECT doc->>'$.name' AS n FROM docs WHERE id < 3 ORDER BY n DESC"
        ),
        ["bob", "ann"]
    );
    // Escapes in a literal of an INSERT reach the row unescaped (the text once
    // became a parameter with its raw bytes: '\\' stored two backslashes).
    q(
        &mut s,
        "INSERT INTO docs VALUES (5, '{\"q\": \"a\\\\\"b\\\\tc\"}', 'w')",
    );
    assert_eq!(
        rows(
            &mut s,
            "SELECT doc, doc->>'$.q', JSON_VALID(doc) FROM docs WHERE id = 5"
        ),
        ["{\"q\": \"a\\\"b\\tc\"}|a\"b\tc|1"]
    );
    q(&mut s, "DELETE FROM docs WHERE id = 5");
    // The operators bind tighter than arithmetic, as in MySQL.
    assert_eq!(
        one(
            &mut s,
            "SELECT '{\"a\":2}'->'$.a' * 3, '{\"a\":\"2\"}'->>'$.a' + 1"
        ),
        "6|3"
    );
    assert_eq!(
        rows(
            &mut s,
            "SELECT JSON_LENGTH(doc->'$.tags') FROM docs WHERE id = 1"
        ),
        ["2"]
    );
    assert_eq!(
        one(
            &mut s,
            "SELECT JSON_ARRAYAGG(tag), JSON_OBJECTAGG(tag, id) FROM docs"
        ),
        r#"["x","y",null,"z"]|{"x":1, "y":2, "z":4}"#
    );
    assert_eq!(
        one(
            &mut s,
            "SELECT JSON_ARRAYAGG(id ORDER BY id DESC) FROM docs"
        ),
        "[4,3,2,1]"
    );
    assert_eq!(
        one(
            &mut s,
            "SELECT JSON_ARRAYAGG(JSON_OBJECT('i', id)) FROM docs WHERE id < 3"
        ),
        r#"[{"i": 1},{"i": 2}]"#
    );
    assert_eq!(
        one(&mut s, "SELECT JSON_ARRAYAGG(id) FROM docs WHERE id > 9"),
        "NULL"
    );
    assert_eq!(err(&mut s, "SELECT JSON_OBJECTAGG(tag) FROM docs"), 1582);
    // Written back through JSON_SET, read through the operators.
    q(
        &mut s,
        "UPDATE docs SET doc = JSON_SET(doc, '$.age', doc->'$.age' + 1) WHERE id <= 2",
    );
    assert_eq!(
        rows(
            &mut s,
            "SELECT doc->'$.age' FROM docs WHERE id <= 2 ORDER BY id"
        ),
        ["32", "26"]
    );
}

#[test]
fn hostile_inputs_give_null_not_a_crash() {
    let db = open();
    let mut s = session_in_d(&db);
    // 100,000 levels: refused at level 32, no recursion past it.
    for open_ in ["[", "{\"a\":"] {
        let deep = format!("REPEAT('{}', 100000)", open_.replace('"', "\\\""));
        assert_eq!(one(&mut s, &format!("SELECT JSON_VALID({deep})")), "0");
        for f in [
            "JSON_EXTRACT({d}, '$')",
            "JSON_LENGTH({d})",
            "JSON_DEPTH({d})",
            "JSON_SET({d}, '$[0]', 1)",
            "JSON_MERGE_PATCH({d}, {d})",
            "JSON_MERGE_PRESERVE('[]', {d})",
            "JSON_CONTAINS({d}, '1')",
            "JSON_SEARCH({d}, 'all', '%')",
        ] {
            let e = f.replace("{d}", &deep);
            assert_eq!(one(&mut s, &format!("SELECT {e}")), "NULL", "{f}");
        }
    }
    // A path of 100,000 steps on a scalar (each `[0]` names the scalar itself).
    assert_eq!(
        one(
            &mut s,
            "SELECT JSON_EXTRACT('1', CONCAT('$', REPEAT('[0]', 100000)))"
        ),
        "NULL"
    );
    // Seeded random bytes through every function: an answer or NULL, never a panic.
    let mut rng = testkit::Rng::from_env("json_hostile");
    let alphabet: &[u8] = b"[]{}\",:.$*0123456789-eE+ tfnrul\\ab\x01\xff";
    let funcs = [
        "JSON_VALID(@d)",
        "JSON_EXTRACT(@d, @p)",
        "JSON_UNQUOTE(@d)",
        "JSON_TYPE(@d)",
        "JSON_LENGTH(@d, @p)",
        "JSON_KEYS(@d, @p)",
        "JSON_DEPTH(@d)",
        "JSON_CONTAINS(@d, @d, @p)",
        "JSON_CONTAINS_PATH(@d, 'all', @p)",
        "JSON_SET(@d, @p, @d)",
        "JSON_INSERT(@d, @p, 1)",
        "JSON_REPLACE(@d, @p, 'x')",
        "JSON_REMOVE(@d, @p)",
        "JSON_ARRAY_APPEND(@d, @p, @d)",
        "JSON_ARRAY_INSERT(@d, @p, 2)",
        "JSON_MERGE_PRESERVE(@d, @d)",
        "JSON_MERGE_PATCH(@d, @d)",
        "JSON_SEARCH(@d, 'all', '%a%', NULL, @p)",
        "JSON_OBJECT(@d, @p)",
        "JSON_ARRAY(@d, @p)",
    ];
    for _ in 0..3000 {
        let mut gen = |max: u64| -> String {
            let n = rng.below(max) as usize;
            let b: Vec<u8> = (0..n)
                .map(|_| alphabet[rng.below(alphabet.len() as u64) as usize])
                .collect();
            b.iter().map(|c| format!("{c:02X}")).collect()
        };
        let (d, p) = (gen(40), gen(12));
        let mut c = Collect::default();
        s.query(
            &format!("SET @d = X'{d}', @p = CONCAT('$', X'{p}')"),
            &mut c,
        )
        .unwrap();
        for f in funcs {
            let mut c = Collect::default();
            // Errors are allowed (none expected); a panic fails the test.
            let _ = s.query(&format!("SELECT {f}"), &mut c);
        }
    }
}
