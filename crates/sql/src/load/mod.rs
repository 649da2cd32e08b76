//! LOAD DATA [LOCAL] INFILE: the statement's text (`syntax`), the input
//! split into rows of fields (`reader`), and here the rows mapped onto the
//! table's columns and user variables, SET evaluated, and the rows stored.
//!
//! - The file: with LOCAL the client sends it (the sink's `local_infile`,
//!   MySQL's 0xFB request; refused with 1148 when `local_infile` is off);
//!   otherwise the server reads it, only inside `secure_file_priv` (1290
//!   outside it or when that is NULL; a relative name is taken relative to
//!   the current database's directory, as MySQL does; 13 for a missing
//!   file, as MariaDB).
//! - Fields: converted from the statement's CHARACTER SET (default
//!   character_set_database: utf8mb4/utf8mb3/utf8/binary as they are, latin1
//!   converted; others 1235) and stored as an INSERT would store the same
//!   strings, under sql_mode; a line with fewer fields than targets gives
//!   1261 per missing column, which gets NULL when its default is NULL and
//!   else its type's zero value ('' or 0: MariaDB's, not the column's
//!   DEFAULT), more fields give 1262 (both errors in strict mode). LOCAL acts as IGNORE (duplicates skipped, bad
//!   values adjusted with warnings), as in MySQL.
//! - Rows: into an empty table, with autocommit and no open transaction,
//!   they go through `bulk` (sorted, written as table files, ingested at the
//!   end; writers held out meanwhile); otherwise row by row in the
//!   statement's transaction (`dml::Inserter`).
//!
//! The answer is MySQL's "Records: n  Deleted: n  Skipped: n  Warnings: n".
pub mod reader;
pub mod syntax;

use crate::bulk::{self, BulkLoad, Dedup};
use crate::dml::{self, InsertPlan, InsertSource, OnDup};
use crate::env::StmtEnv;
use crate::error::{Result, SqlError};
use crate::expr::{Env, Expr};
use crate::result::{Outcome, ResultSink};
use crate::session::Session;
use reader::Reader;
use rel::catalog::Table;
use rel::value::Value;
use std::io::Read;
use syntax::{Dup, LoadStmt, Target};

/// Where each field of a line goes, and the table's SET expressions.
struct Mapping {
    /// Per field: a column of `cols` (by position) or a user variable.
    fields: Vec<Slot>,
    /// `(column, expression)` of SET, over a row of the table's columns.
    set: Vec<(usize, Expr)>,
    /// The plan's column list: the fields' columns, then SET's.
    cols: Vec<usize>,
    /// Per column of `cols`: what it gets when its field is missing (None:
    /// generated, AUTO_INCREMENT).
    missing: Vec<Option<Value>>,
    /// The table's column count (the width of the row SET reads).
    ncols: usize,
}

enum Slot {
    Col(usize),
    Var(String),
}

fn mapping(t: &Table, l: &LoadStmt) -> Result<Mapping> {
    let def = &t.def;
    let mut fields = Vec::new();
    let mut cols = Vec::new();
    match &l.targets {
        None => {
            for c in 0..def.columns.len() {
                fields.push(Slot::Col(cols.len()));
                cols.push(c);
            }
        }
        Some(list) => {
            for tg in list {
                match tg {
                    Target::Column(name) => {
                        let c = def
                            .column(name)
                            .ok_or_else(|| SqlError::unknown_column(name, "field list"))?;
                        fields.push(Slot::Col(cols.len()));
                        cols.push(c);
                    }
                    Target::Var(v) => fields.push(Slot::Var(v.to_ascii_lowercase())),
                }
            }
        }
    }
    let scope = crate::select::table_scope(t, &def.name);
    let mut b = crate::bind::Binder::new(&[]);
    let mut set = Vec::new();
    for a in &l.set {
        let (c, e) = dml::assignment(t, a, &mut b, &scope)?;
        set.push((c, e));
        if !cols.contains(&c) {
            cols.push(c);
        }
    }
    let missing = cols
        .iter()
        .map(|&c| {
            let col = &def.columns[c];
            if col.auto_increment {
                None
            } else if col.nullable
                && col.default.as_ref().is_none_or(|d| d.is_null())
                && !col.default_now
            {
                Some(Value::Null)
            } else {
                Some(crate::store::zero_value(col))
            }
        })
        .collect();
    Ok(Mapping {
        fields,
        set,
        cols,
        missing,
        ncols: def.columns.len(),
    })
}

/// The directory server files must be in: `None` when secure_file_priv is
/// empty (anywhere), 1290 when it is NULL (nowhere) or does not exist.
pub(crate) fn secure_root(s: &Session) -> Result<Option<std::path::PathBuf>> {
    let prv = s
        .get_var("secure_file_priv", true)
        .filter(|v| !v.is_null())
        .map(|v| String::from_utf8_lossy(&v.text()).into_owned())
        .ok_or_else(SqlError::secure_file_priv)?;
    if prv.is_empty() {
        return Ok(None);
    }
    std::fs::canonicalize(&prv)
        .map(Some)
        .map_err(|_| SqlError::secure_file_priv())
}

/// The file of a server-side LOAD DATA, inside secure_file_priv. A
/// relative name is relative to the current database's directory under
/// the datadir, as MySQL takes it.
fn open_server_file(s: &Session, name: &str) -> Result<(Box<dyn Read>, u64)> {
    let root = secure_root(s)?;
    let path = std::path::Path::new(name);
    let full = if path.is_absolute() {
        path.to_path_buf()
    } else {
        let data = s
            .get_var("datadir", true)
            .map(|v| String::from_utf8_lossy(&v.text()).into_owned())
            .unwrap_or_default();
        std::path::Path::new(&data)
            .join(s.db.as_deref().unwrap_or(""))
            .join(path)
    };
    let full = std::path::absolute(&full).unwrap_or(full);
    if let Some(root) = &root {
        // The file's directory must be inside (the file itself may not exist).
        let dir = full
            .parent()
            .and_then(|d| std::fs::canonicalize(d).ok())
            .ok_or_else(SqlError::secure_file_priv)?;
        if !dir.starts_with(root) {
            return Err(SqlError::secure_file_priv());
        }
    }
    let stat_err = |e: std::io::Error| {
        let errno = e.raw_os_error().unwrap_or(2);
        let what = match e.kind() {
            std::io::ErrorKind::NotFound => "No such file or directory".to_string(),
            std::io::ErrorKind::PermissionDenied => "Permission denied".to_string(),
            _ => e.to_string(),
        };
        SqlError::cant_get_stat(full.display(), errno, what)
    };
    let canon = std::fs::canonicalize(&full).map_err(stat_err)?;
    if let Some(root) = &root {
        if !canon.starts_with(root) {
            return Err(SqlError::secure_file_priv());
        }
    }
    if canon.is_dir() {
        return Err(SqlError::cant_get_stat(
            full.display(),
            21,
            "Is a directory",
        ));
    }
    let f = std::fs::File::open(&canon).map_err(stat_err)?;
    // Its size, for the progress report (0 when not a regular file).
    let size = f
        .metadata()
        .ok()
        .filter(|m| m.is_file())
        .map_or(0, |m| m.len());
    Ok((Box::new(f), size))
}

/// How the input's bytes become UTF-8 text.
#[derive(Clone, Copy)]
enum Charset {
    Utf8,
    Latin1,
}

fn charset(s: &Session, l: &LoadStmt) -> Result<Charset> {
    let name = match &l.charset {
        Some(c) => c.to_ascii_lowercase(),
        None => s
            .get_var("character_set_database", false)
            .map(|v| String::from_utf8_lossy(&v.text()).to_ascii_lowercase())
            .unwrap_or_else(|| "utf8mb4".into()),
    };
    match name.as_str() {
        "utf8mb4" | "utf8mb3" | "utf8" | "binary" | "ascii" => Ok(Charset::Utf8),
        "latin1" => Ok(Charset::Latin1),
        "default" => Ok(Charset::Utf8),
        _ if l.charset.is_some() => Err(SqlError::unsupported(format!(
            "LOAD DATA ... CHARACTER SET {name}"
        ))),
        _ => Ok(Charset::Utf8),
    }
}

fn field_value(f: reader::Field, cs: Charset) -> Value {
    match f {
        None => Value::Null,
        Some(b) => match cs {
            Charset::Utf8 => Value::Bytes(b),
            Charset::Latin1 if b.is_ascii() => Value::Bytes(b),
            Charset::Latin1 => Value::Bytes(
                b.iter()
                    .map(|&c| c as char)
                    .collect::<String>()
                    .into_bytes(),
            ),
        },
    }
}

/// Runs LOAD DATA.
pub fn run(s: &mut Session, l: &LoadStmt, sink: &mut dyn ResultSink) -> Result<Outcome> {
    s.check_write()?;
    let cs = charset(s, l)?;
    // LOCAL acts as IGNORE: the server cannot stop the client mid-file.
    let dup = match (l.dup, l.local) {
        (Dup::Error, true) => Dup::Ignore,
        (d, _) => d,
    };
    let (t, frozen) = resolve_and_freeze(s, l, dup)?;
    let map = mapping(&t, l)?;
    // Progress (SHOW PROCESSLIST): stage 1 reads the file (its bytes, of
    // its size when known: not for LOCAL, whose size the protocol does not
    // tell), stage 2 ends the load (the bulk path's sort and ingest).
    s.proc.progress_init(2, "Reading file", "bytes");
    let (input, size): (Box<dyn Read + '_>, u64) = if l.local {
        if s.var_int("local_infile") == 0 {
            return Err(SqlError::local_infile_disabled());
        }
        (sink.local_infile(&l.file)?, 0)
    } else {
        open_server_file(s, &l.file)?
    };
    let input = Progress {
        inner: input,
        proc: s.proc.clone(),
        done: 0,
        size,
    };
    let limit = s
        .get_var("max_allowed_packet", false)
        .and_then(|v| v.to_i128())
        .unwrap_or(64 << 20)
        .clamp(1024, 1 << 30) as usize;
    let mut rd = Reader::new(input, l.format.clone()).with_limit(limit);
    for _ in 0..l.ignore_lines {
        if !rd.skip_line().map_err(read_err)? {
            break;
        }
    }
    let plan = InsertPlan {
        table: t.clone(),
        cols: map.cols.clone(),
        source: InsertSource::Values(vec![]),
        on_dup: match dup {
            Dup::Error => OnDup::Error,
            Dup::Ignore => OnDup::Ignore,
            Dup::Replace => OnDup::Replace,
        },
        view_check: None,
    };
    let bulk = frozen.as_ref().map(|_| dup);
    load(s, l, &plan, &map, cs, bulk, &mut rd)
}

/// The table, and when it qualifies for the bulk path (binary log off,
/// autocommit outside a transaction; for REPLACE/IGNORE no UNIQUE secondary index; empty, see
/// `bulk::eligible`) held and frozen for it. Resolved again when a DDL
/// replaced it before it was frozen: rows must go to the table as it is
/// now, never to a stale definition.
fn resolve_and_freeze(
    s: &mut Session,
    l: &LoadStmt,
    dup: Dup,
) -> Result<(std::sync::Arc<Table>, Option<crate::ddl::Frozen>)> {
    for _ in 0..16 {
        let t = crate::select::resolve_table(&s.inst.catalog.state(), s.db.as_deref(), &l.table)?;
        // Ingested files never pass the binary log's writer: with the log
        // on, rows go one by one so that each is logged.
        let bulk_ok = s.inst.binlog.is_none()
            && s.autocommit()
            && !s.explicit()
            && (dup == Dup::Error || t.def.secondary.iter().all(|i| !i.unique));
        if !bulk_ok {
            return Ok((t, None));
        }
        let paused = s.pause_for_ddl();
        let f = crate::ddl::Frozen::new(s, &t);
        if paused {
            s.announce();
        }
        match f? {
            Some(f) => {
                let ok = bulk::eligible(s.inst.txdb.db(), f.table())?;
                return Ok((t, ok.then_some(f)));
            }
            // Being changed (an index build, an online rebuild): row by row.
            None if crate::ddl::is_current(s, &t) => return Ok((t, None)),
            // Replaced meanwhile: again with the new table.
            None => {}
        }
    }
    Err(SqlError::table_def_changed())
}

/// The input, counting its bytes into the session's progress report.
struct Progress<R> {
    inner: R,
    proc: std::sync::Arc<crate::procs::Proc>,
    done: u64,
    size: u64,
}

impl<R: Read> Read for Progress<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.done += n as u64;
        // A file that grew since it was opened: done of done.
        let max = if self.size == 0 {
            0
        } else {
            self.size.max(self.done)
        };
        self.proc.progress_report(self.done, max);
        Ok(n)
    }
}

fn read_err(e: std::io::Error) -> SqlError {
    if let Some(reader::LineTooLong(max)) = e.get_ref().and_then(|x| x.downcast_ref()) {
        return SqlError::load_line_too_large(max);
    }
    SqlError::engine(format!("LOAD DATA: error reading the input: {e}"))
}

/// Reads every line and calls `each(row number from 0, the plan's values)`;
/// user variables of the column list are set in `env` before SET runs.
fn for_each_line<R: Read>(
    l: &LoadStmt,
    map: &Mapping,
    cs: Charset,
    rd: &mut Reader<R>,
    env: &StmtEnv,
    each: &mut dyn FnMut(usize, Vec<Option<Value>>) -> Result<()>,
) -> Result<u64> {
    let strict = env.sql_mode().strict() && !l.local && l.dup != Dup::Ignore;
    let mut rn = 0usize;
    while let Some(fields) = rd.next_row().map_err(read_err)? {
        env.check_interrupt()?;
        let n = fields.len();
        let mut given: Vec<Option<Value>> = vec![None; map.cols.len()];
        let mut it = fields.into_iter();
        for slot in &map.fields {
            let v = it.next();
            match (slot, v) {
                (Slot::Col(i), Some(f)) => given[*i] = Some(field_value(f, cs)),
                (Slot::Var(name), Some(f)) => env.set_user_var(name, field_value(f, cs))?,
                (Slot::Var(name), None) => env.set_user_var(name, Value::Null)?,
                (Slot::Col(i), None) => {
                    given[*i] = map.missing[*i].clone();
                    if given[*i].is_some() {
                        let e = SqlError::too_few_records(rn + 1);
                        if strict {
                            return Err(e);
                        }
                        env.warn(e);
                    }
                }
            }
        }
        if n > map.fields.len() {
            let e = SqlError::too_many_records(rn + 1);
            if strict {
                return Err(e);
            }
            env.warn(e);
        }
        if !map.set.is_empty() {
            let mut row = vec![Value::Null; map.ncols];
            for (i, c) in map.cols.iter().enumerate() {
                if let Some(Some(v)) = given.get(i) {
                    row[*c] = v.clone();
                }
            }
            for (c, e) in &map.set {
                let v = e.eval(&row, env)?;
                row[*c] = v.clone();
                if let Some(i) = map.cols.iter().position(|x| x == c) {
                    given[i] = Some(v);
                }
            }
        }
        each(rn, given)?;
        rn += 1;
    }
    Ok(rn as u64)
}

fn info(records: u64, deleted: u64, skipped: u64, warnings: usize) -> String {
    format!("Records: {records}  Deleted: {deleted}  Skipped: {skipped}  Warnings: {warnings}")
}

/// Stores the rows: row by row in the statement's transaction, or with
/// `bulk` (how repeated keys go) into the empty table through table files
/// (held and frozen by the caller), ingested at the end.
fn load<R: Read>(
    s: &mut Session,
    l: &LoadStmt,
    plan: &InsertPlan,
    map: &Mapping,
    cs: Charset,
    bulk: Option<Dup>,
    rd: &mut Reader<R>,
) -> Result<Outcome> {
    let budget = crate::ddl::sortbuild::budget(s);
    // The bulk path's transaction never writes: the row path's checks need one.
    let mut txn = match bulk {
        Some(_) => s.inst.txdb.begin(txn::Isolation::ReadCommitted),
        None => s.statement_txn(),
    };
    let mut counts = bulk::Counts::default();
    let (result, warnings, assign) = {
        let env = StmtEnv::new(s, &[]);
        let st = s.inst.catalog.state();
        let r = (|| -> Result<(u64, dml::InsertResult)> {
            let w = s.writer(&st);
            let mut ins = dml::Inserter::new(plan, &env, w)?;
            ins.how.null_default = true;
            if l.local {
                ins.how.adjust = true;
            }
            let Some(dup) = bulk else {
                let records = for_each_line(l, map, cs, rd, &env, &mut |rn, given| {
                    ins.row(&mut txn, rn, given, None)
                })?;
                s.proc.progress_next_stage("End bulk insert");
                return Ok((records, ins.res));
            };
            let cat = &s.inst.catalog;
            let mut bl = BulkLoad::new(cat.db(), plan.table.clone(), false, budget)?;
            // KILL and max_statement_time stop the sorts and the merges too.
            if let Some(check) = crate::expr::Env::interrupt(&env) {
                bl.set_interrupt(check);
            }
            let records = for_each_line(l, map, cs, rd, &env, &mut |rn, given| {
                ins.row(&mut txn, rn, given, Some(&mut bl))
            })?;
            s.proc.progress_next_stage("End bulk insert");
            let dedup = match dup {
                Dup::Error => Dedup::Error,
                Dup::Ignore => Dedup::First,
                Dup::Replace => Dedup::Last,
            };
            let done = bl.finish(cat, dedup)?;
            counts = done.counts;
            let mut res = ins.res;
            res.affected = done.rows
                + if dup == Dup::Replace {
                    2 * done.dropped
                } else {
                    0
                };
            res.duplicates = done.dropped;
            if dup == Dup::Ignore {
                res.ignored.extend(done.dups);
            }
            Ok((records, res))
        })();
        (r, env.warnings.into_inner(), env.assign.into_inner())
    };
    s.bulk_counts.add(counts);
    finish_statement(s, txn, result, warnings, assign)
}

fn finish_statement(
    s: &mut Session,
    txn: txn::Txn,
    result: Result<(u64, dml::InsertResult)>,
    warnings: Vec<(&'static str, SqlError)>,
    assign: std::collections::HashMap<String, Value>,
) -> Result<Outcome> {
    s.user_vars.extend(assign);
    match result {
        Ok((records, res)) => {
            let n = warnings.len() + res.ignored.len();
            for (level, w) in warnings {
                s.warn(level, w);
            }
            let skipped = if res.ignored.is_empty() {
                0
            } else {
                res.duplicates
            };
            let deleted = if skipped == 0 { res.duplicates } else { 0 };
            for w in res.ignored {
                s.warn("Warning", w);
            }
            if let Some(id) = res.first_auto_id {
                s.last_insert_id = id;
            }
            s.row_count = res.affected as i64;
            s.end_statement(txn, None)?;
            Ok(Outcome {
                affected_rows: res.affected,
                last_insert_id: res.first_auto_id.unwrap_or(0),
                info: info(records, deleted, skipped, n),
                ..Default::default()
            })
        }
        Err(e) => {
            for (level, w) in warnings {
                s.warn(level, w);
            }
            s.end_statement(txn, Some(&e))?;
            Err(e)
        }
    }
}
