import Foundation
import Logging
import Synchronization
import Testing

@testable import SaveDeskServer

/// The recorder of Apple's cancel-page requests: an answer is given once per requestIdentifier,
/// so an answer whose write fails is kept (a repeat still gets it) and written again.
@Suite struct RetentionRecorderTests {
    /// A write that fails the first `failures` times, then waits for `release` before it succeeds.
    final class FlakyWrite: Sendable {
        let failures: Int
        let calls = Mutex(0)
        let written = Mutex<[String]>([])
        let released = Mutex(false)
        init(failures: Int) { self.failures = failures }

        func callAsFunction(_ batch: [RetentionRecorder.Entry]) async throws {
            let call = calls.withLock { calls in
                calls += 1
                return calls
            }
            if call <= failures { throw SaveDeskError(status: 503, code: "database_busy", "the database is busy") }
            while !released.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(2)) }
            written.withLock { $0 += batch.map(\.record.requestIdentifier) }
        }
    }

    static func outcome(_ identifier: String, transaction: String = "2000000000000001", choice: String = "message") -> RetentionMessagingService.Outcome {
        let record = RetentionRequestRecord(
            requestIdentifier: identifier, livemode: false, originalTransactionId: transaction, customerId: nil, appStoreProductId: "pro",
            userLocale: "en-US", signedAt: 0, receivedAt: 0, choice: choice, rule: nil, messageKey: nil, offerIdentifier: nil,
            alternateProductId: nil, latencyMicros: 0, answer: #"{"message":{"messageIdentifier":"\#(choice)"}}"#
        )
        return RetentionMessagingService.Outcome(body: nil, record: record)
    }

    /// Waits (bounded) until `condition` holds.
    static func until(_ condition: () -> Bool) async throws -> Bool {
        for _ in 0..<5_000 {
            if condition() { return true }
            try await Task.sleep(for: .milliseconds(2))
        }
        return condition()
    }

    @Test func aFailedWriteKeepsItsAnswersAndIsTriedAgain() async throws {
        let write = FlakyWrite(failures: 2)
        let recorder = RetentionRecorder(logger: Logger(label: "test"), attempts: 4, retryPause: .milliseconds(1)) { try await write($0) }
        guard case .queued = recorder.submit(Self.outcome("a"), requestId: "req_1") else { Issue.record("not queued"); return }
        // Two writes failed and the third is under way: the answer is still there for a repeat.
        #expect(try await Self.until { write.calls.withLock { $0 } == 3 }, "the batch is tried again after each failure")
        #expect(recorder.pending("a")?.record.choice == "message")
        #expect(recorder.pending("a")?.repeated == true)
        write.released.withLock { $0 = true }
        await recorder.flush()
        #expect(write.written.withLock { $0 } == ["a"])
        #expect(recorder.pending("a") == nil, "written, so read from the database from now on")
    }

    @Test func aBatchThatNeverWritesIsGivenUpAfterItsAttempts() async throws {
        let write = FlakyWrite(failures: .max)
        let recorder = RetentionRecorder(logger: Logger(label: "test"), attempts: 3, retryPause: .milliseconds(1)) { try await write($0) }
        _ = recorder.submit(Self.outcome("a"), requestId: "req_1")
        await recorder.flush()
        #expect(write.calls.withLock { $0 } == 3)
        #expect(recorder.pending("a") == nil)
        // The recorder goes on: the next answer is written.
        let next = FlakyWrite(failures: 0)
        next.released.withLock { $0 = true }
        let again = RetentionRecorder(logger: Logger(label: "test"), attempts: 3, retryPause: .milliseconds(1)) { try await next($0) }
        _ = again.submit(Self.outcome("b"), requestId: "req_2")
        await again.flush()
        #expect(next.written.withLock { $0 } == ["b"])
    }

    @Test func twoAnswersToOneRequestKeepTheFirst() async throws {
        let write = FlakyWrite(failures: 0)
        let recorder = RetentionRecorder(logger: Logger(label: "test")) { try await write($0) }
        _ = recorder.submit(Self.outcome("a", choice: "message"), requestId: "req_1")
        guard case .answeredBefore(let before) = recorder.submit(Self.outcome("a", choice: "fallback"), requestId: "req_2") else {
            Issue.record("a second answer to the same request replaced the first")
            return
        }
        #expect(before.record.choice == "message")
        #expect(recorder.pending("a")?.record.choice == "message")
        write.released.withLock { $0 = true }
        await recorder.flush()
        #expect(write.written.withLock { $0 } == ["a"])
    }

    /// Requests that come while the writer gathers go in one transaction, not one each: each
    /// commit empties the SQLite readers' caches, which the decisions read through. (The pause
    /// here, 1 s, is long so the requests' own spacing, 20 ms, stays well inside it when busy.)
    @Test func requestsThatComeWhileTheWriterGathersAreWrittenTogether() async throws {
        let batches = Mutex<[[String]]>([])
        let recorder = RetentionRecorder(logger: Logger(label: "test"), gathering: .seconds(1)) { batch in
            batches.withLock { $0.append(batch.map(\.record.requestIdentifier)) }
        }
        for identifier in ["a", "b", "c"] {
            _ = recorder.submit(Self.outcome(identifier), requestId: "req_" + identifier)
            try await Task.sleep(for: .milliseconds(20))
        }
        await recorder.flush()
        #expect(batches.withLock { $0 } == [["a", "b", "c"]])
    }
}
