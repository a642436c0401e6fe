import Testing

@testable import RetentionDomain

@Suite("Rollout bucketing")
struct RolloutTests {
    /// Expected buckets computed independently with Python:
    /// `int.from_bytes(hashlib.sha256(u.encode()).digest()[:4], "big") % 100`.
    @Test(arguments: [("user_42", 23), ("alice", 1), ("cus_0001", 27), ("", 10), ("grace", 56), ("cus_out", 63)])
    func knownBuckets(userId: String, bucket: Int) {
        #expect(Rollout.bucket(forUserId: userId) == bucket)
    }

    @Test(arguments: [0, 10, 25, 50, 73, 100])
    func shareMatchesPercentWithinTwoPoints(percent: Int) {
        let ids = (0..<10_000).map { "user_\($0)" }
        let included = ids.filter { Rollout.includes(userId: $0, percent: percent) }.count
        let share = Double(included) / 100.0
        #expect(abs(share - Double(percent)) <= 2.0, "\(percent)% rollout included \(share)%")
    }

    @Test func stablePerIdAndMonotonic() {
        for index in 0..<500 {
            let id = "cus_\(index)"
            let bucket = Rollout.bucket(forUserId: id)
            #expect(Rollout.bucket(forUserId: id) == bucket)
            #expect((0..<100).contains(bucket))
            // Raising the percentage only adds users.
            #expect(!Rollout.includes(userId: id, percent: bucket))
            #expect(Rollout.includes(userId: id, percent: bucket + 1))
        }
    }
}
