/// SplitMix64 (Steele, Lea and Flood, 2014), written once: the demo history's generator steps
/// it, and request ids mix a count with it.
enum SplitMix64 {
    /// What each step adds to the state (the golden ratio's 64 bits).
    static let increment: UInt64 = 0x9E37_79B9_7F4A_7C15

    /// The output function: a one-to-one mix of 64 bits.
    static func mix(_ value: UInt64) -> UInt64 {
        var z = value
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
