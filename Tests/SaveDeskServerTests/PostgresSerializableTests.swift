import Foundation
import Logging
import SQLKit
import Testing
import TestSupport

@testable import SaveDeskServer

/// What SERIALIZABLE makes of changes written side by side on PostgreSQL: two that touch nothing
/// of each other must not be read as a race.
@Suite("PostgreSQL: responses written side by side", .enabled(if: TestDatabase.isPostgres))
struct PostgresSerializableTests {
    static func row(_ id: String) -> CancelFlowResponseRow {
        CancelFlowResponseRow(
            id: id, customerId: "cus_a", productId: "premium_monthly", outcome: "retained", offerShown: true,
            offerAccepted: false, pauseShown: false, pauseAccepted: false, pauseDurationDays: nil, lastStepSeen: 2,
            answers: [.init(questionId: 1, optionId: 11, freeText: nil)], answersJSON: "[]", variantId: nil, actor: "app",
            livemode: false, createdAt: 1
        )
    }

    /// A response between two others: one transaction (T0) read the list of responses to fold
    /// before it was written, and another (T2) wrote a response after it and committed first.
    /// An answer's reference to its response, checked by the database, read the responses' index
    /// page, and T2's response in that page made this one the middle of T0 → it → T2: aborted
    /// and run again. Unchecked (migration 19), it commits at its first run.
    @Test func aResponseBetweenAFoldsReadAndAnotherResponseIsNotARace() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("savedesk-test-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = try await TestDatabase.prepare(in: directory) + "?max_connections=3"
        let store = try await Store.open(path: path, logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() })
        try await store.transaction { data in try await data.customers.insert(CustomerRecord.new(id: "cus_a", livemode: false, at: 0)) }
        try await store.sqlTransaction { db in try await db.raw("CREATE TABLE scratch (n BIGINT)").run() }

        let (read, readDone) = AsyncStream<Void>.makeStream()
        let (written, writtenDone) = AsyncStream<Void>.makeStream()
        let (finish, finishing) = AsyncStream<Void>.makeStream()
        let runs = Runs()
        // T0: reads the list (as a serializable fold once did) and writes, then waits.
        let reader = Task {
            try await store.sqlTransaction { db in
                runs.reader += 1
                _ = try await db.raw("SELECT count(*) AS n FROM cancel_flow_unrolled").all()
                try await db.raw("INSERT INTO scratch (n) VALUES (1)").run()
                if runs.reader == 1 {
                    readDone.yield()
                    for await _ in finish { break }
                }
            }
        }
        for await _ in read { break }
        // T1: the response in the middle, held open until T2 has committed.
        let (middleWrote, middleWroteDone) = AsyncStream<Void>.makeStream()
        let middle = Task {
            try await store.transaction { data in
                runs.middle += 1
                try await data.cancelFlow.insert(Self.row("cr_middle"))
                if runs.middle == 1 {
                    middleWroteDone.yield()
                    for await _ in written { break }
                }
            }
        }
        for await _ in middleWrote { break }
        // T2: another response, committed first.
        try await store.transaction { data in
            runs.after += 1
            try await data.cancelFlow.insert(Self.row("cr_after"))
        }
        writtenDone.yield()
        try await middle.value
        finishing.yield()
        try await reader.value
        let stored = try await store.sqlRead { db in
            try await db.raw("SELECT count(*) AS n FROM cancel_flow_answers").first()?.decode(column: "n", as: Int.self) ?? -1
        }
        await store.close()
        #expect(runs.reader == 1 && runs.middle == 1 && runs.after == 1, "runs: the read \(runs.reader), the middle \(runs.middle), the other \(runs.after)")
        #expect(stored == 2)
    }

    /// How often each transaction's body ran (each is one task, its runs one after another).
    final class Runs: @unchecked Sendable {
        var reader = 0
        var middle = 0
        var after = 0
    }
}
