import Foundation
import Testing

@testable import RetentionDomain

@Suite("Retry policy")
struct RetryPolicyTests {
    @Test func storeKitSyncDelaysThenAbandons() {
        let policy = RetryPolicy.storeKitSync
        let delays = (1...6).map { policy.delay(afterFailedAttempts: $0) }
        #expect(delays == [.seconds(1), .seconds(5), .seconds(30), .seconds(300), nil, nil])
    }

    @Test func theLastDelayRepeatsWithoutALimit() {
        let policy = RetryPolicy.outbox
        #expect(policy.delay(afterFailedAttempts: 4) == .seconds(300))
        #expect(policy.delay(afterFailedAttempts: 50) == .seconds(300))
        #expect(policy.delay(afterFailedAttempts: 0) == .zero)
    }

    @Test func nextAttemptDate() {
        let failure = Date(timeIntervalSince1970: 1_000)
        #expect(RetryPolicy.storeKitSync.nextAttempt(after: failure, failedAttempts: 2) == Date(timeIntervalSince1970: 1_005))
        #expect(RetryPolicy.storeKitSync.nextAttempt(after: failure, failedAttempts: 5) == nil)
    }

    @Test func conflictRetryIsClamped() {
        #expect(RetryPolicy.conflictRetryDelay(retryAfter: 0) == .milliseconds(100))
        #expect(RetryPolicy.conflictRetryDelay(retryAfter: 2.5) == .milliseconds(2500))
        #expect(RetryPolicy.conflictRetryDelay(retryAfter: 60) == .seconds(5))
        #expect(RetryPolicy.conflictRetryDelay(retryAfter: nil) == .seconds(1))
    }
}
