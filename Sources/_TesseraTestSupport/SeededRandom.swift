/// A small, fast, seedable random number generator (SplitMix64) so tests draw the same
/// values on every run and every machine.
///
/// ```swift
/// var rng = SeededRandom(seed: 42)
/// let x = Float.random(in: -1...1, using: &rng)
/// ```
package struct SeededRandom: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// A generator whose sequence is fixed by `seed`.
    package init(seed: UInt64) {
        state = seed &+ 0x9E37_79B9_7F4A_7C15
    }

    /// The next 64 random bits.
    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// `count` values uniformly drawn from `range`.
    package mutating func floats(_ count: Int, in range: ClosedRange<Float> = -1...1) -> [Float] {
        (0..<count).map { _ in Float.random(in: range, using: &self) }
    }

    /// `count` values uniformly drawn from `range`.
    package mutating func doubles(_ count: Int, in range: ClosedRange<Double> = -1...1) -> [Double] {
        (0..<count).map { _ in Double.random(in: range, using: &self) }
    }

    /// A random shape of the given rank with each dimension in `sizes`.
    package mutating func shape(rank: Int, sizes: ClosedRange<Int> = 1...5) -> [Int] {
        (0..<rank).map { _ in Int.random(in: sizes, using: &self) }
    }
}
