//! Opening the catalog: reading every record, with the policy for records
//! that do not decode (docs/formats/catalog.md, "Unreadable records"), finishing
//! or undoing rebuilds a crash interrupted, and recovering tables' counters.
use super::*;

impl Catalog {
    /// Loads the catalog from the engine (creating the default databases
    /// on a new instance).
    pub fn open(db: Db) -> Result<Catalog> {
        Self::open_with_ttl(db, Arc::default())
    }

    /// `open`, keeping `ttl` (the engine's compaction filter reads it) current
    /// with the catalog's TTL tables.
    pub fn open_with_ttl(db: Db, ttl: Arc<crate::ttl::Registry>) -> Result<Catalog> {
        let mut st = CatalogState::default();
        let mut next_id = FIRST_USER_INDEX_ID;
        let lo = keycodec::index_prefix(CATALOG_INDEX_ID).to_vec();
        let hi = prefix_successor(&lo);
        let mut it = db.iter(ReadOptions {
            lower_bound: Some(lo.clone()),
            upper_bound: hi,
            ..Default::default()
        })?;
        it.seek(&lo);
        let mut defs = Vec::new();
        let mut pending = Vec::new();
        let mut stats: HashMap<(String, String), crate::stats::TableStats> = HashMap::new();
        while it.valid() {
            let k = &it.key()[4..];
            match k.first() {
                Some(b'D') => {
                    // One unreadable record must not keep the rest from
                    // opening: the database exists (its tables open, its
                    // name stays taken), what needs its default fails.
                    let name = String::from_utf8_lossy(&k[1..]).into_owned();
                    let coll = decode_database(it.value());
                    if let Err(e) = &coll {
                        eprintln!(
                            "strata: the record of database {name} cannot be read ({e}): \
                             its tables open, creating tables in it fails until \
                             ALTER DATABASE rewrites it"
                        );
                    }
                    st.databases.insert(name, coll);
                }
                Some(b'T') => match TableDef::decode(it.value()) {
                    Ok(d) => defs.push(d),
                    // One unreadable definition must not keep the others
                    // from opening: the table is reported when used.
                    Err(e) => {
                        let (db, name) = split_name(&k[1..]);
                        eprintln!("strata: table {db}.{name} is not available: {e}");
                        st.unreadable
                            .insert((db, name), Unreadable::new(e, false, vec![]));
                    }
                },
                Some(b'V') => match ViewDef::decode(it.value()) {
                    Ok(v) => {
                        st.views.insert((v.db.clone(), v.name.clone()), Arc::new(v));
                    }
                    Err(e) => {
                        let (db, name) = split_name(&k[1..]);
                        eprintln!("strata: view {db}.{name} is not available: {e}");
                        st.unreadable
                            .insert((db, name), Unreadable::new(e, true, vec![]));
                    }
                },
                Some(b'S') => {
                    // Statistics only guide plans: a bad record is ignored.
                    let (db, name) = split_name(&k[1..]);
                    match crate::stats::TableStats::decode(it.value()) {
                        Ok(s) => {
                            stats.insert((db, name), s);
                        }
                        Err(e) => eprintln!("strata: statistics of {db}.{name} ignored: {e}"),
                    }
                }
                Some(b'U') => {
                    // An account that does not decode is left out (its
                    // user cannot log in) and reported; the record stays.
                    let (user, host) = split_name(&k[1..]);
                    match Account::decode(it.value()) {
                        Ok(a) if a.user == user && a.host == host => {
                            st.accounts.insert((user, host), Arc::new(a));
                        }
                        Ok(_) => eprintln!(
                            "strata: account '{user}'@'{host}' ignored: its record names another"
                        ),
                        Err(e) => eprintln!("strata: account '{user}'@'{host}' ignored: {e}"),
                    }
                }
                Some(b'A') => st.accounts_initialized = true,
                Some(b'N') => {
                    let v = it.value();
                    if v.len() != 4 {
                        return Err(Error::Corruption("catalog next-id record".into()));
                    }
                    next_id = u32::from_le_bytes([v[0], v[1], v[2], v[3]]);
                }
                Some(b'P') => {
                    let (k, v) = (&k[1..], it.value());
                    if k.len() != 4 || v.len() != 4 {
                        // Which ids it names is unknown: nothing is
                        // reclaimed and the record stays (the ids are below
                        // `N`, never given again).
                        eprintln!(
                            "strata: a pending-rebuild record cannot be read \
                             (key {k:02x?}, value {v:02x?}); left as it is"
                        );
                        it.next();
                        continue;
                    }
                    let first = u32::from_be_bytes([k[0], k[1], k[2], k[3]]);
                    pending.push((first, u32::from_le_bytes([v[0], v[1], v[2], v[3]])));
                }
                _ => return Err(Error::Corruption("unknown catalog record".into())),
            }
            it.next();
        }
        it.status()?;
        drop(it);
        // A rebuild that did not finish (a crash): its table kept the old
        // definition; the entries it wrote under its new ids go.
        for (first, end) in pending {
            reclaim_ids(&db, first, end)?;
            let mut b = WriteBatch::new();
            b.delete(&key(b'P', &[&first.to_be_bytes()]));
            db.write(sync(), b)?;
        }
        for def in defs {
            let (d, n) = (def.db.clone(), def.name.clone());
            let s = stats.remove(&(d.clone(), n.clone()));
            let ids: Vec<u32> = def.indexes().map(|i| i.id).collect();
            match load_table(&db, def, s) {
                Ok(t) => {
                    st.tables.insert((d, n), Arc::new(t));
                }
                Err(e @ (Error::Corruption(_) | Error::Internal(_))) => {
                    eprintln!("strata: table {d}.{n} is not available: {e}");
                    st.unreadable.insert((d, n), Unreadable::new(e, false, ids));
                }
                Err(e) => return Err(e),
            }
        }
        st.index_references();
        ttl.refresh(st.tables.values().map(|t| &**t));
        let cat = Catalog {
            db,
            state: RwLock::new(Arc::new(st)),
            version: AtomicU64::new(0),
            ddl: Mutex::new(next_id),
            ttl,
        };
        for name in ["test"] {
            if !cat.state().databases.contains_key(name) {
                cat.create_database(name, true, Collation::DEFAULT)?;
            }
        }
        Ok(cat)
    }
}

/// The (database, name) of a `T` or `V` key's rest.
pub(super) fn split_name(k: &[u8]) -> (String, String) {
    let mut parts = k.splitn(2, |b| *b == 0);
    let db = String::from_utf8_lossy(parts.next().unwrap_or(b"")).into_owned();
    let name = String::from_utf8_lossy(parts.next().unwrap_or(b"")).into_owned();
    (db, name)
}

/// Builds the in-memory table, recovering its counters from the data: the
/// next AUTO_INCREMENT value is one more than the largest stored in an
/// index led by that column (InnoDB before 8.0 does the same).
pub(super) fn load_table(
    db: &Db,
    def: TableDef,
    stats: Option<crate::stats::TableStats>,
) -> Result<Table> {
    let mut auto = 1u64;
    if let Some(c) = def.auto_inc_column() {
        if let Some(ix) = def.indexes().find(|ix| ix.columns.first() == Some(&c)) {
            if let Some(k) = last_key(db, ix)? {
                let col = &def.columns[c];
                let mut s = &k[4..];
                let v = keycodec::decode(&mut s, def.key_format, &col.ty, col.nullable)?;
                if let Some(i) = v.to_i128() {
                    auto = (i.max(0) as u64).saturating_add(1);
                }
            }
        }
    }
    let mut hidden = 1u64;
    if def.hidden_pk {
        if let Some(k) = last_key(db, &def.pk)? {
            if k.len() >= 12 {
                let mut a = [0u8; 8];
                a.copy_from_slice(&k[4..12]);
                hidden = u64::from_be_bytes(a).saturating_add(1);
            }
        }
    }
    let rows = match &stats {
        Some(s) => s.rows,
        None => crate::stats::engine_rows(db, &def),
    };
    let mut t = Table::new(def, auto, hidden);
    t.estimate = Arc::new(crate::stats::Estimate::new(rows, stats));
    Ok(t)
}

pub(super) fn last_key(db: &Db, ix: &crate::schema::Index) -> Result<Option<Vec<u8>>> {
    let lo = keycodec::index_prefix(ix.id).to_vec();
    let hi = keycodec::index_prefix(ix.id + 1).to_vec();
    let mut it = crate::keyrange::KeyIter::new(
        db,
        crate::cf::of(db, ix)?,
        ReadOptions::default(),
        &lo,
        Some(&hi),
    )?;
    it.seek_to_last();
    let r = if it.valid() {
        Some(it.key().to_vec())
    } else {
        None
    };
    it.status()?;
    Ok(r)
}

/// A database record's value (docs/formats/catalog.md): `0x01` for the
/// server default collation (what every release wrote before collations),
/// else `0x02` and the collation's id (u16 LE).
pub(super) fn encode_database(coll: Collation) -> Vec<u8> {
    if coll == Collation::DEFAULT {
        return vec![1];
    }
    let id = coll.id().to_le_bytes();
    vec![2, id[0], id[1]]
}

pub(super) fn decode_database(v: &[u8]) -> DbCollation {
    match v {
        [1] => Ok(Collation::DEFAULT),
        [2, a, b] => {
            let id = u16::from_le_bytes([*a, *b]);
            Collation::from_id(id).ok_or_else(|| format!("unknown collation id {id}"))
        }
        _ => Err(format!("unknown record format {v:02x?}")),
    }
}

#[cfg(test)]
mod database_record_tests {
    use super::*;

    #[test]
    fn database_records_round_trip_and_reject_bad_bytes() {
        for c in crate::collation::ALL {
            assert_eq!(decode_database(&encode_database(c)), Ok(c));
        }
        assert_eq!(encode_database(Collation::DEFAULT), vec![1]);
        assert!(decode_database(&[]).is_err());
        assert!(decode_database(&[2, 45]).is_err());
        assert!(decode_database(&[2, 0xff, 0xff]).is_err());
        assert!(decode_database(&[3, 45, 0]).is_err());
        assert!(decode_database(&[1, 0]).is_err());
    }
}
