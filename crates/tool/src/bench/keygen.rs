//! db_bench's generators, bit for bit: `Random64` (std::mt19937_64), `Random`
//! (Park-Miller, for values), `GenerateKeyFromInt` keys and `RandomGenerator`
//! values, and the per-benchmark key sequences of `DoWrite`, `ReadRandom` and
//! `SeekRandom` (RocksDB tools/db_bench_tool.cc, same in 7.8 and 11.x).
//!
//! Each thread of each benchmark gets `Random64(seed_base + n)`, where n counts
//! the threads started so far in the invocation (1 for the first benchmark's
//! first thread): a chained run `fillrandom,overwrite,readrandom` reads keys
//! drawn by another seed than the fill's. Random writes and random reads call
//! `Next()` twice per key (the first draw picks one of several databases, then
//! the key is `Next() % num`); seekrandom draws once per key.

/// RocksDB's `Random64`: the 64-bit Mersenne Twister (std::mt19937_64).
pub struct Random64 {
    mt: [u64; 312],
    i: usize,
}

impl Random64 {
    pub fn new(seed: u64) -> Random64 {
        let mut mt = [0u64; 312];
        mt[0] = seed;
        for i in 1..312 {
            mt[i] = 6364136223846793005u64
                .wrapping_mul(mt[i - 1] ^ (mt[i - 1] >> 62))
                .wrapping_add(i as u64);
        }
        Random64 { mt, i: 312 }
    }

    pub fn next(&mut self) -> u64 {
        if self.i >= 312 {
            for k in 0..312 {
                let y =
                    (self.mt[k] & 0xFFFF_FFFF_8000_0000) | (self.mt[(k + 1) % 312] & 0x7FFF_FFFF);
                let mut v = self.mt[(k + 156) % 312] ^ (y >> 1);
                if y & 1 == 1 {
                    v ^= 0xB502_6F5A_A966_19E9;
                }
                self.mt[k] = v;
            }
            self.i = 0;
        }
        let mut y = self.mt[self.i];
        self.i += 1;
        y ^= (y >> 29) & 0x5555_5555_5555_5555;
        y ^= (y << 17) & 0x71D6_7FFF_EDA6_0000;
        y ^= (y << 37) & 0xFFF7_EEE0_0000_0000;
        y ^ (y >> 43)
    }
}

/// RocksDB's `Random` (seed = seed * 16807 mod 2^31-1), used for values.
pub struct Random(u32);

impl Random {
    const M: u32 = 2147483647;
    pub fn new(s: u32) -> Random {
        Random(if s & Self::M != 0 { s & Self::M } else { 1 })
    }
    pub fn next(&mut self) -> u32 {
        let product = self.0 as u64 * 16807;
        let mut s = ((product >> 31) + (product & Self::M as u64)) as u32;
        if s > Self::M {
            s -= Self::M;
        }
        self.0 = s;
        s
    }
}

/// `GenerateKeyFromInt` without a prefix: `v` big-endian in the first
/// min(8, key_size) bytes, the rest '0'.
pub fn make_key(v: u64, key_size: usize, key: &mut Vec<u8>) {
    key.clear();
    let fill = key_size.min(8);
    for i in 0..fill {
        key.push((v >> ((fill - i - 1) * 8)) as u8);
    }
    key.resize(key_size, b'0');
}

/// `RandomGenerator`: about 1 MiB of 100-byte pieces, each `compression_ratio`
/// x 100 random printable bytes (`Random(301)`, ' ' + Next() % 95) repeated;
/// values are consecutive slices of it, wrapping to the start.
pub struct Values {
    data: Vec<u8>,
    pos: usize,
}

impl Values {
    pub fn new(ratio: f64, value_size: usize) -> Values {
        let mut rnd = Random::new(301);
        let mut data = Vec::with_capacity((1 << 20) + 100);
        let raw_len = ((100.0 * ratio) as usize).max(1);
        while data.len() < value_size.max(1 << 20) {
            let raw: Vec<u8> = (0..raw_len)
                .map(|_| b' ' + (rnd.next() % 95) as u8)
                .collect();
            let start = data.len();
            while data.len() - start < 100 {
                data.extend_from_slice(&raw);
            }
            data.truncate(start + 100);
        }
        Values { data, pos: 0 }
    }

    pub fn generate(&mut self, len: usize) -> &[u8] {
        if self.pos + len > self.data.len() {
            self.pos = 0;
        }
        self.pos += len;
        &self.data[self.pos - len..self.pos]
    }
}

/// How a benchmark draws key numbers from its thread's `Random64`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyOrder {
    /// fillseq: 0, 1, 2, ... in every thread (no draws).
    Sequential,
    /// fillrandom, overwrite, fillsync, readrandom: one draw discarded (the
    /// database pick), then `Next() % n`.
    RandomPair,
    /// seekrandom: `Next() % n`.
    Random,
}

/// The key numbers one thread of one benchmark uses.
pub struct KeyGen {
    rand: Random64,
    order: KeyOrder,
    n: u64,
    next: u64,
}

impl KeyGen {
    /// `seed` is the thread's (seed_base + threads started so far); `n` the key space.
    pub fn new(seed: u64, order: KeyOrder, n: u64) -> KeyGen {
        KeyGen {
            rand: Random64::new(seed),
            order,
            n: n.max(1),
            next: 0,
        }
    }

    pub fn next_key(&mut self) -> u64 {
        match self.order {
            KeyOrder::Sequential => {
                self.next += 1;
                self.next - 1
            }
            KeyOrder::RandomPair => {
                self.rand.next();
                self.rand.next() % self.n
            }
            KeyOrder::Random => self.rand.next() % self.n,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mt19937_64_matches_the_cpp_standard() {
        // [rand.predef]: the 10000th output of a default-constructed
        // std::mt19937_64 (seed 5489) is 9981545732273789042.
        let mut r = Random64::new(5489);
        for _ in 0..9999 {
            r.next();
        }
        assert_eq!(r.next(), 9981545732273789042);
    }

    #[test]
    fn fillrandom_keys_match_db_bench() {
        // `db_bench --benchmarks=fillrandom --num=1000 --seed=42` (RocksDB 7.8.3), first
        // eight puts of its WAL (`ldb dump_wal --print_value`): keys 0x3D3, 0x2C9, ...
        // The thread's seed is seed_base + 1.
        let mut g = KeyGen::new(43, KeyOrder::RandomPair, 1000);
        let keys: Vec<u64> = (0..8).map(|_| g.next_key()).collect();
        assert_eq!(keys, [979, 713, 226, 214, 14, 510, 438, 275]);
        let mut k = Vec::new();
        make_key(979, 16, &mut k);
        assert_eq!(
            k,
            b"\x00\x00\x00\x00\x00\x00\x03\xd3"
                .iter()
                .chain(b"00000000")
                .copied()
                .collect::<Vec<u8>>()
        );
        make_key(0x0102030405060708, 6, &mut k);
        assert_eq!(k, [3, 4, 5, 6, 7, 8]);
    }

    #[test]
    fn values_match_db_bench() {
        // The same WAL's first value: 50 random printable bytes twice.
        let mut v = Values::new(0.5, 100);
        let first = v.generate(100).to_vec();
        let raw = br#"^{Vhz"!/%wMZ;'a F/REZJ4Tw@%NXxy2?.ArVCZ2B6[jnUd)4 "#;
        assert_eq!(&first[..50], raw);
        assert_eq!(&first[50..], raw);
        // 10486 pieces of 100 bytes; the 10486th value wraps to the start.
        for _ in 1..10486 {
            v.generate(100);
        }
        assert_eq!(v.generate(100), first.as_slice());
    }

    #[test]
    fn sequential_and_single_draw_orders() {
        let mut s = KeyGen::new(7, KeyOrder::Sequential, 10);
        assert_eq!((0..3).map(|_| s.next_key()).collect::<Vec<_>>(), [0, 1, 2]);
        let mut a = KeyGen::new(43, KeyOrder::Random, 1000);
        let mut b = Random64::new(43);
        for _ in 0..100 {
            assert_eq!(a.next_key(), b.next() % 1000);
        }
    }

    #[test]
    fn chained_run_found_counts_match_db_bench() {
        // `db_bench --num=1000 --seed=42 --benchmarks=fillseq,fillrandom,overwrite,readrandom,
        // seekrandom --seek_nexts=10` (RocksDB 7.8.3) printed "readrandom ... (874 of 1000
        // found)" and "seekrandom ... (876 of 1000 found)", and `ldb scan` listed 872 keys.
        // fillrandom starts a fresh database; the five benchmarks' threads get seeds 43..47.
        let mut live = std::collections::BTreeSet::new();
        for seed in [44, 45] {
            let mut g = KeyGen::new(seed, KeyOrder::RandomPair, 1000);
            for _ in 0..1000 {
                live.insert(g.next_key());
            }
        }
        assert_eq!(live.len(), 872);
        let mut g = KeyGen::new(46, KeyOrder::RandomPair, 1000);
        assert_eq!(
            (0..1000).filter(|_| live.contains(&g.next_key())).count(),
            874
        );
        let mut g = KeyGen::new(47, KeyOrder::Random, 1000);
        assert_eq!(
            (0..1000).filter(|_| live.contains(&g.next_key())).count(),
            876
        );
    }
}
