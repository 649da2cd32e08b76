//! Table definitions (columns, primary key, secondary indexes) and their
//! serialized form in the catalog. Byte layout in docs/formats/catalog.md.
use crate::collation::Collation;
pub use crate::constraint::{Check, CheckLevel};
use crate::keycodec::KeyFormat;
use crate::value::{ColumnType, TypeKind, Value};
use crate::{Error, Result};
use lsm::coding::{put_length_prefixed, put_varint64, Decoder};

/// Version of the serialized table definition without foreign keys.
pub const TABLE_DEF_V1: u8 = 1;
/// Version 2 appends the foreign keys (written only by tables that have some).
pub const TABLE_DEF_V2: u8 = 2;
/// Version 3 appends the instant defaults after the foreign keys (written
/// only by tables with columns added by an instant ADD COLUMN).
pub const TABLE_DEF_V3: u8 = 3;
/// Version 4 appends the foreign keys (possibly none), the instant defaults
/// (possibly none), then the table's default collation and each column's
/// collation (written by tables whose collations are not those of versions
/// 1 to 3: `utf8mb4_bin` for character columns, `binary` for the others).
pub const TABLE_DEF_V4: u8 = 4;
/// Version 5 is version 4 followed by the CHECK constraints (written only
/// by tables that have some).
pub const TABLE_DEF_V5: u8 = 5;
/// Version 6 is version 5 with every section (possibly no checks) followed
/// by the members of each ENUM and SET column (written only by tables that
/// have such columns).
pub const TABLE_DEF_V6: u8 = 6;
/// Version 7 is version 6 with every section (possibly no checks, members
/// only for ENUM/SET columns) followed by the key format byte (2: PAD SPACE
/// segments, `KeyFormat::PadSpace`). Written by every table in key format
/// 2; a table in format 1 keeps writing the version it wrote before.
pub const TABLE_DEF_V7: u8 = 7;

/// Version 8 is version 7 (every section) whose key format byte may also be 1
/// (`KeyFormat::Trimmed`), followed by each index's column family name and
/// comment (strings, in index order, the primary key first). Written only by
/// tables with an index comment or column family.
pub const TABLE_DEF_V8: u8 = 8;

/// Version 9 is version 8 (every section, each index's column family and
/// comment) followed by the TTL: the duration in seconds (varint, > 0) and
/// the TTL column (varint: 0 for the time kept with each row, else the
/// column's position + 1). Written only by TTL tables.
pub const TABLE_DEF_V9: u8 = 9;

/// The key format byte of version 7 (`KeyFormat::PadSpace`).
const KEY_FORMAT_PAD_SPACE: u8 = 2;
/// The key format byte of a format-1 table (`KeyFormat::Trimmed`), version 8 only.
const KEY_FORMAT_TRIMMED: u8 = 1;

/// The collation a column had in definitions before version 4.
fn legacy_coll(ty: &ColumnType) -> Collation {
    if ty.is_text() {
        Collation::Utf8mb4Bin
    } else {
        Collation::Binary
    }
}

/// A column.
#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    pub name: String,
    pub ty: ColumnType,
    pub nullable: bool,
    /// DEFAULT value (already coerced); `None` = no DEFAULT clause.
    pub default: Option<Value>,
    /// DEFAULT CURRENT_TIMESTAMP (also ON UPDATE when `on_update_now`).
    pub default_now: bool,
    pub on_update_now: bool,
    pub auto_increment: bool,
    pub comment: String,
}

impl Column {
    /// A nullable column with no default, options or comment.
    pub fn plain(name: impl Into<String>, ty: ColumnType) -> Column {
        Column {
            name: name.into(),
            ty,
            nullable: true,
            default: None,
            default_now: false,
            on_update_now: false,
            auto_increment: false,
            comment: String::new(),
        }
    }
}

/// An index (the primary key is index 0 of a table).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Index {
    /// Key prefix of every entry (4 bytes big-endian).
    pub id: u32,
    pub name: String,
    /// Column positions in the table, in key order.
    pub columns: Vec<usize>,
    pub unique: bool,
    pub primary: bool,
    /// The engine column family holding the index's entries ("": the default
    /// one), as its COMMENT named it (`crate::cf::from_comment`).
    pub cf: String,
    /// The index's COMMENT as given (SHOW CREATE TABLE prints it).
    pub comment: String,
}

/// What a foreign key does to referencing rows when the referenced row is
/// deleted or its key updated (InnoDB's semantics; NO ACTION = RESTRICT).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FkAction {
    Restrict,
    NoAction,
    Cascade,
    SetNull,
}

impl FkAction {
    fn code(self) -> u8 {
        match self {
            FkAction::Restrict => 0,
            FkAction::NoAction => 1,
            FkAction::Cascade => 2,
            FkAction::SetNull => 3,
        }
    }

    fn from_code(c: u8) -> Option<FkAction> {
        Some(match c {
            0 => FkAction::Restrict,
            1 => FkAction::NoAction,
            2 => FkAction::Cascade,
            3 => FkAction::SetNull,
            _ => return None,
        })
    }

    /// The SQL words (`RESTRICT`, `NO ACTION`, `CASCADE`, `SET NULL`).
    pub fn sql(self) -> &'static str {
        match self {
            FkAction::Restrict => "RESTRICT",
            FkAction::NoAction => "NO ACTION",
            FkAction::Cascade => "CASCADE",
            FkAction::SetNull => "SET NULL",
        }
    }
}

/// A foreign key of the table that declares it (the child). The parent is
/// named, not linked: it may be dropped and created again while
/// foreign_key_checks is off, and is looked up when the key is enforced.
#[derive(Debug, Clone, PartialEq)]
pub struct ForeignKey {
    pub name: String,
    /// Child column positions, in key order.
    pub columns: Vec<usize>,
    pub parent_db: String,
    pub parent_table: String,
    /// Referenced column names, one per child column.
    pub parent_columns: Vec<String>,
    pub on_delete: FkAction,
    pub on_update: FkAction,
}

/// A table.
#[derive(Debug, Clone, PartialEq)]
pub struct TableDef {
    pub db: String,
    pub name: String,
    pub columns: Vec<Column>,
    /// Primary key; `hidden` tables use an 8-byte generated key instead.
    pub pk: Index,
    pub hidden_pk: bool,
    pub secondary: Vec<Index>,
    pub engine: String,
    pub comment: String,
    /// FOREIGN KEY constraints this table declares.
    pub foreign_keys: Vec<ForeignKey>,
    /// CHECK constraints, column-level ones first in column order, then
    /// table-level ones in declaration order (the order they are checked).
    pub checks: Vec<Check>,
    /// The table's default collation (DEFAULT CHARSET / COLLATE).
    pub collation: Collation,
    /// Values of columns added by an instant ADD COLUMN for rows stored
    /// before them: a row value holding fewer columns than `value_cols`
    /// reads value column `j` (>= `instant_from`) as `instant[j -
    /// instant_from]`. Empty when every row holds every column (a table
    /// rebuild writes full rows and clears it).
    pub instant: Vec<Value>,
    /// Position in `value_cols` of the first instantly added column.
    pub instant_from: usize,
    /// Cached: positions of the columns stored in the row value (those
    /// not in the primary key, and primary key columns whose key image
    /// does not give the value back: `keycodec::is_lossy`), in table order.
    pub value_cols: Vec<usize>,
    /// How index keys hold strings: `PadSpace` (format 2) for tables
    /// created or rebuilt by this release, `Trimmed` (format 1) for
    /// definitions written before key formats (catalog versions 1 to 6).
    pub key_format: KeyFormat,
    /// The table's TTL (MyRocks' `ttl_duration=`/`ttl_col=` COMMENT), if any.
    pub ttl: Option<crate::ttl::Ttl>,
}

impl TableDef {
    /// Builds a definition and its derived fields.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        db: String,
        name: String,
        columns: Vec<Column>,
        pk: Index,
        hidden_pk: bool,
        secondary: Vec<Index>,
        engine: String,
        comment: String,
    ) -> TableDef {
        let mut t = TableDef {
            db,
            name,
            columns,
            pk,
            hidden_pk,
            secondary,
            engine,
            comment,
            foreign_keys: Vec::new(),
            checks: Vec::new(),
            collation: Collation::DEFAULT,
            instant: Vec::new(),
            instant_from: 0,
            value_cols: Vec::new(),
            key_format: KeyFormat::PadSpace,
            ttl: None,
        };
        t.derive();
        t
    }

    /// Recomputes the cached fields after a change to columns or keys.
    pub fn derive(&mut self) {
        let pkc = if self.hidden_pk {
            &[][..]
        } else {
            &self.pk.columns[..]
        };
        self.value_cols = (0..self.columns.len())
            .filter(|&c| {
                !pkc.contains(&c) || crate::keycodec::is_lossy(&self.columns[c].ty, self.key_format)
            })
            .collect();
    }

    /// True when primary key column `c`'s value is read from the key (not
    /// from the row value).
    pub fn pk_in_key(&self, c: usize) -> bool {
        !crate::keycodec::is_lossy(&self.columns[c].ty, self.key_format)
    }

    /// The value a row stored before value column `j` existed reads for
    /// it (see `instant`), falling back to the column's default.
    pub fn missing_value(&self, j: usize) -> Value {
        if let Some(v) = j
            .checked_sub(self.instant_from)
            .and_then(|k| self.instant.get(k))
        {
            return v.clone();
        }
        self.value_cols
            .get(j)
            .and_then(|&c| self.columns[c].default.clone())
            .unwrap_or(Value::Null)
    }

    /// The table's id (its primary index id).
    pub fn id(&self) -> u32 {
        self.pk.id
    }

    /// Column position by (case-insensitive) name.
    pub fn column(&self, name: &str) -> Option<usize> {
        self.columns
            .iter()
            .position(|c| c.name.eq_ignore_ascii_case(name))
    }

    /// The AUTO_INCREMENT column, if any.
    pub fn auto_inc_column(&self) -> Option<usize> {
        self.columns.iter().position(|c| c.auto_increment)
    }

    /// All indexes, primary first (the hidden primary key included).
    pub fn indexes(&self) -> impl Iterator<Item = &Index> {
        std::iter::once(&self.pk).chain(self.secondary.iter())
    }

    /// Checks the limits a definition must respect to be stored (each one
    /// within what `decode` accepts, so a stored definition always reads
    /// back). MySQL's limits: 4,096 columns, 64 secondary indexes, 16 key
    /// parts, 64-character names.
    pub fn check_limits(&self) -> std::result::Result<(), Limit> {
        let long = |n: &str| n.chars().count() > MAX_IDENT;
        if bad_name(&self.db) || long(&self.db) {
            return Err(Limit::DbName(self.db.clone()));
        }
        if bad_name(&self.name) || long(&self.name) {
            return Err(Limit::TableName(self.name.clone()));
        }
        if self.columns.len() > MAX_COLUMNS {
            return Err(Limit::Columns);
        }
        if let Some(c) = self.columns.iter().find(|c| bad_name(&c.name)) {
            return Err(Limit::ColumnName(c.name.clone()));
        }
        if let Some(c) = self.columns.iter().find(|c| long(&c.name)) {
            return Err(Limit::Identifier(c.name.clone()));
        }
        if self.secondary.len() > MAX_INDEXES {
            return Err(Limit::Indexes);
        }
        // A foreign key's name is its index's (MariaDB's 1280 for both).
        let index_names = self.secondary.iter().map(|ix| &ix.name);
        if let Some(n) = index_names
            .chain(self.foreign_keys.iter().map(|fk| &fk.name))
            .find(|n| bad_name(n))
        {
            return Err(Limit::IndexName(n.clone()));
        }
        for ix in self.indexes() {
            if long(&ix.name) {
                return Err(Limit::Identifier(ix.name.clone()));
            }
            if ix.columns.len() > MAX_KEY_PARTS {
                return Err(Limit::KeyParts);
            }
        }
        if self.foreign_keys.len() > MAX_INDEXES {
            return Err(Limit::Indexes);
        }
        if self.checks.len() > crate::constraint::MAX_CHECKS {
            return Err(Limit::Checks);
        }
        if let Some(c) = self.checks.iter().find(|c| long(&c.name)) {
            return Err(Limit::Identifier(c.name.clone()));
        }
        for fk in &self.foreign_keys {
            for n in [&fk.name, &fk.parent_db, &fk.parent_table]
                .into_iter()
                .chain(&fk.parent_columns)
            {
                if long(n) {
                    return Err(Limit::Identifier(n.clone()));
                }
            }
            if fk.columns.len() > MAX_KEY_PARTS {
                return Err(Limit::KeyParts);
            }
        }
        Ok(())
    }

    /// Serializes the definition.
    pub fn encode(&self) -> Vec<u8> {
        let legacy = self.collation == Collation::Utf8mb4Bin
            && self.columns.iter().all(|c| c.ty.coll == legacy_coll(&c.ty));
        let version = if self.ttl.is_some() {
            TABLE_DEF_V9
        } else if self
            .indexes()
            .any(|i| !i.cf.is_empty() || !i.comment.is_empty())
        {
            TABLE_DEF_V8
        } else if self.key_format == KeyFormat::PadSpace {
            TABLE_DEF_V7
        } else if self.columns.iter().any(|c| c.ty.is_enum_or_set()) {
            TABLE_DEF_V6
        } else if !self.checks.is_empty() {
            TABLE_DEF_V5
        } else if !legacy {
            TABLE_DEF_V4
        } else if !self.instant.is_empty() {
            TABLE_DEF_V3
        } else if self.foreign_keys.is_empty() {
            TABLE_DEF_V1
        } else {
            TABLE_DEF_V2
        };
        let mut o = vec![version];
        put_length_prefixed(&mut o, self.db.as_bytes());
        put_length_prefixed(&mut o, self.name.as_bytes());
        put_length_prefixed(&mut o, self.engine.as_bytes());
        put_length_prefixed(&mut o, self.comment.as_bytes());
        o.push(self.hidden_pk as u8);
        put_varint64(&mut o, self.columns.len() as u64);
        for c in &self.columns {
            put_length_prefixed(&mut o, c.name.as_bytes());
            o.push(kind_code(c.ty.kind));
            o.push(c.ty.unsigned as u8);
            put_varint64(&mut o, c.ty.len as u64);
            o.push(c.ty.scale);
            let flags = (c.nullable as u8)
                | (c.default_now as u8) << 1
                | (c.on_update_now as u8) << 2
                | (c.auto_increment as u8) << 3
                | (c.default.is_some() as u8) << 4;
            o.push(flags);
            if let Some(d) = &c.default {
                encode_value(&mut o, d);
            }
            put_length_prefixed(&mut o, c.comment.as_bytes());
        }
        put_varint64(&mut o, 1 + self.secondary.len() as u64);
        for ix in self.indexes() {
            put_varint64(&mut o, ix.id as u64);
            put_length_prefixed(&mut o, ix.name.as_bytes());
            o.push(ix.unique as u8 | (ix.primary as u8) << 1);
            put_varint64(&mut o, ix.columns.len() as u64);
            for &c in &ix.columns {
                put_varint64(&mut o, c as u64);
            }
        }
        if version >= TABLE_DEF_V2 {
            put_varint64(&mut o, self.foreign_keys.len() as u64);
            for fk in &self.foreign_keys {
                put_length_prefixed(&mut o, fk.name.as_bytes());
                put_varint64(&mut o, fk.columns.len() as u64);
                for &c in &fk.columns {
                    put_varint64(&mut o, c as u64);
                }
                put_length_prefixed(&mut o, fk.parent_db.as_bytes());
                put_length_prefixed(&mut o, fk.parent_table.as_bytes());
                for n in &fk.parent_columns {
                    put_length_prefixed(&mut o, n.as_bytes());
                }
                o.push(fk.on_delete.code());
                o.push(fk.on_update.code());
            }
        }
        if version >= TABLE_DEF_V3 {
            put_varint64(&mut o, self.instant_from as u64);
            put_varint64(&mut o, self.instant.len() as u64);
            for v in &self.instant {
                encode_value(&mut o, v);
            }
        }
        if version >= TABLE_DEF_V4 {
            put_varint64(&mut o, self.collation.id() as u64);
            for c in &self.columns {
                put_varint64(&mut o, c.ty.coll.id() as u64);
            }
        }
        if version >= TABLE_DEF_V5 {
            crate::constraint::encode_checks(&mut o, &self.checks);
        }
        if version >= TABLE_DEF_V6 {
            for c in self.columns.iter().filter(|c| c.ty.is_enum_or_set()) {
                put_varint64(&mut o, c.ty.members.len() as u64);
                for m in c.ty.members.iter() {
                    put_length_prefixed(&mut o, m);
                }
            }
        }
        if version >= TABLE_DEF_V7 {
            o.push(match self.key_format {
                KeyFormat::PadSpace => KEY_FORMAT_PAD_SPACE,
                KeyFormat::Trimmed => KEY_FORMAT_TRIMMED,
            });
        }
        if version >= TABLE_DEF_V8 {
            for ix in self.indexes() {
                put_length_prefixed(&mut o, ix.cf.as_bytes());
                put_length_prefixed(&mut o, ix.comment.as_bytes());
            }
        }
        if let Some(t) = &self.ttl {
            put_varint64(&mut o, t.duration);
            put_varint64(&mut o, t.col.map_or(0, |c| c as u64 + 1));
        }
        o
    }

    /// Parses a serialized definition.
    pub fn decode(buf: &[u8]) -> Result<TableDef> {
        let bad = |w: &str| Error::Corruption(format!("table definition: {w}"));
        let mut d = Decoder::new(buf);
        let version = match d.u8() {
            Some(v @ TABLE_DEF_V1..=TABLE_DEF_V9) => v,
            other => return Err(bad(&format!("unknown version {other:?}"))),
        };
        let s = |d: &mut Decoder| -> Result<String> {
            let b = d.length_prefixed().ok_or_else(|| bad("string"))?;
            String::from_utf8(b.to_vec()).map_err(|_| bad("utf8"))
        };
        let db = s(&mut d)?;
        let name = s(&mut d)?;
        let engine = s(&mut d)?;
        let comment = s(&mut d)?;
        let hidden_pk = d.u8().ok_or_else(|| bad("hidden"))? != 0;
        let ncols = d.varint64().ok_or_else(|| bad("ncols"))? as usize;
        if ncols > 4096 {
            return Err(bad("too many columns"));
        }
        let mut columns = Vec::with_capacity(ncols);
        for _ in 0..ncols {
            let cname = s(&mut d)?;
            let kind = kind_from_code(d.u8().ok_or_else(|| bad("kind"))?)
                .ok_or_else(|| bad("unknown type"))?;
            let unsigned = d.u8().ok_or_else(|| bad("unsigned"))? != 0;
            let len = d.varint64().ok_or_else(|| bad("len"))? as u32;
            let scale = d.u8().ok_or_else(|| bad("scale"))?;
            let flags = d.u8().ok_or_else(|| bad("flags"))?;
            let default = if flags & 16 != 0 {
                Some(decode_value(&mut d).ok_or_else(|| bad("default"))?)
            } else {
                None
            };
            let ccomment = s(&mut d)?;
            columns.push(Column {
                name: cname,
                ty: {
                    let mut t = ColumnType {
                        kind,
                        unsigned,
                        len,
                        scale,
                        coll: Collation::Binary,
                        members: crate::members::Members::NONE,
                    };
                    t.coll = legacy_coll(&t);
                    t
                },
                nullable: flags & 1 != 0,
                default_now: flags & 2 != 0,
                on_update_now: flags & 4 != 0,
                auto_increment: flags & 8 != 0,
                default,
                comment: ccomment,
            });
        }
        let nix = d.varint64().ok_or_else(|| bad("nindexes"))? as usize;
        if nix == 0 || nix > 1024 {
            return Err(bad("index count"));
        }
        let mut idx = Vec::with_capacity(nix);
        for _ in 0..nix {
            let id = d.varint64().ok_or_else(|| bad("index id"))? as u32;
            let iname = s(&mut d)?;
            let f = d.u8().ok_or_else(|| bad("index flags"))?;
            let n = d.varint64().ok_or_else(|| bad("index columns"))? as usize;
            if n > 64 {
                return Err(bad("index columns"));
            }
            let mut cols = Vec::with_capacity(n);
            for _ in 0..n {
                let c = d.varint64().ok_or_else(|| bad("index column"))? as usize;
                if c >= ncols {
                    return Err(bad("index column out of range"));
                }
                cols.push(c);
            }
            idx.push(Index {
                id,
                name: iname,
                columns: cols,
                unique: f & 1 != 0,
                primary: f & 2 != 0,
                ..Default::default()
            });
        }
        let mut foreign_keys = Vec::new();
        if version >= TABLE_DEF_V2 {
            let n = d.varint64().ok_or_else(|| bad("foreign keys"))? as usize;
            if (n == 0 && version == TABLE_DEF_V2) || n > 1024 {
                return Err(bad("foreign key count"));
            }
            for _ in 0..n {
                let fname = s(&mut d)?;
                let k = d.varint64().ok_or_else(|| bad("foreign key columns"))? as usize;
                if k == 0 || k > 64 {
                    return Err(bad("foreign key columns"));
                }
                let mut cols = Vec::with_capacity(k);
                for _ in 0..k {
                    let c = d.varint64().ok_or_else(|| bad("foreign key column"))? as usize;
                    if c >= ncols {
                        return Err(bad("foreign key column out of range"));
                    }
                    cols.push(c);
                }
                let parent_db = s(&mut d)?;
                let parent_table = s(&mut d)?;
                let mut parent_columns = Vec::with_capacity(k);
                for _ in 0..k {
                    parent_columns.push(s(&mut d)?);
                }
                let mut action = || {
                    d.u8()
                        .and_then(FkAction::from_code)
                        .ok_or_else(|| bad("foreign key action"))
                };
                let on_delete = action()?;
                let on_update = action()?;
                foreign_keys.push(ForeignKey {
                    name: fname,
                    columns: cols,
                    parent_db,
                    parent_table,
                    parent_columns,
                    on_delete,
                    on_update,
                });
            }
        }
        let (mut instant_from, mut instant) = (0, Vec::new());
        if version >= TABLE_DEF_V3 {
            instant_from = d.varint64().ok_or_else(|| bad("instant position"))? as usize;
            let n = d.varint64().ok_or_else(|| bad("instant count"))? as usize;
            if (n == 0 && version == TABLE_DEF_V3) || instant_from.saturating_add(n) > ncols {
                return Err(bad("instant count"));
            }
            for _ in 0..n {
                instant.push(decode_value(&mut d).ok_or_else(|| bad("instant value"))?);
            }
        }
        let mut collation = Collation::Utf8mb4Bin;
        if version >= TABLE_DEF_V4 {
            let coll = |d: &mut Decoder| {
                d.varint64()
                    .and_then(|id| u16::try_from(id).ok())
                    .and_then(Collation::from_id)
                    .ok_or_else(|| bad("collation"))
            };
            collation = coll(&mut d)?;
            for c in columns.iter_mut() {
                c.ty.coll = coll(&mut d)?;
            }
        }
        let mut checks = Vec::new();
        if version >= TABLE_DEF_V5 {
            checks = crate::constraint::decode_checks(&mut d, ncols, version >= TABLE_DEF_V6)
                .ok_or_else(|| bad("checks"))?;
        }
        if version >= TABLE_DEF_V6 {
            for c in columns.iter_mut().filter(|c| c.ty.is_enum_or_set()) {
                c.ty.members = decode_members(&mut d, c.ty.kind).ok_or_else(|| bad("members"))?;
            }
        } else if columns.iter().any(|c| c.ty.is_enum_or_set()) {
            return Err(bad("ENUM or SET column before version 6"));
        }
        let key_format = if version >= TABLE_DEF_V7 {
            match d.u8() {
                Some(KEY_FORMAT_PAD_SPACE) => KeyFormat::PadSpace,
                Some(KEY_FORMAT_TRIMMED) if version >= TABLE_DEF_V8 => KeyFormat::Trimmed,
                other => return Err(bad(&format!("unknown key format {other:?}"))),
            }
        } else {
            KeyFormat::Trimmed
        };
        if version >= TABLE_DEF_V8 {
            for ix in idx.iter_mut() {
                ix.cf = s(&mut d)?;
                ix.comment = s(&mut d)?;
                if !ix.cf.is_empty() && !crate::cf::valid_name(&ix.cf) {
                    return Err(bad(&format!("column family name {:?}", ix.cf)));
                }
            }
        }
        let mut ttl = None;
        if version >= TABLE_DEF_V9 {
            let duration = d.varint64().filter(|&n| n > 0).ok_or_else(|| bad("ttl"))?;
            let col = match d.varint64().ok_or_else(|| bad("ttl column"))? {
                0 => None,
                c if (c as usize) <= ncols => Some(c as usize - 1),
                _ => return Err(bad("ttl column out of range")),
            };
            ttl = Some(crate::ttl::Ttl { duration, col });
        }
        if !d.is_empty() {
            return Err(bad("trailing bytes"));
        }
        let pk = idx.remove(0);
        let mut def = TableDef::new(db, name, columns, pk, hidden_pk, idx, engine, comment);
        def.foreign_keys = foreign_keys;
        def.checks = checks;
        def.collation = collation;
        def.instant = instant;
        def.instant_from = instant_from;
        def.key_format = key_format;
        def.ttl = ttl;
        def.derive();
        Ok(def)
    }
}

/// Most columns in a table (MySQL's limit; `decode` accepts up to 4,096).
pub const MAX_COLUMNS: usize = 4096;
/// Most secondary indexes in a table (MySQL's; `decode` accepts 1,023).
pub const MAX_INDEXES: usize = 64;
/// Most columns in one index (MySQL's; `decode` accepts 64).
pub const MAX_KEY_PARTS: usize = 16;
/// Longest database, table, column or index name, in characters.
pub const MAX_IDENT: usize = 64;

/// True for a database, table, column or index name MariaDB refuses whatever
/// its length: empty, or ending with a space (1102, 1103, 1166, 1280).
pub fn bad_name(n: &str) -> bool {
    n.is_empty() || n.ends_with(' ')
}

/// A limit a table definition is over.
#[derive(Debug, Clone, PartialEq)]
pub enum Limit {
    Columns,
    Indexes,
    KeyParts,
    Checks,
    Identifier(String),
    /// Empty, ending with a space, or too long (MariaDB's 1102).
    DbName(String),
    /// Empty, ending with a space, or too long (1103).
    TableName(String),
    /// Empty or ending with a space (1166; too long is `Identifier`).
    ColumnName(String),
    /// Empty or ending with a space (1280; too long is `Identifier`).
    IndexName(String),
}

impl std::fmt::Display for Limit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Limit::Columns => write!(f, "Too many columns"),
            Limit::Indexes => write!(f, "Too many keys specified; max {MAX_INDEXES} keys allowed"),
            Limit::KeyParts => write!(
                f,
                "Too many key parts specified; max {MAX_KEY_PARTS} parts allowed"
            ),
            Limit::Checks => write!(
                f,
                "Too many CHECK constraints; max {} allowed",
                crate::constraint::MAX_CHECKS
            ),
            Limit::Identifier(n) => write!(f, "Identifier name '{n}' is too long"),
            Limit::DbName(n) => write!(f, "Incorrect database name '{n}'"),
            Limit::TableName(n) => write!(f, "Incorrect table name '{n}'"),
            Limit::ColumnName(n) => write!(f, "Incorrect column name '{n}'"),
            Limit::IndexName(n) => write!(f, "Incorrect index name '{n}'"),
        }
    }
}

/// One ENUM/SET column's member list: 1 to 65,535 members (64 for SET) of
/// at most 1,020 bytes each (255 characters).
fn decode_members(d: &mut Decoder, kind: TypeKind) -> Option<crate::members::Members> {
    let n = d.varint64()? as usize;
    let max = if kind == TypeKind::Set {
        crate::members::MAX_SET_MEMBERS
    } else {
        crate::members::MAX_ENUM_MEMBERS
    };
    if n == 0 || n > max {
        return None;
    }
    let mut list = Vec::with_capacity(n.min(1024));
    for _ in 0..n {
        let b = d.length_prefixed()?;
        if b.len() > 1020 || std::str::from_utf8(b).is_err() {
            return None;
        }
        list.push(b.to_vec());
    }
    Some(crate::members::Members::new(list))
}

const KINDS: [TypeKind; 21] = [
    TypeKind::TinyInt,
    TypeKind::SmallInt,
    TypeKind::MediumInt,
    TypeKind::Int,
    TypeKind::BigInt,
    TypeKind::Float,
    TypeKind::Double,
    TypeKind::Decimal,
    TypeKind::Char,
    TypeKind::VarChar,
    TypeKind::Text,
    TypeKind::Binary,
    TypeKind::VarBinary,
    TypeKind::Blob,
    TypeKind::Date,
    TypeKind::DateTime,
    TypeKind::Timestamp,
    TypeKind::Time,
    TypeKind::Year,
    TypeKind::Enum,
    TypeKind::Set,
];

fn kind_code(k: TypeKind) -> u8 {
    KINDS.iter().position(|&x| x == k).unwrap_or(0) as u8 + 1
}

fn kind_from_code(c: u8) -> Option<TypeKind> {
    KINDS.get((c as usize).checked_sub(1)?).copied()
}

/// Self-describing value encoding (tag byte + payload), for defaults.
pub fn encode_value(o: &mut Vec<u8>, v: &Value) {
    match v {
        Value::Null => o.push(0),
        Value::Int(i) => {
            o.push(1);
            o.extend_from_slice(&i.to_le_bytes());
        }
        Value::UInt(u) => {
            o.push(2);
            o.extend_from_slice(&u.to_le_bytes());
        }
        Value::Double(d) => {
            o.push(3);
            o.extend_from_slice(&d.to_le_bytes());
        }
        Value::Decimal(m, s) => {
            o.push(4);
            o.extend_from_slice(&m.to_le_bytes());
            o.push(*s);
        }
        Value::Bytes(b) => {
            o.push(5);
            put_length_prefixed(o, b);
        }
        Value::Date(d) => {
            o.push(6);
            o.extend_from_slice(&d.to_le_bytes());
        }
        Value::DateTime(t) => {
            o.push(7);
            o.extend_from_slice(&t.to_le_bytes());
        }
        Value::Time(t) => {
            o.push(8);
            o.extend_from_slice(&t.to_le_bytes());
        }
    }
}

/// Inverse of `encode_value`.
pub fn decode_value(d: &mut Decoder) -> Option<Value> {
    let tag = d.u8()?;
    let arr8 = |d: &mut Decoder| -> Option<[u8; 8]> {
        let b = d.bytes(8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Some(a)
    };
    Some(match tag {
        0 => Value::Null,
        1 => Value::Int(i64::from_le_bytes(arr8(d)?)),
        2 => Value::UInt(u64::from_le_bytes(arr8(d)?)),
        3 => Value::Double(f64::from_le_bytes(arr8(d)?)),
        4 => {
            let b = d.bytes(16)?;
            let mut a = [0u8; 16];
            a.copy_from_slice(b);
            Value::Decimal(i128::from_le_bytes(a), d.u8()?)
        }
        5 => Value::Bytes(d.length_prefixed()?.to_vec()),
        6 => {
            let b = d.bytes(4)?;
            Value::Date(i32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        }
        7 => Value::DateTime(i64::from_le_bytes(arr8(d)?)),
        8 => Value::Time(i64::from_le_bytes(arr8(d)?)),
        _ => return None,
    })
}

#[cfg(test)]
#[path = "schema_tests.rs"]
pub(crate) mod tests;
