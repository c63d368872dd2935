//! The order in which a partition steps its active routers. The simulation
//! (`engine::sim`) keeps them as a list in the order they were woken; when many are
//! active this puts the list in index order, through a bitset: neighbouring routers'
//! entries share cache lines in every per-node, per-port and per-VC table, which the
//! order of wake-ups reaches at random (on the 16×16 BookSim torus a fifth of the first
//! level's data-cache misses, docs/speed.md). When few are, the list stays as it is:
//! ordering would cost more than the locality saves (a circuit-switched hypercube steps
//! two or three of its 1,024 routers a cycle). The order routers are stepped in cannot
//! change a result (`Network::SORT_EVENTS`).

/// Puts `list` — distinct node indices, below 64 times the length of `scratch`, which
/// is all zeros and is left so — in increasing order when the partition has more than
/// 64 nodes and the list holds at least 16 and one for every 8 words of `scratch` (the
/// words are then scanned for less than the locality saves); leaves it as it is
/// otherwise. (On the 64-node BookSim torus, ordering cost 2.5% more instructions and
/// 1.03 times the CPU time: docs/speed.md.)
#[inline]
pub fn in_index_order(list: &mut Vec<u32>, scratch: &mut [u64]) {
    if scratch.len() < 2 || list.len() < 16 || list.len() * 8 < scratch.len() {
        return;
    }
    for &i in list.iter() {
        scratch[i as usize / 64] |= 1 << (i % 64);
    }
    list.clear();
    for (w, word) in scratch.iter_mut().enumerate() {
        let mut b = std::mem::take(word);
        while b != 0 {
            list.push((w * 64 + b.trailing_zeros() as usize) as u32);
            b &= b - 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_list_comes_out_in_increasing_order_and_a_short_one_as_it_was() {
        for n in [1usize, 63, 64, 65, 4096, 4097, 300_000] {
            let mut scratch = vec![0u64; n.div_ceil(64)];
            for count in [1, 5, 15, 16, n.min(20_000)] {
                // Distinct nodes in a scrambled order.
                let mut seen = vec![false; n];
                let list: Vec<u32> = (0..count)
                    .map(|k| ((k * 7919 + 13) % n) as u32)
                    .filter(|&i| !std::mem::replace(&mut seen[i as usize], true))
                    .collect();
                let mut sorted = list.clone();
                sorted.sort_unstable();
                let many =
                    scratch.len() >= 2 && list.len() >= 16 && list.len() * 8 >= scratch.len();
                let mut got = list.clone();
                in_index_order(&mut got, &mut scratch);
                assert_eq!(got, if many { sorted } else { list }, "{n} nodes, {count}");
                assert!(
                    scratch.iter().all(|&w| w == 0),
                    "{n} nodes: scratch left zero"
                );
            }
        }
    }
}
