import Foundation
import Testing

/// Terminals disagree on the width of emoji with U+FE0F (variation selector 16) and of ZWJ
/// sequences, which would break alignment: keep them out of everything the app shows.
@Suite("Shipped copy")
struct ShippedCopyTests {
    static let folders = ["Sources", "themes"]
    static let forbidden: [(UInt32, String)] = [(0xFE0F, "U+FE0F (emoji presentation)"), (0x200D, "U+200D (zero-width joiner)")]

    @Test func noEmojiPresentationSelectorsOrZeroWidthJoiners() throws {
        var checked = 0
        for folder in Self.folders {
            let root = LayerImportTests.root.appendingPathComponent(folder)
            guard let walker = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil) else { continue }
            for case let file as URL in walker where ["swift", "toml", "yaml", "c", "h", "md"].contains(file.pathExtension) {
                let text = try String(contentsOf: file, encoding: .utf8)
                checked += 1
                for (scalar, name) in Self.forbidden where text.unicodeScalars.contains(where: { $0.value == scalar }) {
                    Issue.record("\(file.path) contains \(name)")
                }
            }
        }
        #expect(checked > 50, "the scan found the sources")
    }
}
