import Foundation

/// Where the store lives, as `serve --db` and the config's `database` name it: a file path
/// (SQLite) or a `postgres://user[:password]@host[:port]/database` URL.
public enum StoreLocation: Sendable, Equatable {
    case sqlite(path: String)
    case postgres(PostgresLocation)

    public struct PostgresLocation: Sendable, Equatable {
        public var host: String
        public var port: Int
        public var username: String
        public var password: String?
        public var database: String
        /// Connections this instance may open.
        public var maximumConnections: Int
    }

    static let postgresSchemes: Set<String> = ["postgres", "postgresql"]

    public init(_ text: String) throws {
        guard let colon = text.firstIndex(of: ":"), Self.postgresSchemes.contains(text[..<colon].lowercased()) else {
            guard !text.isEmpty else { throw SaveDeskError.badRequest("the database path is empty", code: "invalid_database") }
            self = .sqlite(path: text)
            return
        }
        guard let url = URLComponents(string: text), let host = url.host, !host.isEmpty else {
            throw SaveDeskError.badRequest("\(Self.redacted(text)) is not a postgres://user@host:port/database URL", code: "invalid_database")
        }
        let database = url.path.hasPrefix("/") ? String(url.path.dropFirst()) : url.path
        guard let user = url.user, !user.isEmpty, !database.isEmpty, !database.contains("/") else {
            throw SaveDeskError.badRequest("\(Self.redacted(text)) needs a user and a database: postgres://user@host:port/database", code: "invalid_database")
        }
        var maximumConnections = 16
        for item in url.queryItems ?? [] {
            switch item.name {
            case "max_connections":
                guard let value = item.value.flatMap(Int.init), (1...200).contains(value) else {
                    throw SaveDeskError.badRequest("max_connections must be a whole number from 1 to 200", code: "invalid_database")
                }
                maximumConnections = value
            default:
                throw SaveDeskError.badRequest("unknown database URL parameter \"\(item.name)\"", code: "invalid_database")
            }
        }
        self = .postgres(PostgresLocation(
            host: host, port: url.port ?? 5432, username: user, password: url.password, database: database,
            maximumConnections: maximumConnections
        ))
    }

    /// A URL as it may be logged: without its password.
    static func redacted(_ text: String) -> String {
        guard var url = URLComponents(string: text), url.password != nil else { return text }
        url.password = "…"
        return url.string ?? "the database URL"
    }
}
