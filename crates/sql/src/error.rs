//! SQL errors as MySQL reports them: an error number, a SQLSTATE and a
//! message. Lower-layer errors (rel, txn, engine) map onto MySQL's codes
//! here, in one place.

/// An error sent to the client as an ERR packet.
#[derive(Debug, Clone, PartialEq)]
pub struct SqlError {
    pub code: u16,
    pub state: &'static str,
    pub msg: String,
}

/// Result alias.
pub type Result<T> = std::result::Result<T, SqlError>;

impl SqlError {
    /// An error with a code, SQLSTATE and message.
    pub fn new(code: u16, state: &'static str, msg: impl Into<String>) -> SqlError {
        SqlError {
            code,
            state,
            msg: msg.into(),
        }
    }
    /// 1064 syntax error.
    pub fn parse(msg: impl std::fmt::Display) -> SqlError {
        SqlError::new(
            1064,
            "42000",
            format!("You have an error in your SQL syntax; {msg}"),
        )
    }
    /// 1235 feature not supported.
    pub fn unsupported(what: impl std::fmt::Display) -> SqlError {
        SqlError::new(
            1235,
            "42000",
            format!("This version of Strata doesn't yet support '{what}'"),
        )
    }
    /// 1054 unknown column.
    pub fn unknown_column(name: &str, place: &str) -> SqlError {
        SqlError::new(
            1054,
            "42S22",
            format!("Unknown column '{name}' in '{place}'"),
        )
    }
    /// 1146 no such table.
    pub fn no_table(db: &str, t: &str) -> SqlError {
        SqlError::new(1146, "42S02", format!("Table '{db}.{t}' doesn't exist"))
    }
    /// 1046 no database selected.
    pub fn no_db() -> SqlError {
        SqlError::new(1046, "3D000", "No database selected")
    }
    /// 1105 unknown error (internal problems).
    pub fn internal(msg: impl Into<String>) -> SqlError {
        SqlError::new(1105, "HY000", msg)
    }
    /// True for errors after which MySQL rolls back the whole transaction
    /// (deadlock).
    pub fn rolls_back_transaction(&self) -> bool {
        self.code == 1213
    }
}

impl std::fmt::Display for SqlError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ERROR {} ({}): {}", self.code, self.state, self.msg)
    }
}

impl std::error::Error for SqlError {}

impl From<txn::Error> for SqlError {
    fn from(e: txn::Error) -> Self {
        match e {
            txn::Error::LockWaitTimeout => SqlError::new(
                1205,
                "HY000",
                "Lock wait timeout exceeded; try restarting transaction",
            ),
            txn::Error::Deadlock => SqlError::new(
                1213,
                "40001",
                "Deadlock found when trying to get lock; try restarting transaction",
            ),
            txn::Error::Engine(e) => lsm_error(e),
            #[allow(unreachable_patterns)]
            other => SqlError::internal(other.to_string()),
        }
    }
}

fn lsm_error(e: lsm::Error) -> SqlError {
    match e {
        lsm::Error::NoSpace(m) => SqlError::new(1021, "HY000", format!("Disk full: {m}")),
        lsm::Error::ReadOnly(m) => SqlError::new(
            1036,
            "HY000",
            format!("Storage engine is read only after a write error: {m}"),
        ),
        lsm::Error::Corruption { file, offset, what } => SqlError::new(
            1030,
            "HY000",
            format!(
                "Got error from storage engine: corruption in {file} at offset {offset}: {what}"
            ),
        ),
        other => SqlError::new(
            1030,
            "HY000",
            format!("Got error from storage engine: {other}"),
        ),
    }
}

impl From<lsm::Error> for SqlError {
    fn from(e: lsm::Error) -> Self {
        lsm_error(e)
    }
}

impl From<rel::Error> for SqlError {
    fn from(e: rel::Error) -> Self {
        use rel::Error as E;
        match e {
            E::Engine(e) => lsm_error(e),
            E::Txn(t) => t.into(),
            E::DupKey(k, ix) => SqlError::new(
                1062,
                "23000",
                format!("Duplicate entry '{k}' for key '{ix}'"),
            ),
            E::NoSuchDb(d) => SqlError::new(1049, "42000", format!("Unknown database '{d}'")),
            E::NoSuchTable(t) => SqlError::new(1146, "42S02", format!("Table '{t}' doesn't exist")),
            E::DbExists(d) => SqlError::new(
                1007,
                "HY000",
                format!("Can't create database '{d}'; database exists"),
            ),
            E::TableExists(t) => {
                SqlError::new(1050, "42S01", format!("Table '{t}' already exists"))
            }
            E::Limit(l) => {
                use rel::schema::Limit as L;
                let (code, state) = match l {
                    L::Columns => (1117, "HY000"),
                    L::Indexes => (1069, "42000"),
                    L::KeyParts => (1070, "42000"),
                    L::Identifier(_) => (1059, "42000"),
                };
                SqlError::new(code, state, l.to_string())
            }
            E::Unreadable(t, why) => SqlError::new(
                1030,
                "HY000",
                format!("Got error from storage engine: the definition of table {t} cannot be read ({why})"),
            ),
            E::Corruption(m) => SqlError::new(
                1030,
                "HY000",
                format!("Got error from storage engine: corruption: {m}"),
            ),
            E::Internal(m) => SqlError::internal(m),
        }
    }
}
