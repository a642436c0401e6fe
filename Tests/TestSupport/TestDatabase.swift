import Foundation
import Logging
import PostgresNIO

/// The database a test's server keeps its data in: a SQLite file in the test's folder, or, when
/// `SAVEDESK_TEST_POSTGRES` names a PostgreSQL server (`make test` runs the server, client and
/// command suites a second time that way), a database of its own on that server.
public enum TestDatabase {
    /// `postgres://user@host:port` of the run's throwaway cluster, if this run uses one.
    public static let postgresServer: String? = ProcessInfo.processInfo.environment["SAVEDESK_TEST_POSTGRES"]
        .flatMap { $0.isEmpty ? nil : $0.hasSuffix("/") ? String($0.dropLast()) : $0 }

    public static var isPostgres: Bool { postgresServer != nil }

    /// Where the data of the test in `directory` lives; the same folder names the same database
    /// (a restart). Does not create it: `prepare` does.
    public static func location(in directory: URL, file: String = "savedesk.sqlite") -> String {
        guard let server = postgresServer else { return directory.appendingPathComponent(file).path }
        return server + "/" + databaseName(for: directory)
    }

    /// `location(in:)`, with the PostgreSQL database created if it does not exist yet.
    public static func prepare(in directory: URL, file: String = "savedesk.sqlite") async throws -> String {
        let location = location(in: directory, file: file)
        guard let server = postgresServer, let url = URLComponents(string: server), let host = url.host, let user = url.user else {
            return location
        }
        let configuration = PostgresConnection.Configuration(
            host: host, port: url.port ?? 5432, username: user, password: url.password, database: "postgres", tls: .disable
        )
        let logger = Logger(label: "test-database") { _ in SwiftLogNoOpLogHandler() }
        let connection = try await PostgresConnection.connect(configuration: configuration, id: 1, logger: logger)
        defer { Task { try? await connection.close() } }
        // Databases are created from template1, which PostgreSQL lets one CREATE DATABASE copy at a
        // time: tests starting together get 55006 ("being accessed by other users") and try again.
        for attempt in 1... {
            do {
                try await connection.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \"\(databaseName(for: directory))\""), logger: logger)
                return location
            } catch let error as PSQLError where error.serverInfo?[.sqlState] == "42P04" {
                return location  // It exists: a restart on the same folder.
            } catch let error as PSQLError where error.serverInfo?[.sqlState] == "55006" && attempt < 50 {
                try await Task.sleep(for: .milliseconds(Int.random(in: 20...120)))
            } catch let error as PSQLError {
                throw CreateDatabaseFailed(description: String(reflecting: error))
            }
        }
        return location
    }

    /// Why a test's database could not be created, with PostgreSQL's own words.
    struct CreateDatabaseFailed: Error, CustomStringConvertible {
        var description: String
    }

    /// A database name for the folder: a hash of its whole path (FNV-1a), so each folder has its own.
    static func databaseName(for directory: URL) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in directory.standardizedFileURL.path.utf8 { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 }
        return "t_" + String(hash, radix: 16)
    }
}

extension Result where Failure == any Error {
    /// The outcome of an async body, so a test helper can close what it opened before it rethrows.
    public static func of(_ body: () async throws -> Success) async -> Result {
        do { return .success(try await body()) } catch { return .failure(error) }
    }
}
