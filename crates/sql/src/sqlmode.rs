//! `sql_mode`: the flag set a session runs under. SET validates a value as
//! MariaDB 10.11 does (names case-insensitive, comma-separated, trailing
//! spaces dropped, empty items skipped; numbers as bit masks; an unknown
//! name is 1231, a fraction 1232), expands the combination modes (ANSI,
//! TRADITIONAL, ...) into their members as MariaDB reports them, and refuses
//! with 1235 every flag Strata does not honour, so no flag is ever accepted
//! and ignored. Which flags are honoured and where: docs/SQL_MODE.md.
use crate::error::SqlError;
use rel::value::Value;

/// A set of sql_mode flags (MariaDB's bit numbers, so numeric values agree).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct SqlMode(pub u64);

/// MariaDB's flag names, bit `i` named `NAMES[i]`.
const NAMES: [&str; 35] = [
    "REAL_AS_FLOAT",
    "PIPES_AS_CONCAT",
    "ANSI_QUOTES",
    "IGNORE_SPACE",
    "IGNORE_BAD_TABLE_OPTIONS",
    "ONLY_FULL_GROUP_BY",
    "NO_UNSIGNED_SUBTRACTION",
    "NO_DIR_IN_CREATE",
    "POSTGRESQL",
    "ORACLE",
    "MSSQL",
    "DB2",
    "MAXDB",
    "NO_KEY_OPTIONS",
    "NO_TABLE_OPTIONS",
    "NO_FIELD_OPTIONS",
    "MYSQL323",
    "MYSQL40",
    "ANSI",
    "NO_AUTO_VALUE_ON_ZERO",
    "NO_BACKSLASH_ESCAPES",
    "STRICT_TRANS_TABLES",
    "STRICT_ALL_TABLES",
    "NO_ZERO_IN_DATE",
    "NO_ZERO_DATE",
    "ALLOW_INVALID_DATES",
    "ERROR_FOR_DIVISION_BY_ZERO",
    "TRADITIONAL",
    "NO_AUTO_CREATE_USER",
    "HIGH_NOT_PRECEDENCE",
    "NO_ENGINE_SUBSTITUTION",
    "PAD_CHAR_TO_FULL_LENGTH",
    "EMPTY_STRING_IS_NULL",
    "SIMULTANEOUS_ASSIGNMENT",
    "TIME_ROUND_FRACTIONAL",
];

const fn bit(name: &str) -> u64 {
    let mut i = 0;
    while i < NAMES.len() {
        if eq(NAMES[i].as_bytes(), name.as_bytes()) {
            return 1 << i;
        }
        i += 1;
    }
    panic!("unknown sql_mode flag")
}

/// Byte equality in a `const fn` (also `com::at`).
pub(crate) const fn eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

const fn bits(names: &[&str]) -> u64 {
    let mut m = 0;
    let mut i = 0;
    while i < names.len() {
        m |= bit(names[i]);
        i += 1;
    }
    m
}

/// The flags POSTGRESQL, MSSQL and DB2 set; ORACLE and MAXDB add to them.
const PG_FLAGS: u64 = bits(&[
    "PIPES_AS_CONCAT",
    "ANSI_QUOTES",
    "IGNORE_SPACE",
    "NO_KEY_OPTIONS",
    "NO_TABLE_OPTIONS",
    "NO_FIELD_OPTIONS",
]);

/// The combination modes and the flags each sets (MariaDB's expansions).
const COMBINATIONS: [(&str, u64); 9] = [
    ("POSTGRESQL", PG_FLAGS),
    (
        "ORACLE",
        PG_FLAGS | bits(&["NO_AUTO_CREATE_USER", "SIMULTANEOUS_ASSIGNMENT"]),
    ),
    ("MSSQL", PG_FLAGS),
    ("DB2", PG_FLAGS),
    ("MAXDB", PG_FLAGS | bit("NO_AUTO_CREATE_USER")),
    ("MYSQL323", bit("HIGH_NOT_PRECEDENCE")),
    ("MYSQL40", bit("HIGH_NOT_PRECEDENCE")),
    (
        "ANSI",
        bits(&[
            "REAL_AS_FLOAT",
            "PIPES_AS_CONCAT",
            "ANSI_QUOTES",
            "IGNORE_SPACE",
        ]),
    ),
    (
        "TRADITIONAL",
        bits(&[
            "STRICT_TRANS_TABLES",
            "STRICT_ALL_TABLES",
            "NO_ZERO_IN_DATE",
            "NO_ZERO_DATE",
            "ERROR_FOR_DIVISION_BY_ZERO",
            "NO_AUTO_CREATE_USER",
            "NO_ENGINE_SUBSTITUTION",
        ]),
    ),
];

/// The flags Strata honours, or that mean nothing for it (docs/SQL_MODE.md says
/// why for each); any other flag is refused at SET with 1235.
const SUPPORTED: u64 = bits(&[
    "STRICT_TRANS_TABLES",
    "STRICT_ALL_TABLES",
    "NO_AUTO_VALUE_ON_ZERO",
    "NO_ENGINE_SUBSTITUTION",
    "NO_AUTO_CREATE_USER",
    "NO_DIR_IN_CREATE",
    "NO_ZERO_IN_DATE",
    "NO_ZERO_DATE",
    "ERROR_FOR_DIVISION_BY_ZERO",
    "TRADITIONAL",
]);

impl SqlMode {
    pub const STRICT_TRANS_TABLES: u64 = bit("STRICT_TRANS_TABLES");
    pub const STRICT_ALL_TABLES: u64 = bit("STRICT_ALL_TABLES");
    pub const NO_AUTO_VALUE_ON_ZERO: u64 = bit("NO_AUTO_VALUE_ON_ZERO");
    pub const NO_BACKSLASH_ESCAPES: u64 = bit("NO_BACKSLASH_ESCAPES");
    pub const NO_ZERO_DATE: u64 = bit("NO_ZERO_DATE");
    pub const ERROR_FOR_DIVISION_BY_ZERO: u64 = bit("ERROR_FOR_DIVISION_BY_ZERO");

    /// Strata's default (`STRICT_TRANS_TABLES,NO_ENGINE_SUBSTITUTION`).
    pub const DEFAULT: SqlMode = SqlMode(bits(&["STRICT_TRANS_TABLES", "NO_ENGINE_SUBSTITUTION"]));

    /// Whether every flag of `mask` is set.
    pub fn has(self, mask: u64) -> bool {
        self.0 & mask == mask
    }

    /// Strict mode: a bad value for a column is an error, not a warning
    /// (every Strata table is transactional, so either flag makes it so).
    pub fn strict(self) -> bool {
        self.0 & (Self::STRICT_TRANS_TABLES | Self::STRICT_ALL_TABLES) != 0
    }

    /// The mode of a stored (normalized) value; the default for anything else.
    pub fn of(v: Option<&Value>) -> SqlMode {
        match v {
            Some(Value::Bytes(b)) => std::str::from_utf8(b)
                .ok()
                .and_then(|t| parse_text(t).ok())
                .unwrap_or(SqlMode::DEFAULT),
            _ => SqlMode::DEFAULT,
        }
    }

    /// The names as `SELECT @@sql_mode` shows them (bit order, upper case).
    pub fn names(self) -> String {
        NAMES
            .iter()
            .enumerate()
            .filter(|(i, _)| self.0 & (1 << i) != 0)
            .map(|(_, n)| *n)
            .collect::<Vec<_>>()
            .join(",")
    }

    /// The combination modes expanded into their flags.
    fn expanded(self) -> SqlMode {
        let mut m = self.0;
        for (name, members) in COMBINATIONS {
            if m & bit(name) != 0 {
                m |= members;
            }
        }
        SqlMode(m)
    }
}

/// Parses a textual value: names separated by commas (trailing spaces of the
/// whole value dropped, empty items skipped); the unknown item is the error.
fn parse_text(t: &str) -> Result<SqlMode, String> {
    let mut m = 0u64;
    for item in t.trim_end_matches(' ').split(',') {
        if item.is_empty() {
            continue;
        }
        match NAMES.iter().position(|n| n.eq_ignore_ascii_case(item)) {
            Some(i) => m |= 1 << i,
            None => return Err(item.to_string()),
        }
    }
    Ok(SqlMode(m).expanded())
}

/// The value a `SET sql_mode = v` stores (its normalized names), or the error:
/// 1231 for an unknown name or number, 1232 for a fraction, 1235 for a flag
/// Strata does not honour.
pub fn normalize(v: &Value) -> Result<Value, SqlError> {
    let m = match v {
        Value::Null => return Err(SqlError::wrong_value_for_var("sql_mode", "NULL")),
        Value::Int(_) | Value::UInt(_) => match v.to_i128() {
            Some(n) if (0..1i128 << NAMES.len()).contains(&n) => SqlMode(n as u64).expanded(),
            _ => {
                let shown = String::from_utf8_lossy(&v.text()).into_owned();
                return Err(SqlError::wrong_value_for_var("sql_mode", shown));
            }
        },
        Value::Decimal(..) | Value::Double(_) => {
            return Err(SqlError::wrong_type_for_var("sql_mode"))
        }
        other => {
            let t = String::from_utf8_lossy(&other.text()).into_owned();
            parse_text(&t).map_err(|item| SqlError::wrong_value_for_var("sql_mode", item))?
        }
    };
    let refused = m.0 & !SUPPORTED;
    if refused != 0 {
        return Err(SqlError::unsupported(format!(
            "sql_mode {} (not honoured by Strata; see docs/SQL_MODE.md)",
            SqlMode(refused).names()
        )));
    }
    Ok(Value::Bytes(m.names().into_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(v: Value) -> Result<String, u16> {
        normalize(&v)
            .map(|v| String::from_utf8_lossy(&v.text()).into_owned())
            .map_err(|e| e.code)
    }

    fn t(s: &str) -> Value {
        Value::Bytes(s.as_bytes().to_vec())
    }

    #[test]
    fn names_bits_and_combinations_as_mariadb() {
        assert_eq!(SqlMode(1 << 21).names(), "STRICT_TRANS_TABLES");
        assert_eq!(set(t("")).unwrap(), "");
        assert_eq!(set(t("  ")).unwrap(), "");
        assert_eq!(
            set(t("no_auto_value_on_zero,,strict_all_tables ")).unwrap(),
            "NO_AUTO_VALUE_ON_ZERO,STRICT_ALL_TABLES"
        );
        assert_eq!(set(Value::Int(1 << 19)).unwrap(), "NO_AUTO_VALUE_ON_ZERO");
        assert_eq!(set(t("foo")), Err(1231));
        assert_eq!(set(t(" ,")), Err(1231));
        assert_eq!(set(t("strict_trans_tables , no_dir_in_create")), Err(1231));
        assert_eq!(set(Value::Int(-1)), Err(1231));
        assert_eq!(set(Value::Int(1 << 35)), Err(1231));
        assert_eq!(set(Value::Null), Err(1231));
        assert_eq!(set(Value::Double(1.5)), Err(1232));
        assert_eq!(set(t("ANSI")), Err(1235));
        assert_eq!(set(t("ORACLE")), Err(1235));
    }
}
