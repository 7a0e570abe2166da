//! Seeded draws: numbers that depend only on a seed and a key, so that a choice made "at
//! random" (a trajectory's context window, a tie-break between candidates, which samples
//! a balanced data set keeps) is the same on every machine and in every version.

/// A number in `min..=max` (`min <= max`) that depends only on `seed` and `key`: FNV-1a
/// over both, then SplitMix64's finalizer, reduced modulo the range's size. Fixed here, not
/// taken from a library, so that a trajectory's window never changes between versions.
pub fn draw(seed: u64, key: &str, min: u32, max: u32) -> u32 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in seed.to_le_bytes().iter().chain(key.as_bytes()) {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash = hash.wrapping_add(0x9e37_79b9_7f4a_7c15);
    hash = (hash ^ (hash >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    hash = (hash ^ (hash >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    hash ^= hash >> 31;
    let size = u64::from(max) - u64::from(min) + 1;
    min + (hash % size) as u32
}
