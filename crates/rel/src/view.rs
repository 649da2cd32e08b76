//! View definitions: what CREATE VIEW stores in the catalog (a `V` record,
//! docs/formats/catalog.md) and decodes at open. The SELECT is kept as text;
//! the SQL layer parses and expands it where the view is named.
use crate::{Error, Result};
use lsm::coding::{put_length_prefixed, put_varint64, Decoder};

/// The stored form's version bytes: 2 adds the CHECK OPTION byte (a
/// version 1 definition has none).
const VIEW_DEF_V1: u8 = 1;
const VIEW_DEF_V2: u8 = 2;

/// `WITH [CASCADED | LOCAL] CHECK OPTION` of CREATE VIEW.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckOption {
    None = 0,
    Local = 1,
    Cascaded = 2,
}

impl CheckOption {
    /// information_schema.VIEWS.CHECK_OPTION.
    pub fn name(self) -> &'static str {
        match self {
            CheckOption::None => "NONE",
            CheckOption::Local => "LOCAL",
            CheckOption::Cascaded => "CASCADED",
        }
    }
}

/// ALGORITHM= of CREATE VIEW (shown, not acted on: every view is expanded
/// as a derived table).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Algorithm {
    Undefined = 0,
    Merge = 1,
    TempTable = 2,
}

impl Algorithm {
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Undefined => "UNDEFINED",
            Algorithm::Merge => "MERGE",
            Algorithm::TempTable => "TEMPTABLE",
        }
    }
}

/// A view as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ViewDef {
    pub db: String,
    pub name: String,
    /// The explicit column list of CREATE VIEW v (a, b) (empty: the
    /// SELECT's own column names).
    pub columns: Vec<String>,
    /// The SELECT, as text.
    pub query: String,
    pub algorithm: Algorithm,
    /// DEFINER's user and host.
    pub definer_user: String,
    pub definer_host: String,
    /// SQL SECURITY INVOKER (false: DEFINER).
    pub invoker: bool,
    /// The session's character_set_client and collation_connection at
    /// CREATE VIEW (SHOW CREATE VIEW and information_schema.VIEWS show them).
    pub charset_client: String,
    pub collation_connection: String,
    /// WITH [CASCADED | LOCAL] CHECK OPTION.
    pub check: CheckOption,
}

impl ViewDef {
    /// Serializes the definition.
    pub fn encode(&self) -> Vec<u8> {
        let mut o = vec![VIEW_DEF_V2];
        put_length_prefixed(&mut o, self.db.as_bytes());
        put_length_prefixed(&mut o, self.name.as_bytes());
        put_varint64(&mut o, self.columns.len() as u64);
        for c in &self.columns {
            put_length_prefixed(&mut o, c.as_bytes());
        }
        put_length_prefixed(&mut o, self.query.as_bytes());
        o.push(self.algorithm as u8);
        put_length_prefixed(&mut o, self.definer_user.as_bytes());
        put_length_prefixed(&mut o, self.definer_host.as_bytes());
        o.push(self.invoker as u8);
        put_length_prefixed(&mut o, self.charset_client.as_bytes());
        put_length_prefixed(&mut o, self.collation_connection.as_bytes());
        o.push(self.check as u8);
        o
    }

    /// Reads a stored definition; anything malformed (or trailing) is
    /// `Corruption`.
    pub fn decode(buf: &[u8]) -> Result<ViewDef> {
        let bad = |w: &str| Error::Corruption(format!("view definition: {w}"));
        let mut d = Decoder::new(buf);
        let version = match d.u8() {
            Some(v @ (VIEW_DEF_V1 | VIEW_DEF_V2)) => v,
            other => return Err(bad(&format!("unknown version {other:?}"))),
        };
        let s = |d: &mut Decoder| -> Result<String> {
            let b = d.length_prefixed().ok_or_else(|| bad("string"))?;
            String::from_utf8(b.to_vec()).map_err(|_| bad("utf8"))
        };
        let db = s(&mut d)?;
        let name = s(&mut d)?;
        let n = d.varint64().ok_or_else(|| bad("ncols"))?;
        if n > 4096 {
            return Err(bad("too many columns"));
        }
        let mut columns = Vec::with_capacity(n as usize);
        for _ in 0..n {
            columns.push(s(&mut d)?);
        }
        let query = s(&mut d)?;
        let algorithm = match d.u8() {
            Some(0) => Algorithm::Undefined,
            Some(1) => Algorithm::Merge,
            Some(2) => Algorithm::TempTable,
            _ => return Err(bad("algorithm")),
        };
        let definer_user = s(&mut d)?;
        let definer_host = s(&mut d)?;
        let invoker = match d.u8() {
            Some(0) => false,
            Some(1) => true,
            _ => return Err(bad("security")),
        };
        let charset_client = s(&mut d)?;
        let collation_connection = s(&mut d)?;
        let check = match (version, d.u8()) {
            (VIEW_DEF_V1, None) => CheckOption::None,
            (VIEW_DEF_V2, Some(0)) => CheckOption::None,
            (VIEW_DEF_V2, Some(1)) => CheckOption::Local,
            (VIEW_DEF_V2, Some(2)) => CheckOption::Cascaded,
            _ => return Err(bad("check option")),
        };
        if !d.is_empty() {
            return Err(bad("trailing bytes"));
        }
        Ok(ViewDef {
            db,
            name,
            columns,
            query,
            algorithm,
            definer_user,
            definer_host,
            invoker,
            charset_client,
            collation_connection,
            check,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> ViewDef {
        ViewDef {
            db: "test".into(),
            name: "v".into(),
            columns: vec!["x".into(), "y".into()],
            query: "SELECT a, b FROM t".into(),
            algorithm: Algorithm::Merge,
            definer_user: "root".into(),
            definer_host: "localhost".into(),
            invoker: true,
            charset_client: "utf8mb4".into(),
            collation_connection: "utf8mb4_general_ci".into(),
            check: CheckOption::Cascaded,
        }
    }

    #[test]
    fn round_trip() {
        let v = sample();
        assert_eq!(ViewDef::decode(&v.encode()).unwrap(), v);
    }

    #[test]
    fn every_truncation_and_trailing_byte_refused() {
        let b = sample().encode();
        for n in 0..b.len() {
            assert!(ViewDef::decode(&b[..n]).is_err(), "prefix {n}");
        }
        let mut long = b.clone();
        long.push(0);
        assert!(ViewDef::decode(&long).is_err());
        let mut v3 = b.clone();
        v3[0] = 3;
        assert!(ViewDef::decode(&v3).is_err());
        let mut bad_check = b;
        *bad_check.last_mut().unwrap() = 3;
        assert!(ViewDef::decode(&bad_check).is_err());
    }

    #[test]
    fn version_1_reads_without_check_option() {
        let v = sample();
        let mut b = v.encode();
        b[0] = 1;
        b.pop();
        let got = ViewDef::decode(&b).unwrap();
        assert_eq!(got.check, CheckOption::None);
        assert_eq!(
            ViewDef {
                check: v.check,
                ..got
            },
            v
        );
    }
}
