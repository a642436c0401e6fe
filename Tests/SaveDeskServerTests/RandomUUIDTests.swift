import Foundation
import Testing

@testable import SaveDeskServer

@Suite("Random UUIDs")
struct RandomUUIDTests {
    /// Version 4, RFC 4122 variant, and no repeats in ten thousand.
    @Test func theyAreVersionFourAndDoNotRepeat() {
        var seen = Set<UUID>()
        for _ in 0..<10_000 {
            let id = UUID.random()
            let text = id.uuidString.lowercased()
            let characters = Array(text)
            #expect(characters[14] == "4")
            #expect("89ab".contains(characters[19]))
            #expect(UUID(uuidString: text) == id)
            seen.insert(id)
        }
        #expect(seen.count == 10_000)
    }
}
