import Foundation
import Testing

/// The design lives in the repository: README and `docs/` link only to what a clone has.
@Suite("Docs")
struct DocsTests {
    static let pages = ["README.md", "docs/architecture.md", "docs/wire-protocol.md", "docs/glossary.md", "docs/how-to.md", "docs/operations.md"]

    @Test func everyLinkResolvesInsideTheRepository() throws {
        let link = try Regex(#"\]\(([^)#\s]+)(#[^)]*)?\)"#)
        for page in Self.pages {
            let url = LayerImportTests.root.appendingPathComponent(page)
            let text = try String(contentsOf: url, encoding: .utf8)
            #expect(!text.contains("../shared"), "\(page) refers outside the repository")
            for match in text.matches(of: link) {
                let target = String(match.output[1].substring ?? "")
                guard !target.hasPrefix("http://"), !target.hasPrefix("https://") else { continue }
                let resolved = url.deletingLastPathComponent().appendingPathComponent(target).standardizedFileURL.path
                #expect(resolved.hasPrefix(LayerImportTests.root.standardizedFileURL.path), "\(page): \(target) is outside the repository")
                #expect(FileManager.default.fileExists(atPath: resolved), "\(page): \(target) does not exist")
            }
        }
    }
}
