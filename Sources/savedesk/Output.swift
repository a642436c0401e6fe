import Foundation

/// Where a command writes: human text (aligned tables, colour only on a terminal and without
/// NO_COLOR) or JSON (stable: sorted keys, ISO-8601 dates) on stdout; messages always on stderr.
struct Output {
    let json: Bool
    let color: Bool

    init(json: Bool, environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.json = json
        color = !json && isatty(STDOUT_FILENO) == 1 && environment["NO_COLOR"].map(\.isEmpty) != false
            && environment["TERM"] != "dumb"
    }

    /// A line of human output (nothing in JSON mode). Server strings in it are shown, never obeyed.
    func line(_ text: String = "") {
        guard !json else { return }
        FileHandle.standardOutput.write(Data((Self.printable(text) + "\n").utf8))
    }

    /// A message for the person: stderr in both modes.
    func message(_ text: String) {
        FileHandle.standardError.write(Data((Self.printable(text) + "\n").utf8))
    }

    /// Text safe to write to a terminal: control characters (C0, DEL, C1, and the bidirectional
    /// overrides that reorder what is shown) become nothing, tabs and line breaks a space, and an
    /// escape survives only as a colour change (`ESC [ digits ; m`), which is all this tool emits.
    /// A name or a message from a server can never move the cursor, retitle the window, or write
    /// to the clipboard.
    static func printable(_ text: String) -> String {
        var out = String.UnicodeScalarView()
        let scalars = Array(text.unicodeScalars)
        var index = 0
        while index < scalars.count {
            let scalar = scalars[index]
            switch scalar.value {
            case 0x1B:
                var end = index + 1
                if end < scalars.count, scalars[end] == "[" {
                    end += 1
                    while end < scalars.count, ("0"..."9").contains(scalars[end]) || scalars[end] == ";" { end += 1 }
                    if end < scalars.count, scalars[end] == "m" {
                        out.append(contentsOf: scalars[index...end])
                        index = end + 1
                        continue
                    }
                }
            case 0x09, 0x0A, 0x0D:
                out.append(" ")
            case 0x00..<0x20, 0x7F..<0xA0, 0x202A...0x202E, 0x2066...0x2069:
                break
            default:
                out.append(scalar)
            }
            index += 1
        }
        return String(out)
    }

    /// The JSON document of a command (JSON mode only).
    func document(_ value: some Encodable) {
        guard json else { return }
        FileHandle.standardOutput.write(Self.encode(value) + Data("\n".utf8))
    }

    static func encode(_ value: some Encodable) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.keyEncodingStrategy = .convertToSnakeCase
        encoder.dateEncodingStrategy = .iso8601
        return (try? encoder.encode(value)) ?? Data("null".utf8)
    }

    /// Columns padded to their widest cell; the header is bold on a terminal.
    func table(_ headers: [String], _ rows: [[String]]) {
        let rows = rows.map { $0.map(Self.printable) }
        let widths = headers.indices.map { column in
            ([headers] + rows).map { $0.indices.contains(column) ? $0[column].count : 0 }.max() ?? 0
        }
        func render(_ cells: [String]) -> String {
            cells.enumerated().map { index, cell in
                index == cells.count - 1 ? cell : cell.padding(toLength: widths[index], withPad: " ", startingAt: 0)
            }.joined(separator: "  ")
        }
        line(bold(render(headers)))
        for row in rows { line(render(row)) }
    }

    func bold(_ text: String) -> String { styled(text, "1") }
    func dim(_ text: String) -> String { styled(text, "2") }
    func green(_ text: String) -> String { styled(text, "32") }
    func yellow(_ text: String) -> String { styled(text, "33") }
    func red(_ text: String) -> String { styled(text, "31") }

    private func styled(_ text: String, _ code: String) -> String {
        color ? "\u{1B}[\(code)m\(text)\u{1B}[0m" : text
    }
}
