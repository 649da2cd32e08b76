//! caching_sha2_password strings given by SQL (`IDENTIFIED ... AS`, SET PASSWORD):
//! only MySQL's default round count is taken, since every login attempt naming the
//! account runs the crypt (a 4,095,000-round string would cost seconds per attempt).
#![allow(clippy::unwrap_used)]

mod common;
use common::{err, q, session_in_d, TestDb};

#[test]
fn sha2_strings_with_other_round_counts_are_refused() {
    let db = TestDb::open("account-sha2");
    let mut s = session_in_d(&db);
    let body = format!("{}{}", "s".repeat(20), "a".repeat(43));
    q(
        &mut s,
        &format!("CREATE USER ok IDENTIFIED WITH caching_sha2_password AS '$A$005${body}'"),
    );
    for rounds in ["FFF", "006", "00A"] {
        let sql = format!(
            "CREATE USER slow IDENTIFIED WITH caching_sha2_password AS '$A${rounds}${body}'"
        );
        assert_eq!(err(&mut s, &sql), 1827, "{sql}");
        let sql =
            format!("ALTER USER ok IDENTIFIED WITH caching_sha2_password AS '$A${rounds}${body}'");
        assert_eq!(err(&mut s, &sql), 1827, "{sql}");
    }
}

/// A word after AS that starts with a multibyte letter is a syntax error, not a
/// panic in the hex-literal check (it sliced the word's first two bytes).
#[test]
fn multibyte_word_after_as_is_a_syntax_error() {
    let db = TestDb::open("account-sha2-word");
    let mut s = session_in_d(&db);
    for w in ["aé", "あ", "0é", "é0x"] {
        for sql in [
            format!("CREATE USER u IDENTIFIED WITH caching_sha2_password AS {w}"),
            format!("CREATE USER u IDENTIFIED WITH mysql_native_password AS {w}"),
        ] {
            assert_eq!(err(&mut s, &sql), 1064, "{sql}");
        }
    }
}

/// `0x` starts a hex literal, `0X` does not (MySQL, MariaDB: a syntax error).
#[test]
fn upper_case_0x_is_no_hex_literal() {
    let db = TestDb::open("account-sha2-0x");
    let mut s = session_in_d(&db);
    // '*' and 40 hex digits: a native hash, as a hex literal.
    let hash = format!("*{}", "A".repeat(40));
    let hex: String = hash.bytes().map(|b| format!("{b:02X}")).collect();
    q(
        &mut s,
        &format!("CREATE USER h IDENTIFIED WITH mysql_native_password AS 0x{hex}"),
    );
    for sql in [
        format!("CREATE USER u IDENTIFIED WITH mysql_native_password AS 0X{hex}"),
        format!("ALTER USER h IDENTIFIED WITH mysql_native_password AS 0X{hex}"),
    ] {
        assert_eq!(err(&mut s, &sql), 1064, "{sql}");
    }
}
