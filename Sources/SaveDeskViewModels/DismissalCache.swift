import Foundation
import SaveDeskClient

/// Switch-and-save dismissals kept in the data directory, so an offer the customer dismissed stays
/// dismissed when the server cannot be reached. The server's record wins when it answers; an entry
/// not yet recorded there (`synced` false) is sent again.
public struct DismissalCache: Sendable {
    public struct Entry: Codable, Sendable, Equatable {
        public var dismissedAt: Date
        public var synced: Bool
    }

    public let file: URL

    public init(file: URL) { self.file = file }

    public func entry(for userId: String) -> Entry? { read()[userId] }

    public func set(_ entry: Entry?, for userId: String) {
        var all = read()
        all[userId] = entry
        guard let data = try? JSONEncoder().encode(all) else { return }
        try? DurableFile.write(data, to: file)
    }

    private func read() -> [String: Entry] {
        FileManager.default.contents(atPath: file.path).flatMap { try? JSONDecoder().decode([String: Entry].self, from: $0) } ?? [:]
    }
}
