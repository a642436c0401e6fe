import SQLKit

/// The test clock's offset, shared by every instance on the store.
protocol TestClockRepository: Sendable {
    /// Seconds test time runs ahead of the server's clock (0 until moved).
    func offset() async throws -> Int64
    func setOffset(_ seconds: Int64) async throws
}

struct SQLTestClockRepository: TestClockRepository {
    let db: any SQLDatabase

    func offset() async throws -> Int64 {
        try await db.select().column("offset_seconds").from("test_clock").where("id", .equal, 1).first()?
            .decode(column: "offset_seconds", as: Int64.self) ?? 0
    }

    func setOffset(_ seconds: Int64) async throws {
        try await db.delete(from: "test_clock").where("id", .equal, 1).run()
        try await db.insert(into: "test_clock").columns("id", "offset_seconds").values(SQLBind(1), SQLBind(seconds)).run()
    }
}
