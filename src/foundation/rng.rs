//! Random streams. Every (seed, replication, node) has its own Xoshiro256++ stream seeded
//! through SplitMix64, so the numbers a node draws never depend on how many threads step
//! the network or in which order nodes are visited.

use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// The generator type of a node.
pub type NodeRng = Xoshiro256PlusPlus;

/// SplitMix64 finaliser: a bijective mix used to derive stream seeds.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The stream of `node` in replication `rep` of seed `seed`. `purpose` separates streams
/// of one node that must not share numbers (0 = traffic, 1 = router decisions).
pub fn stream(seed: u64, rep: u32, node: u32, purpose: u32) -> NodeRng {
    let s = mix(mix(mix(seed) ^ rep as u64) ^ ((node as u64) << 8 | purpose as u64));
    Xoshiro256PlusPlus::seed_from_u64(s)
}

/// Uniform in [0, 1) with 53 random bits.
#[inline]
pub fn unit(rng: &mut NodeRng) -> f64 {
    (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// Uniform in (0, 1]: safe to take the logarithm of.
#[inline]
pub fn unit_open0(rng: &mut NodeRng) -> f64 {
    ((rng.next_u64() >> 11) + 1) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// Uniform integer in 0..n (n > 0), by Lemire's multiply-and-reject (unbiased).
#[inline]
pub fn below(rng: &mut NodeRng, n: u64) -> u64 {
    debug_assert!(n > 0);
    loop {
        let x = rng.next_u64();
        let m = (x as u128) * (n as u128);
        let lo = m as u64;
        if lo >= n || lo >= n.wrapping_neg() % n {
            return (m >> 64) as u64;
        }
    }
}

/// Exponential with the given rate.
#[inline]
pub fn exponential(rng: &mut NodeRng, rate: f64) -> f64 {
    -unit_open0(rng).ln() / rate
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_differ_by_node_replication_and_purpose() {
        let a = stream(1, 0, 0, 0).next_u64();
        assert_ne!(a, stream(1, 0, 1, 0).next_u64());
        assert_ne!(a, stream(1, 1, 0, 0).next_u64());
        assert_ne!(a, stream(1, 0, 0, 1).next_u64());
        assert_eq!(a, stream(1, 0, 0, 0).next_u64());
    }

    #[test]
    fn below_is_uniform_enough() {
        let mut r = stream(7, 0, 0, 0);
        let mut counts = [0u32; 5];
        for _ in 0..50_000 {
            counts[below(&mut r, 5) as usize] += 1;
        }
        for c in counts {
            assert!((9_500..10_500).contains(&c), "{counts:?}");
        }
    }
}
