//! Views in the catalog: storing, dropping and renaming their `V` records.
use super::*;

impl Catalog {
    /// CREATE [OR REPLACE] VIEW and ALTER VIEW: stores `def` in one synced
    /// write. `replace`: an existing view of the name is replaced (a table
    /// of the name is still `TableExists`); `must_exist` (ALTER VIEW): the
    /// view must be there (`NoSuchTable`).
    pub fn put_view(&self, def: ViewDef, replace: bool, must_exist: bool) -> Result<()> {
        let _g = self.lock_ddl();
        let st = self.state();
        if !st.databases.contains_key(&def.db) {
            return Err(Error::NoSuchDb(def.db.clone()));
        }
        let is_view = st.view(&def.db, &def.name).is_some();
        if must_exist && !is_view {
            return Err(Error::NoSuchTable(format!("{}.{}", def.db, def.name)));
        }
        if st.name_taken(&def.db, &def.name) && !(is_view && (replace || must_exist)) {
            return Err(Error::TableExists(def.name.clone()));
        }
        let mut b = WriteBatch::new();
        b.put(
            &key(b'V', &[def.db.as_bytes(), def.name.as_bytes()]),
            &def.encode(),
        );
        crate::binlog::attach_ddl_record(&mut b);
        self.db.write(sync(), b)?;
        self.publish(|st| {
            st.views
                .insert((def.db.clone(), def.name.clone()), Arc::new(def));
        });
        Ok(())
    }

    /// DROP VIEW of the views named that exist (one synced write); returns
    /// the names (db, name) that are not views. `before_write` sees the
    /// views found and the other names under the DDL lock, before the
    /// write (DROP VIEW words its binary log record from them).
    pub fn drop_views(
        &self,
        names: &[(String, String)],
        before_write: impl FnOnce(&[(String, String)], &[(String, String)]),
    ) -> Result<Vec<(String, String)>> {
        let _g = self.lock_ddl();
        let st = self.state();
        // A view whose definition could not be read goes too.
        let unreadable_view = |k: &(String, String)| st.unreadable.get(k).is_some_and(|u| u.view);
        let (found, missing): (Vec<_>, Vec<_>) = names
            .iter()
            .cloned()
            .partition(|k| st.view(&k.0, &k.1).is_some() || unreadable_view(k));
        before_write(&found, &missing);
        if !found.is_empty() {
            let mut b = WriteBatch::new();
            for (d, n) in &found {
                b.delete(&key(b'V', &[d.as_bytes(), n.as_bytes()]));
            }
            crate::binlog::attach_ddl_record(&mut b);
            self.db.write(sync(), b)?;
            self.publish(|st| {
                for k in &found {
                    st.views.remove(k);
                    st.unreadable.remove(k);
                }
            });
        }
        Ok(missing)
    }

    /// RENAME TABLE of a view: the definition moves to the new name in one
    /// synced write.
    pub fn rename_view(&self, from: (&str, &str), to: (&str, &str)) -> Result<()> {
        let _g = self.lock_ddl();
        let st = self.state();
        let Some(v) = st.view(from.0, from.1) else {
            return Err(Error::NoSuchTable(format!("{}.{}", from.0, from.1)));
        };
        if !st.databases.contains_key(to.0) {
            return Err(Error::NoSuchDb(to.0.to_string()));
        }
        if st.name_taken(to.0, to.1) {
            return Err(Error::TableExists(to.1.to_string()));
        }
        let mut def = (**v).clone();
        def.db = to.0.to_string();
        def.name = to.1.to_string();
        let mut b = WriteBatch::new();
        b.delete(&key(b'V', &[from.0.as_bytes(), from.1.as_bytes()]));
        b.put(
            &key(b'V', &[to.0.as_bytes(), to.1.as_bytes()]),
            &def.encode(),
        );
        crate::binlog::attach_ddl_record(&mut b);
        self.db.write(sync(), b)?;
        self.publish(|st| {
            st.views.remove(&(from.0.to_string(), from.1.to_string()));
            st.views
                .insert((def.db.clone(), def.name.clone()), Arc::new(def));
        });
        Ok(())
    }
}
