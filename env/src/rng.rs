//! A small, fast, seedable and serializable random number generator (xoshiro256++).
//!
//! The environment keeps its own generator rather than `rand`'s `SmallRng` for two reasons:
//! its stream is fixed by this file on every platform and release (so seeded games replay
//! exactly, forever), and its state is plain data that training checkpoints can save.

use serde::{Deserialize, Serialize};

/// xoshiro256++ (Blackman and Vigna, 2019), seeded through SplitMix64.
///
/// ```
/// use morris_env::Rng;
/// let mut a = Rng::seed_from_u64(7);
/// let mut b = Rng::seed_from_u64(7);
/// assert_eq!(a.next_u64(), b.next_u64());
/// assert!(a.below(10) < 10);
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rng {
    s: [u64; 4],
}

/// One step of SplitMix64, used for seeding and for compile-time Zobrist keys.
#[inline]
pub(crate) const fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl Rng {
    /// A generator whose whole stream is determined by `seed`.
    pub fn seed_from_u64(seed: u64) -> Rng {
        let mut sm = seed;
        let s = [splitmix64(&mut sm), splitmix64(&mut sm), splitmix64(&mut sm), splitmix64(&mut sm)];
        Rng { s }
    }

    /// A stable, well-mixed seed for item `i` of stream `stream` under `seed`: how every part of
    /// the lab derives its seeds from one (pair openings, agents, self-play groups, workers).
    /// Different streams or items give unrelated seeds.
    pub fn derive(seed: u64, stream: u64, i: u64) -> u64 {
        Rng::seed_from_u64(seed ^ stream.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ i.rotate_left(32)).next_u64()
    }

    /// The next 64 random bits.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let s = &mut self.s;
        let result = s[0].wrapping_add(s[3]).rotate_left(23).wrapping_add(s[0]);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        result
    }

    /// A uniform integer in `0..n`, exactly unbiased (Lemire's multiply-and-reject).
    /// For `n == 0` (an empty range) it returns 0: the product is then 0 and the rejection step,
    /// the only place that divides by `n`, is skipped. No branch is spent on that case, since
    /// this sits on the playout hot path.
    #[inline]
    pub fn below(&mut self, n: u32) -> u32 {
        let mut m = (self.next_u64() >> 32) * n as u64;
        if (m as u32) < n {
            let threshold = n.wrapping_neg() % n;
            while (m as u32) < threshold {
                m = (self.next_u64() >> 32) * n as u64;
            }
        }
        (m >> 32) as u32
    }

    /// A uniform float in `[0, 1)`.
    #[inline]
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn below_is_roughly_uniform_and_in_range() {
        let mut r = Rng::seed_from_u64(1);
        let mut counts = [0u32; 7];
        for _ in 0..70_000 {
            counts[r.below(7) as usize] += 1;
        }
        for c in counts {
            assert!((9_500..10_500).contains(&c), "{counts:?}");
        }
    }

    #[test]
    fn below_zero_is_zero() {
        let mut r = Rng::seed_from_u64(9);
        assert!((0..1000).all(|_| r.below(0) == 0));
    }

    #[test]
    fn different_seeds_give_different_streams() {
        let a = Rng::seed_from_u64(0).next_u64();
        let b = Rng::seed_from_u64(1).next_u64();
        assert_ne!(a, b);
    }
}
