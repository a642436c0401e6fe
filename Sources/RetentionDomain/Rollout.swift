/// Rollout bucketing: SHA-256 of the user id, first 4 bytes big-endian as UInt32, modulo 100.
/// A user is in a rollout of `percent` when their bucket is below it, so the same user gets the
/// same answer every time and raising the percentage only adds users.
public enum Rollout {
    /// The bucket of a user, 0–99.
    public static func bucket(forUserId userId: String) -> Int {
        let digest = SHA256Digest.hash(userId.utf8)
        let prefix = digest.prefix(4).reduce(UInt32(0)) { ($0 << 8) | UInt32($1) }
        return Int(prefix % 100)
    }

    /// Whether a user falls inside a rollout of `percent` (0–100).
    public static func includes(userId: String, percent: Int) -> Bool {
        bucket(forUserId: userId) < percent
    }
}
