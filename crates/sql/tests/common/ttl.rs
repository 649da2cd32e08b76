//! Set-ups shared by the TTL table tests (ttl.rs, ttl_fk.rs): rows written
//! at a chosen time, and a TTL parent table with a CASCADE and a RESTRICT
//! child.
use super::q;
use sql::Session;

/// Runs `sql` with row times `secs` seconds from now.
pub fn insert_at(s: &mut Session, secs: i64, sql: &str) {
    q(s, &format!("SET GLOBAL strata_debug_ttl_rec_ts = {secs}"));
    q(s, sql);
    q(s, "SET GLOBAL strata_debug_ttl_rec_ts = 0");
}

/// Creates `p (id INT PRIMARY KEY, k <ktype> UNIQUE)`, a TTL table
/// (100 s); `c (id, pk)`, whose `pk` references `p (k)` ON DELETE CASCADE;
/// and `r (id, pk)`, whose `pk` references each of `r_refs` (columns of p)
/// with RESTRICT. `pk` has type `ktype` in both children.
pub fn ttl_parent_with_children(s: &mut Session, ktype: &str, r_refs: &[&str]) {
    q(
        s,
        &format!(
            "CREATE TABLE p (id INT PRIMARY KEY, k {ktype}, UNIQUE KEY uk (k)) \
             COMMENT='ttl_duration=100;'"
        ),
    );
    q(
        s,
        &format!(
            "CREATE TABLE c (id INT PRIMARY KEY, pk {ktype}, KEY kp (pk), \
             FOREIGN KEY (pk) REFERENCES p (k) ON DELETE CASCADE)"
        ),
    );
    let fks: String = r_refs
        .iter()
        .map(|c| format!(", FOREIGN KEY (pk) REFERENCES p ({c})"))
        .collect();
    q(
        s,
        &format!("CREATE TABLE r (id INT PRIMARY KEY, pk {ktype}, KEY kp (pk){fks})"),
    );
}
