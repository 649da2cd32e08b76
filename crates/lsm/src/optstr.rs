//! Column family options in RocksDB's option-string syntax
//! (`write_buffer_size=64m;compression=kLZ4Compression;block_based_table_factory={block_size=16k}`),
//! as MyRocks' `rocksdb_default_cf_options` and `rocksdb_override_cf_options`
//! (`cf1={...};cf2={...}`) take them, and [`CfConfig`]: the options every column family
//! gets by name. Only what [`CfOptions`] honours is accepted; any other option, an
//! unsupported value or a malformed string is an error naming it, never ignored.
use crate::error::{Error, Result};
use crate::options::{CfOptions, PrepopulateBlockCache};
use crate::sstable::Compression;
use std::collections::BTreeMap;

/// Options per column family name: the defaults, and whole option sets for the
/// names an override string listed.
#[derive(Debug, Clone, Default)]
pub struct CfConfig {
    /// Options of a column family without an override (the default one included).
    pub default: CfOptions,
    /// Options of the named column families (`--override-cf-options`).
    pub overrides: BTreeMap<String, CfOptions>,
}

impl CfConfig {
    /// Builds the configuration: `base` with the default string applied, then each
    /// override's string applied to that.
    pub fn parse(base: &CfOptions, default: &str, overrides: &str) -> Result<CfConfig> {
        let default = apply(base, default)?;
        let mut o = BTreeMap::new();
        for (name, s) in split_overrides(overrides)? {
            let opts =
                apply(&default, &s).map_err(|e| bad(&format!("{e} (column family {name})")))?;
            if o.insert(name.clone(), opts).is_some() {
                return Err(bad(&format!("column family {name} is overridden twice")));
            }
        }
        Ok(CfConfig {
            default,
            overrides: o,
        })
    }

    /// The options of the column family `name`.
    pub fn options_for(&self, name: &str) -> CfOptions {
        self.overrides.get(name).unwrap_or(&self.default).clone()
    }
}

fn bad(m: &str) -> Error {
    Error::InvalidArgument(m.to_string())
}

/// Splits `a=1;b={c=2;d=3};` into `[("a","1"), ("b","c=2;d=3")]` (braces nest;
/// surrounding spaces trimmed; empty items skipped).
pub fn split_pairs(s: &str) -> Result<Vec<(String, String)>> {
    let mut out = Vec::new();
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let start = i;
        let mut depth = 0usize;
        while i < b.len() && !(b[i] == b';' && depth == 0) {
            match b[i] {
                b'{' => depth += 1,
                b'}' => {
                    depth = depth
                        .checked_sub(1)
                        .ok_or_else(|| bad(&format!("unbalanced '}}' in options '{s}'")))?
                }
                _ => {}
            }
            i += 1;
        }
        if depth != 0 {
            return Err(bad(&format!("unbalanced '{{' in options '{s}'")));
        }
        let item = s[start..i].trim();
        i += 1;
        if item.is_empty() {
            continue;
        }
        let Some((k, v)) = item.split_once('=') else {
            return Err(bad(&format!("option '{item}' has no '='")));
        };
        let (k, mut v) = (k.trim(), v.trim());
        if k.is_empty() {
            return Err(bad(&format!("option '{item}' has no name")));
        }
        if let Some(inner) = v.strip_prefix('{') {
            v = inner
                .strip_suffix('}')
                .ok_or_else(|| bad(&format!("option '{k}': text after '}}'")))?;
        }
        out.push((k.to_string(), v.to_string()));
    }
    Ok(out)
}

/// The longest column family name an override names: 64 bytes, after an
/// optional `rev:` (the reverse-ordered family of that name, as an index
/// COMMENT may name it: `rel::cf::valid_name`).
pub const MAX_CF_NAME: usize = 64;

/// Splits an override string `cf1={...};cf2={...}` into (name, option string).
pub fn split_overrides(s: &str) -> Result<Vec<(String, String)>> {
    split_pairs(s)?
        .into_iter()
        .map(|(name, v)| {
            if name.strip_prefix("rev:").unwrap_or(&name).len() > MAX_CF_NAME
                || name
                    .chars()
                    .any(|c| c.is_whitespace() || c == '{' || c == '}')
            {
                return Err(bad(&format!("bad column family name '{name}'")));
            }
            Ok((name, v))
        })
        .collect()
}

/// A size: a number with an optional k/m/g/t suffix (powers of 1024), as RocksDB reads them.
fn size(k: &str, v: &str) -> Result<u64> {
    let l = v.to_ascii_lowercase();
    let (num, mul) = match l.chars().last() {
        Some('k') => (&l[..l.len() - 1], 1u64 << 10),
        Some('m') => (&l[..l.len() - 1], 1 << 20),
        Some('g') => (&l[..l.len() - 1], 1 << 30),
        Some('t') => (&l[..l.len() - 1], 1 << 40),
        _ => (&l[..], 1),
    };
    num.parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(mul))
        .ok_or_else(|| bad(&format!("option {k}: bad size '{v}'")))
}

fn positive(k: &str, v: &str) -> Result<u64> {
    match size(k, v)? {
        0 => Err(bad(&format!("option {k}: must be positive"))),
        n => Ok(n),
    }
}

fn usize_of(k: &str, v: &str) -> Result<usize> {
    usize::try_from(positive(k, v)?).map_err(|_| bad(&format!("option {k}: too large")))
}

fn boolean(k: &str, v: &str) -> Result<bool> {
    match v.to_ascii_lowercase().as_str() {
        "true" | "1" => Ok(true),
        "false" | "0" => Ok(false),
        _ => Err(bad(&format!("option {k}: bad boolean '{v}'"))),
    }
}

/// A RocksDB compression name this engine writes.
fn compression(k: &str, v: &str) -> Result<Compression> {
    match v {
        "kNoCompression" => Ok(Compression::None),
        "kLZ4Compression" => Ok(Compression::Lz4),
        "kZSTD" | "kZSTDNotFinalCompression" => Ok(Compression::Zstd),
        "kSnappyCompression" | "kZlibCompression" | "kBZip2Compression" | "kLZ4HCCompression"
        | "kXpressCompression" => Err(bad(&format!(
            "option {k}: {v} is not supported (kNoCompression, kLZ4Compression, kZSTD are)"
        ))),
        _ => Err(bad(&format!("option {k}: unknown compression '{v}'"))),
    }
}

/// `base` with the options of `s` applied. `compression` sets every level unless
/// `compression_per_level` is also given (which wins, as in RocksDB).
pub fn apply(base: &CfOptions, s: &str) -> Result<CfOptions> {
    let mut o = base.clone();
    let mut all: Option<Compression> = None;
    let mut per_level: Option<Vec<Compression>> = None;
    for (k, v) in split_pairs(s)? {
        let v = v.as_str();
        match k.as_str() {
            "write_buffer_size" => o.write_buffer_size = usize_of(&k, v)?,
            "max_write_buffer_number" => o.max_write_buffer_number = usize_of(&k, v)?,
            "target_file_size_base" => o.target_file_size = positive(&k, v)?,
            "compression" => all = Some(compression(&k, v)?),
            "bottommost_compression" => {
                o.bottommost_compression = match v {
                    "kDisableCompressionOption" => None,
                    _ => Some(compression(&k, v)?),
                }
            }
            "compression_per_level" => {
                let l = v
                    .split(':')
                    .map(|c| compression(&k, c.trim()))
                    .collect::<Result<Vec<_>>>()?;
                if l.len() > crate::options::NUM_LEVELS {
                    return Err(bad(&format!(
                        "option {k}: {} levels given, the engine has {}",
                        l.len(),
                        crate::options::NUM_LEVELS
                    )));
                }
                per_level = Some(l);
            }
            "level0_file_num_compaction_trigger" => o.level0_compaction_trigger = usize_of(&k, v)?,
            "level0_slowdown_writes_trigger" => o.level0_slowdown_trigger = usize_of(&k, v)?,
            "level0_stop_writes_trigger" => o.level0_stop_trigger = usize_of(&k, v)?,
            "max_bytes_for_level_base" => o.max_bytes_for_level_base = positive(&k, v)?,
            "max_bytes_for_level_multiplier" => {
                let f: f64 = v
                    .parse()
                    .map_err(|_| bad(&format!("option {k}: bad number '{v}'")))?;
                if f.fract() != 0.0 || !(2.0..=1000.0).contains(&f) {
                    return Err(bad(&format!(
                        "option {k}: {v} is not supported (a whole number from 2 to 1000)"
                    )));
                }
                o.max_bytes_for_level_multiplier = f as u64;
            }
            "level_compaction_dynamic_level_bytes" => o.dynamic_level_bytes = boolean(&k, v)?,
            "soft_pending_compaction_bytes_limit" => o.soft_pending_compaction_bytes = size(&k, v)?,
            "hard_pending_compaction_bytes_limit" => o.hard_pending_compaction_bytes = size(&k, v)?,
            "prefix_extractor" => {
                o.prefix_len = match v {
                    "nullptr" => None,
                    _ => match v
                        .strip_prefix("rocksdb.FixedPrefix.")
                        .or(v.strip_prefix("fixed:"))
                    {
                        Some(n) => Some(usize_of(&k, n)?),
                        None => {
                            return Err(bad(&format!(
                                "option {k}: '{v}' is not supported (fixed:N or nullptr)"
                            )))
                        }
                    },
                }
            }
            "block_based_table_factory" => table_options(&mut o, v)?,
            _ => return Err(bad(&format!("unknown or unsupported option '{k}'"))),
        }
    }
    if let Some(l) = per_level {
        o.compression_per_level = l;
    } else if let Some(c) = all {
        o.compression_per_level = vec![c];
    }
    if o.level0_slowdown_trigger < o.level0_compaction_trigger
        || o.level0_stop_trigger < o.level0_slowdown_trigger
    {
        return Err(bad(
            "level0 triggers must satisfy compaction <= slowdown <= stop",
        ));
    }
    Ok(o)
}

/// The `block_based_table_factory={...}` options.
fn table_options(o: &mut CfOptions, s: &str) -> Result<()> {
    for (k, v) in split_pairs(s)? {
        let v = v.as_str();
        match k.as_str() {
            "block_size" => {
                let n = usize_of(&k, v)?;
                if n < 1024 {
                    return Err(bad("option block_size: at least 1024 bytes"));
                }
                o.block_size = n;
            }
            "block_restart_interval" => o.block_restart_interval = usize_of(&k, v)?,
            "filter_policy" => {
                o.bloom_bits_per_key = match v {
                    "nullptr" => 0,
                    _ => {
                        let mut p = v.split(':');
                        let (Some("bloomfilter"), Some(bits), legacy, None) =
                            (p.next(), p.next(), p.next(), p.next())
                        else {
                            return Err(bad(&format!(
                                "option filter_policy: '{v}' is not supported (bloomfilter:N:false)"
                            )));
                        };
                        if legacy.is_some_and(|l| l != "false" && l != "0") {
                            return Err(bad(
                                "option filter_policy: block-based (legacy) bloom filters are not supported",
                            ));
                        }
                        let b: f64 = bits.parse().map_err(|_| {
                            bad(&format!("option filter_policy: bad bits '{bits}'"))
                        })?;
                        if !(0.0..=100.0).contains(&b) {
                            return Err(bad("option filter_policy: bits per key from 0 to 100"));
                        }
                        b.round() as u32
                    }
                }
            }
            "prepopulate_block_cache" => {
                o.prepopulate_block_cache = match v {
                    "kDisable" => PrepopulateBlockCache::Disable,
                    "kFlushOnly" => PrepopulateBlockCache::FlushOnly,
                    _ => {
                        return Err(bad(&format!(
                    "option prepopulate_block_cache: '{v}' is not supported (kDisable, kFlushOnly)"
                )))
                    }
                }
            }
            "whole_key_filtering" if boolean(&k, v)? => {}
            _ => {
                return Err(bad(&format!(
                    "unknown or unsupported option 'block_based_table_factory.{k}'"
                )))
            }
        }
    }
    Ok(())
}
