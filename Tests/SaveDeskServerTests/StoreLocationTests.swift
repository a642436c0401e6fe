import Foundation
import Logging
import Testing

@testable import SaveDeskServer

/// `--db`: a file path or a PostgreSQL URL; a bad one is a clear error, an unreachable one too.
@Suite("Store location")
struct StoreLocationTests {
    @Test func aPathIsSQLiteAndAURLIsPostgreSQL() throws {
        #expect(try StoreLocation("data/savedesk.sqlite") == .sqlite(path: "data/savedesk.sqlite"))
        guard case .postgres(let place) = try StoreLocation("postgresql://ops:secret@db.internal:6543/savedesk?max_connections=4") else {
            Issue.record("not postgres")
            return
        }
        #expect(place.host == "db.internal" && place.port == 6543 && place.username == "ops" && place.password == "secret")
        #expect(place.database == "savedesk" && place.maximumConnections == 4)
    }

    @Test(arguments: ["", "postgres://nohost", "postgres://user@host", "postgres://user@host/db?max_connections=0", "postgres://user@host/db?sslmode=x"])
    func aBadLocationIsRefusedWithItsReason(text: String) {
        #expect(throws: SaveDeskError.self) { try StoreLocation(text) }
        #expect((try? StoreLocation(text)) == nil)
    }

    @Test func aPasswordIsNeverRepeatedInAnError() {
        #expect(StoreLocation.redacted("postgres://ops:secret@host/db").contains("secret") == false)
    }

    @Test func anUnreachableDatabaseIsAnErrorWithinItsBound() async throws {
        let started = ContinuousClock.now
        await #expect(throws: SaveDeskError.self) {
            _ = try await Store.open(path: "postgres://savedesk@127.0.0.1:1/nothing", logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() })
        }
        // Refused at once (nothing listens on port 1); the bound only says it never waits for
        // ever: far above the start timeout, far below a hang.
        #expect(ContinuousClock.now - started < PostgresEngine.startTimeout * 3)
    }
}
