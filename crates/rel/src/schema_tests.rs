//! Round trips of table definitions through their stored form, and
//! truncated or corrupt bytes refused.
use super::*;

pub(crate) fn sample() -> TableDef {
    let col = |n: &str, k: TypeKind, null: bool| Column {
        name: n.into(),
        ty: ColumnType::new(k),
        nullable: null,
        default: None,
        default_now: false,
        on_update_now: false,
        auto_increment: false,
        comment: String::new(),
    };
    let mut id = col("id", TypeKind::Int, false);
    id.auto_increment = true;
    let mut c = col("c", TypeKind::Char, false);
    c.ty.len = 120;
    c.default = Some(Value::Bytes(Vec::new()));
    let mut t = TableDef::new(
        "db".into(),
        "t".into(),
        vec![id, col("k", TypeKind::Int, true), c],
        Index {
            id: 300,
            name: "PRIMARY".into(),
            columns: vec![0],
            unique: true,
            primary: true,
            ..Default::default()
        },
        false,
        vec![Index {
            id: 301,
            name: "k_1".into(),
            columns: vec![1],
            unique: false,
            primary: false,
            ..Default::default()
        }],
        "ROCKSDB".into(),
        String::new(),
    );
    // The versions before 7 are those of key format 1 tables.
    t.key_format = KeyFormat::Trimmed;
    t.derive();
    t
}

#[test]
fn collations_round_trip_in_version_3_and_lossy_key_columns_live_in_the_value() {
    let mut t = sample();
    t.collation = Collation::Latin1SwedishCi;
    t.columns[2].ty.coll = Collation::Utf8mb4GeneralCi;
    let mut t = TableDef::new(
        t.db.clone(),
        t.name.clone(),
        t.columns.clone(),
        Index {
            columns: vec![2, 0],
            ..t.pk.clone()
        },
        false,
        t.secondary.clone(),
        t.engine.clone(),
        t.comment.clone(),
    );
    t.collation = Collation::Latin1SwedishCi;
    t.key_format = KeyFormat::Trimmed;
    t.derive();
    assert_eq!(
        t.value_cols,
        vec![1, 2],
        "the ci key column is also in the value"
    );
    assert!(!t.pk_in_key(2) && t.pk_in_key(0));
    let enc = t.encode();
    assert_eq!(enc[0], TABLE_DEF_V4);
    let back = TableDef::decode(&enc).unwrap();
    assert_eq!(back, t);
    assert_eq!(back.columns[2].ty.coll, Collation::Utf8mb4GeneralCi);
    for cut in 0..enc.len() {
        assert!(TableDef::decode(&enc[..cut]).is_err(), "cut at {cut}");
    }
    let mut bad = enc.clone();
    *bad.last_mut().unwrap() = 250; // no collation has id 250
    assert!(TableDef::decode(&bad).is_err());
}

#[test]
fn table_def_round_trips_and_rejects_garbage() {
    let t = sample();
    let enc = t.encode();
    assert_eq!(TableDef::decode(&enc).unwrap(), t);
    assert_eq!(t.value_cols, vec![1, 2]);
    for cut in 0..enc.len() {
        assert!(TableDef::decode(&enc[..cut]).is_err());
    }
    let mut bad = enc.clone();
    bad[0] = 9;
    assert!(TableDef::decode(&bad).is_err());
}

#[test]
fn foreign_keys_round_trip_in_version_2_and_garbage_is_refused() {
    let mut t = sample();
    assert_eq!(t.encode()[0], TABLE_DEF_V4, "general_ci: version 4");
    t.collation = Collation::Utf8mb4Bin;
    t.columns[2].ty.coll = Collation::Utf8mb4Bin;
    assert_eq!(t.encode()[0], TABLE_DEF_V1, "no foreign keys: version 1");
    t.foreign_keys.push(ForeignKey {
        name: "t_ibfk_1".into(),
        columns: vec![1, 0],
        parent_db: "db".into(),
        parent_table: "p".into(),
        parent_columns: vec!["a".into(), "b".into()],
        on_delete: FkAction::Cascade,
        on_update: FkAction::SetNull,
    });
    let enc = t.encode();
    assert_eq!(enc[0], TABLE_DEF_V2);
    assert_eq!(TableDef::decode(&enc).unwrap(), t);
    for cut in 0..enc.len() {
        assert!(TableDef::decode(&enc[..cut]).is_err(), "cut at {cut}");
    }
    let mut extra = enc.clone();
    extra.push(0);
    assert!(TableDef::decode(&extra).is_err(), "trailing byte");
    // An action code past SET NULL, and a child column out of range.
    let mut bad = enc.clone();
    let n = bad.len();
    bad[n - 1] = 7;
    assert!(TableDef::decode(&bad).is_err());
    t.foreign_keys[0].columns = vec![1, 9];
    assert!(TableDef::decode(&t.encode()).is_err());
}

#[test]
fn checks_round_trip_in_version_5_and_garbage_is_refused() {
    let mut t = sample();
    let v4 = t.encode();
    assert_eq!(
        v4[0], TABLE_DEF_V4,
        "no checks: the older version, unchanged"
    );
    t.checks = vec![
        Check {
            name: "k".into(),
            level: CheckLevel::Column,
            expr: "`k` >= 0".into(),
        },
        Check {
            name: "CONSTRAINT_1".into(),
            level: CheckLevel::Table,
            expr: "`k` < `id`".into(),
        },
    ];
    let enc = t.encode();
    assert_eq!(enc[0], TABLE_DEF_V5);
    assert_eq!(
        &enc[1..v4.len()],
        &v4[1..],
        "version 4 then the checks section"
    );
    assert_eq!(TableDef::decode(&enc).unwrap(), t);
    for cut in 0..enc.len() {
        assert!(TableDef::decode(&enc[..cut]).is_err(), "cut at {cut}");
    }
    let mut extra = enc.clone();
    extra.push(0);
    assert!(TableDef::decode(&extra).is_err(), "trailing byte");
    // An unknown level byte, an empty check list, an empty expression.
    let mut bad = enc.clone();
    let level_at = v4.len() + 1 + 1 + "k".len();
    assert_eq!(bad[level_at], 0);
    bad[level_at] = 7;
    assert!(TableDef::decode(&bad).is_err());
    let mut none = v4.clone();
    none[0] = TABLE_DEF_V5;
    none.push(0);
    assert!(TableDef::decode(&none).is_err());
    t.checks[1].expr.clear();
    assert!(TableDef::decode(&t.encode()).is_err());
    // Legacy collations with checks still write version 5 (with every section).
    let mut l = sample();
    l.collation = Collation::Utf8mb4Bin;
    l.columns[2].ty.coll = Collation::Utf8mb4Bin;
    assert_eq!(l.encode()[0], TABLE_DEF_V1);
    l.checks.push(Check {
        name: "c".into(),
        level: CheckLevel::Table,
        expr: "1".into(),
    });
    let enc = l.encode();
    assert_eq!(enc[0], TABLE_DEF_V5);
    assert_eq!(TableDef::decode(&enc).unwrap(), l);
}

#[test]
fn enum_and_set_members_round_trip_in_version_6() {
    use crate::members::Members;
    let mut t = sample();
    let v4 = t.encode();
    let mut e = ColumnType::new(TypeKind::Enum);
    e.members = Members::new(vec![b"b".to_vec(), b"it's".to_vec()]);
    let mut s = ColumnType::new(TypeKind::Set);
    s.members = Members::new(vec![b"x".to_vec(), "é".as_bytes().to_vec()]);
    t.columns.push(Column::plain("e", e));
    t.columns.push(Column::plain("s", s));
    t.value_cols
        .extend([t.columns.len() - 2, t.columns.len() - 1]);
    let enc = t.encode();
    assert_eq!(enc[0], TABLE_DEF_V6);
    let back = TableDef::decode(&enc).unwrap();
    assert_eq!(back, t);
    assert_eq!(
        back.columns[back.columns.len() - 2].ty.members.get(2),
        b"it's"
    );
    for cut in 0..enc.len() {
        assert!(TableDef::decode(&enc[..cut]).is_err(), "cut at {cut}");
    }
    let mut extra = enc.clone();
    extra.push(0);
    assert!(TableDef::decode(&extra).is_err(), "trailing byte");
    // ENUM/SET kinds in an older version are refused.
    let mut old = enc.clone();
    old[0] = TABLE_DEF_V5;
    assert!(TableDef::decode(&old).is_err());
    // A table without such columns keeps its older version.
    assert_eq!(v4[0], TABLE_DEF_V4);
}

#[test]
fn key_format_2_is_version_7_and_keeps_text_values_in_the_row() {
    let mut t = sample();
    t.key_format = KeyFormat::PadSpace;
    t.columns[2].ty.coll = Collation::Latin1Bin;
    t.pk.columns = vec![2, 0];
    t.derive();
    // A CHAR under a PAD SPACE _bin collation is read back from its key.
    assert_eq!(t.value_cols, vec![1]);
    t.columns[2].ty.kind = TypeKind::VarChar;
    t.derive();
    assert_eq!(t.value_cols, vec![1, 2], "a VARCHAR's trailing spaces");
    let enc = t.encode();
    assert_eq!(enc[0], TABLE_DEF_V7);
    assert_eq!(*enc.last().unwrap(), 2, "the key format byte");
    let back = TableDef::decode(&enc).unwrap();
    assert_eq!(back, t);
    for cut in 0..enc.len() {
        assert!(TableDef::decode(&enc[..cut]).is_err(), "cut at {cut}");
    }
    for bad_format in [0u8, 1, 3, 255] {
        let mut bad = enc.clone();
        *bad.last_mut().unwrap() = bad_format;
        assert!(TableDef::decode(&bad).is_err(), "{bad_format}");
    }
    let mut extra = enc.clone();
    extra.push(2);
    assert!(TableDef::decode(&extra).is_err());
    // The same table in format 1 writes an older version, read as format 1.
    t.key_format = KeyFormat::Trimmed;
    t.derive();
    let old = t.encode();
    assert!(old[0] < TABLE_DEF_V7);
    assert_eq!(
        TableDef::decode(&old).unwrap().key_format,
        KeyFormat::Trimmed
    );
}

#[test]
fn column_families_and_index_comments_round_trip_in_version_8() {
    for fmt in [KeyFormat::Trimmed, KeyFormat::PadSpace] {
        let mut t = sample();
        t.key_format = fmt;
        t.pk.cf = "cf_pk".into();
        t.pk.comment = "cfname=cf_pk".into();
        t.secondary[0].comment = "only words".into();
        let enc = t.encode();
        assert_eq!(enc[0], TABLE_DEF_V8);
        let back = TableDef::decode(&enc).unwrap();
        assert_eq!(back, t);
        // Every truncation is refused, never misread.
        for n in 0..enc.len() {
            assert!(TableDef::decode(&enc[..n]).is_err(), "cut at {n}");
        }
        // A family name that is not one is a decoding error.
        let mut bad = t.clone();
        bad.pk.cf = "bad name".into();
        assert!(TableDef::decode(&bad.encode()).is_err());
    }
    // Without comments or families a table keeps its version.
    let t = sample();
    assert_ne!(t.encode()[0], TABLE_DEF_V8);
    let mut p = sample();
    p.key_format = KeyFormat::PadSpace;
    assert_eq!(p.encode()[0], TABLE_DEF_V7);
}

#[test]
fn index_comments_name_column_families_as_myrocks_reads_them() {
    use crate::cf::from_comment;
    assert_eq!(from_comment("cfname=cf1"), Ok(Some("cf1".into())));
    assert_eq!(from_comment("cfname=cf1;"), Ok(Some("cf1".into())));
    assert_eq!(
        from_comment(" CFNAME=cf_2 ; other=1"),
        Ok(Some("cf_2".into()))
    );
    assert_eq!(from_comment("cf1"), Ok(Some("cf1".into())));
    assert_eq!(from_comment(""), Ok(None));
    assert_eq!(from_comment("default"), Ok(None));
    assert_eq!(from_comment("cfname=default"), Ok(None));
    assert_eq!(from_comment("the lookup index"), Ok(None));
    // Reverse-ordered families are their own names (MyRocks' `rev:`).
    assert_eq!(from_comment("rev:cf1"), Ok(Some("rev:cf1".into())));
    assert_eq!(from_comment("cfname=rev:cf1"), Ok(Some("rev:cf1".into())));
    for bad in [
        "rev:",
        "p0_cfname=a",
        "custom_p0_cfname=a;custom_p1_cfname=b",
        "cfname=",
        "cfname=a b",
        "cfname=__system__",
        "cfname=a;cfname=b",
        "ttl_duration=10",
        "ttl_col=ts",
    ] {
        assert!(from_comment(bad).is_err(), "{bad}");
    }
    assert!(crate::cf::valid_name(&"x".repeat(64)));
    assert!(!crate::cf::valid_name(&"x".repeat(65)));
}

#[test]
fn ttl_round_trips_in_version_9_and_bad_bytes_are_refused() {
    for col in [None, Some(1)] {
        let mut t = sample();
        // (100 and the column each fit in one varint byte: the last two.)
        t.ttl = Some(crate::ttl::Ttl { duration: 100, col });
        let enc = t.encode();
        assert_eq!(enc[0], TABLE_DEF_V9);
        assert_eq!(TableDef::decode(&enc).unwrap(), t);
        for n in 0..enc.len() {
            assert!(TableDef::decode(&enc[..n]).is_err(), "cut at {n}");
        }
        // A zero duration or a column past the last one does not decode.
        let mut zero = enc.clone();
        let at = zero.len() - 2;
        zero[at] = 0;
        assert!(TableDef::decode(&zero).is_err());
        let mut far = enc.clone();
        let last = far.len() - 1;
        far[last] = t.columns.len() as u8 + 1;
        assert!(TableDef::decode(&far).is_err());
    }
    // Without a TTL a table keeps its version.
    assert_ne!(sample().encode()[0], TABLE_DEF_V9);
}
