//! DROP TABLE: every table a statement names goes in one synced catalog
//! write, which carries the statement's binary log record, so that no
//! transaction on any of them can commit (and be logged) between the drops,
//! and a crash leaves all of them or none.
use super::*;

impl Catalog {
    /// DROP TABLE, also of a table whose definition could not be read.
    /// Absent: `NoSuchTable`, or `Dropped::Absent` if `if_exists`.
    pub fn drop_table(&self, db: &str, name: &str, if_exists: bool) -> Result<Dropped> {
        let names = [(db.to_string(), name.to_string())];
        let d = self.drop_tables(&names, |_| {})?;
        match d.first().copied().unwrap_or(Dropped::Absent) {
            Dropped::Absent if !if_exists => Err(Error::NoSuchTable(format!("{db}.{name}"))),
            d => Ok(d),
        }
    }

    /// Drops the tables `names` (db, name) that are there (views are not
    /// tables: `Absent`) in one synced write; returns what became of each.
    /// `before_write` sees that, under the DDL lock, before the write (DROP
    /// TABLE words its binary log record from it: the record set then rides
    /// in the batch when anything is dropped).
    pub fn drop_tables(
        &self,
        names: &[(String, String)],
        before_write: impl FnOnce(&[Dropped]),
    ) -> Result<Vec<Dropped>> {
        let _g = self.lock_ddl();
        let st = self.state();
        let mut b = WriteBatch::new();
        let mut out = Vec::with_capacity(names.len());
        let mut gone: Vec<(&(String, String), Option<Unreadable>, Option<Arc<Table>>)> = Vec::new();
        for k in names {
            let (db, name) = (k.0.as_bytes(), k.1.as_bytes());
            if gone.iter().any(|g| g.0 == k) {
                out.push(Dropped::Absent);
            } else if let Some(u) = st.unreadable.get(k).filter(|u| !u.view) {
                delete_unreadable(&mut b, &k.0, &k.1, u);
                out.push(Dropped::Unreadable {
                    data_left: u.ids.is_empty(),
                });
                gone.push((k, Some(u.clone()), None));
            } else if let Some(t) = st.table(&k.0, &k.1) {
                b.delete(&key(b'T', &[db, name]));
                b.delete(&key(b'S', &[db, name]));
                out.push(Dropped::Table);
                gone.push((k, None, Some(t.clone())));
            } else {
                out.push(Dropped::Absent);
            }
        }
        before_write(&out);
        if b.is_empty() {
            // Nothing dropped: a record left is the caller's (IF EXISTS).
            return Ok(out);
        }
        crate::binlog::attach_ddl_record(&mut b);
        self.db.write(sync(), b)?;
        self.publish(|st| {
            for (k, u, _) in &gone {
                if u.is_some() {
                    st.unreadable.remove(*k);
                } else {
                    st.tables.remove(*k);
                }
            }
        });
        for (k, u, t) in &gone {
            if let Some(u) = u {
                self.reclaim_unreadable(&k.0, &k.1, u)?;
            }
            if let Some(t) = t {
                self.reclaim(&t.def)?;
            }
        }
        Ok(out)
    }
}
