import Foundation
import SaveDeskThemes
import Testing

@testable import TerminalKit

@Suite("TerminalKit")
struct TerminalKitTests {
    @Test func widthsFollowGraphemesNotBytes() {
        #expect(CharacterWidth.of("Chloé Martin") == 12)
        #expect(CharacterWidth.of("e\u{301}") == 1, "a combining accent adds nothing")
        #expect(CharacterWidth.of("日本語") == 6 && CharacterWidth.of("한국") == 4 && CharacterWidth.of("ｶ") == 1)
        #expect(CharacterWidth.of("🎉") == 2 && CharacterWidth.of("👍") == 2)
        #expect(CharacterWidth.truncate("Ava Thompson", to: 6) == "Ava T\u{2026}")
        #expect(CharacterWidth.truncate("日本語テキスト", to: 7) == "日本語\u{2026}")
    }

    /// Plain text (Latin, "·", "…", "▸", box drawing) is measured, cut and drawn scalar by scalar;
    /// mixed with anything that clusters (accents, joiners, emoji, jamo, flags) it must still give
    /// what grapheme by grapheme gives. Random strings over both kinds, checked against the slow way.
    @Test func plainTextFastPathAgreesWithGraphemes() {
        let pieces: [String] = ["a", "Z", " ", "·", "…", "▸", "─", "é", "\u{301}", "\u{200D}", "\u{FE0F}", "\u{1F3FB}",
                                "日", "👍", "🇫", "🇷", "\u{1100}", "\u{1161}", "\r", "\n", "\u{7F}", "©", "↔", "◽", "\u{AD}"]
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2_000 {
            let text = (0..<Int.random(in: 0...12, using: &generator)).map { _ in pieces.randomElement(using: &generator)! }.joined()
            let slowWidth = text.reduce(0) { $0 + CharacterWidth.of($1) }
            #expect(CharacterWidth.of(text) == slowWidth, "\(text.unicodeScalars.map { String($0.value, radix: 16) })")
            for columns in 0...6 {
                var cut = "", used = 0
                for character in text {
                    let w = CharacterWidth.of(character)
                    if used + w > columns { break }
                    used += w
                    cut.append(character)
                }
                let fast = CharacterWidth.prefix(text, fitting: columns)
                #expect(fast.text == cut && fast.width == used, "\(text.unicodeScalars.map { String($0.value, radix: 16) }) in \(columns)")
            }
            var buffer = Buffer(width: 8, height: 1), reference = Buffer(width: 8, height: 1)
            let written = buffer.put(text, x: 1, y: 0, style: .plain, clip: Rect(x: 0, y: 0, width: 7, height: 1))
            var column = 1
            for character in text {
                let w = CharacterWidth.of(character)
                if w == 0 { continue }
                if column + w > 7 {
                    if column < 7 { reference[column, 0] = Cell(" ") }
                    break
                }
                reference[column, 0] = Cell(character)
                if w == 2 { reference[column + 1, 0] = Cell(" ", isContinuation: true) }
                column += w
            }
            #expect(buffer == reference && written == column - 1, "\(text.unicodeScalars.map { String($0.value, radix: 16) })")
        }
        #expect(CharacterWidth.of("Ava Thompson · renews Dec 2\u{2026}") == 28)
    }

    /// Text of one-column scalars (ASCII, "·", "…", "▸", box drawing) is written as a run (a wide
    /// grapheme cut at either end blanked once); over any earlier content, clipped or not, it must
    /// leave what writing it a character at a time leaves.
    @Test func aRunOfPlainTextWritesWhatItsCharactersWriteOneByOne() {
        let base: [String] = ["日本", "a", "👍", " ", "é", "x日y", "▸"]
        let ascii = Array("abc XYZ 0123-_.·…▸─")
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2_000 {
            var buffer = Buffer(width: 10, height: 2)
            for _ in 0..<4 {
                buffer.put(base.randomElement(using: &generator)!, x: Int.random(in: -1...9, using: &generator), y: 1)
            }
            var reference = buffer
            let text = String((0..<Int.random(in: 0...8, using: &generator)).map { _ in ascii.randomElement(using: &generator)! })
            let x = Int.random(in: -2...10, using: &generator)
            let clip = Bool.random(using: &generator)
                ? Rect(x: Int.random(in: 0...4, using: &generator), y: 0, width: Int.random(in: 0...8, using: &generator), height: 2) : nil
            let style = Style(foreground: .red)
            let written = buffer.put(text, x: x, y: 1, style: style, clip: clip)
            let limit = min(10, clip?.maxX ?? 10)
            var column = x
            for character in text {
                guard column < limit else { break }
                reference.put(String(character), x: column, y: 1, style: style, clip: clip)
                column += 1
            }
            #expect(buffer == reference && written == column - x, "\(text.debugDescription) at \(x), clip \(String(describing: clip))")
        }
    }

    /// A frame of cells is made, compared and freed on every key: cells are plain data, and a
    /// grapheme of several scalars comes back as it went in.
    @Test func cellsArePlainDataAndKeepTheirGraphemes() {
        #expect(_isPOD(Cell.self))
        for grapheme: Character in ["a", " ", "é", "e\u{301}", "日", "👍🏽", "🇫🇷", "👩\u{200D}💻", "\u{1100}\u{1161}"] {
            #expect(Cell(grapheme).character == grapheme && Cell(grapheme).character.unicodeScalars.elementsEqual(grapheme.unicodeScalars))
            var cell = Cell()
            cell.character = grapheme
            #expect(cell == Cell(grapheme))
        }
        #expect(Cell("👍🏽") != Cell("👍") && Cell("e\u{301}") != Cell("e"))
    }

    @Test func wideCharactersTakeTwoCellsAndNeverSplit() {
        var buffer = Buffer(width: 7, height: 1)
        #expect(buffer.put("a日本語", x: 0, y: 0) == 7)
        #expect(buffer.lines == ["a日本語"])
        #expect(buffer[2, 0].isContinuation && !buffer[1, 0].isContinuation)
        var edge = Buffer(width: 4, height: 1)
        edge.put("abc日", x: 0, y: 0)
        #expect(edge.lines == ["abc"], "a wide grapheme that would straddle the edge becomes a space")
        edge.put("x", x: 1, y: 0)
        edge.put("日", x: 1, y: 0)
        edge.put("z", x: 2, y: 0)
        #expect(edge.lines == ["a z"], "overwriting half of a wide grapheme blanks the other half")
    }

    @Test func theDiffHasOnlyTheChangedRuns() {
        var old = Buffer(width: 10, height: 3)
        old.put("hello", x: 0, y: 1)
        var new = old
        new.put("J", x: 0, y: 1)
        new.put("!", x: 9, y: 2)
        let runs = BufferDiff.runs(from: old, to: new)
        #expect(runs.map { [$0.x, $0.y, $0.cells.count] } == [[0, 1, 1], [9, 2, 1]])
        #expect(BufferDiff.runs(from: nil, to: new).count == 3, "a first frame draws every row")
        #expect(BufferDiff.runs(from: new, to: new).isEmpty)
        // Rows whose bytes are equal are skipped whole; a change of style, grapheme or
        // continuation alone still differs, and equal cells written separately compare equal.
        var styled = old, clustered = old, continued = old, rewritten = old
        styled.restyle(Rect(x: 3, y: 0, width: 1, height: 1)) { $0.attributes = .bold }
        clustered[4, 2] = Cell("e\u{301}")
        continued[5, 1] = Cell(" ", isContinuation: true)
        rewritten.put("hello", x: 0, y: 1)
        #expect(BufferDiff.runs(from: old, to: styled).map { [$0.x, $0.y] } == [[3, 0]])
        #expect(BufferDiff.runs(from: old, to: clustered).map { [$0.x, $0.y] } == [[4, 2]])
        #expect(BufferDiff.runs(from: old, to: continued).map { [$0.x, $0.y, $0.cells.count] } == [[4, 1, 2]], "with the cell before it")
        #expect(BufferDiff.runs(from: old, to: rewritten).isEmpty)
    }

    /// The diff skips a row whose bytes equal the last frame's; a cell with padding (bytes no
    /// initializer writes) made equal rows of two frames compare unequal, so every row was walked
    /// cell by cell on every key.
    @Test func equalRowsOfTwoFramesHaveEqualBytes() {
        #expect(MemoryLayout<Cell>.size == MemoryLayout<Cell>.stride, "a cell has no padding")
        func frame(_ fill: Cell) -> Buffer {
            var buffer = Buffer(width: 40, height: 4, fill: fill)
            buffer.put("Ava Thompson", x: 2, y: 1, style: Style(foreground: .cyan, attributes: .bold))
            buffer.put("Chloé Martin 日本", x: 2, y: 2)
            buffer.fill(Rect(x: 0, y: 3, width: 40, height: 1), style: Style(background: .indexed(236)))
            return buffer
        }
        let first = frame(.blank), second = frame(Cell(" ", style: .plain))
        for y in 0..<4 { #expect(second.rowBytesEqual(y, in: first), "row \(y)") }
    }

    @Test func wrapping() {
        #expect(Text.wrap("Stay with Premium and pay 40% less", width: 12) == ["Stay with", "Premium and", "pay 40% less"])
        #expect(Text.wrap("Supercalifragilistic", width: 8) == ["Supercal", "ifragili", "stic"])
        #expect(Text.wrap("one\n\ntwo", width: 10) == ["one", "", "two"])
        #expect(Text.wrap("日本語のテキスト", width: 6) == ["日本語", "のテキ", "スト"])
    }

    @Test func textFieldEditsByGrapheme() {
        var field = TextFieldState("Chloe")
        _ = field.handle(.backspace)
        #expect(field.text == "Chlo")
        field.insert("é")
        #expect(field.text == "Chloé" && field.cursor == 5)
        _ = field.handle(.home)
        _ = field.handle(.delete)
        _ = field.handle(.right)
        field.insert("日")
        #expect(field.text == "h日loé" && field.cursor == 2)
        let handled = field.handle(.enter)
        #expect(!handled, "Enter is the screen's, not the field's")
        var frame = Frame(width: 6, height: 1)
        frame.render(TextField(focused: true, theme: .builtInDefault), in: Rect(x: 0, y: 0, width: 6, height: 1), state: field)
        #expect(frame.cursor?.x == 3, "the cursor sits after the wide character")
    }

    @Test func theShippedDefaultThemeIsTheBuiltInOne() throws {
        let file = try #require(BundledThemes.url(named: "default"))
        let theme = try Theme.load(file: file.path)
        #expect(theme == Theme.builtInDefault)
        for name in BundledThemes.names {
            let url = try #require(BundledThemes.url(named: name))
            let loaded = try Theme.load(file: url.path)
            #expect(Set(loaded.styles.keys) == Set(Theme.Role.allCases), "\(name) styles every role")
        }
        let mono = try Theme.load(file: try #require(BundledThemes.url(named: "mono")).path)
        #expect(mono.styles.values.allSatisfy { $0.foreground == .default && $0.background == .default })
    }

    @Test func aBadThemeNamesTheKey() {
        func failure(_ text: String) -> String {
            do { _ = try Theme.parse(text, file: "bad.toml"); return "" } catch { return error.description }
        }
        #expect(failure("[roles.accent]\nfgg = \"red\"") == "bad.toml: roles.accent.fgg: unknown key (fg, bg, bold, dim, underline, reverse, italic)")
        #expect(failure("[roles.acent]\nfg = \"red\"").hasPrefix("bad.toml: roles.acent: unknown role"))
        #expect(failure("[roles.accent]\nfg = \"chartreuse\"").hasPrefix("bad.toml: roles.accent.fg: not a colour"))
        #expect(failure("[roles.accent]\nbold = \"yes\"") == "bad.toml: roles.accent.bold: must be true or false")
        #expect(failure("colour = 1") .hasPrefix("bad.toml: colour: unknown key"))
        #expect(failure("[roles") .hasPrefix("bad.toml: : not valid TOML"))
        let partial = try? Theme.parse("[roles.accent]\nfg = \"#ff0000\"\n")
        #expect(partial?[.accent] == Style(foreground: .indexed(196)) && partial?[.selection] == Theme.builtInDefault[.selection])
    }

    @Test func coloursDegradeTo8AndToNone() {
        #expect(Color.indexed(196).basic == .red && Color.indexed(12).basic == .blue && Color.indexed(250).basic == .white)
        let plain = Theme.builtInDefault.withoutColor
        #expect(plain[.selection] == Style(attributes: [.reverse]) && plain[.accent] == Style(attributes: [.bold]))
    }

    @MainActor @Test func styleSnapshotsShowLayout() {
        let terminal = Terminal(backend: TestBackend(width: 6, height: 2))
        terminal.draw(Frame(width: 6, height: 2))
        var frame = Frame(width: 6, height: 2)
        frame.buffer.put("ok", x: 1, y: 0, style: Style(foreground: .green, attributes: [.bold]))
        terminal.draw(frame)
        let backend = terminal.backend
        #expect(backend.lastChangedCells == 2 && terminal.lastDrawnCells == 2)
        #expect(backend.styleSnapshot == ".aa...\n......\n\nstyles:\n. = fg default bg default\na = fg 2 bg default bold")
    }
}

@Suite("Cutting text")
struct CuttingTextTests {
    @Test func idsAreCutInTheMiddleSoTheyStayApart() {
        #expect(CharacterWidth.cutMiddle("cus_hist_0042", to: 20) == "cus_hist_0042")
        #expect(CharacterWidth.cutMiddle("cus_hist_0042", to: 9) == "cus_\u{2026}0042")
        #expect(CharacterWidth.cutMiddle("cus_hist_0042", to: 9) != CharacterWidth.cutMiddle("cus_hist_0043", to: 9))
        #expect(CharacterWidth.of(CharacterWidth.cutMiddle("日本語のお客様のID", to: 9)) <= 9)
        #expect(CharacterWidth.cutMiddle("abc", to: 2) == "a\u{2026}" && CharacterWidth.cutMiddle("abc", to: 0) == "")
    }

    @Test func aListsPositionHasItsOwnCells() {
        var frame = Frame(width: 30, height: 3)
        let items = (1...5).map { ListView.Item("row number \($0) with a long text") }
        ListView(items, selected: 0, theme: .builtInDefault, hitPrefix: "r.").render(in: Rect(x: 0, y: 0, width: 30, height: 3), frame: &frame)
        let last = frame.buffer.lines[2]
        #expect(last.hasSuffix("1\u{2013}3 of 5"), "\(last)")
        #expect(last.contains("row number 3") && last.contains("\u{2026} 1\u{2013}3"), "\(last)")
    }

    /// A row is drawn without building " " + text; it must come out as Line(" " + text) did, at
    /// every width, for text that fits, text cut with "…", wide and combined graphemes, and a
    /// style of its own.
    @Test func aListsRowsAreTheLinesTheyStandFor() {
        let theme = Theme.builtInDefault
        let texts = ["Ava Thompson", "", "cus_ava  Try: the web cancel flow", "日本語のお客様", "e\u{301}te\u{301} 🇫🇷 café", "1234567890"]
        let items = texts.enumerated().map { ListView.Item($1, style: $0 == 2 ? theme[.muted] : nil) }
        for width in 0...24 {
            let rect = Rect(x: 1, y: 0, width: width, height: texts.count)
            var drawn = Frame(width: 26, height: texts.count)
            ListView(items, selected: 3, theme: theme, hitPrefix: "r.").render(in: rect, frame: &drawn)
            var expected = Frame(width: 26, height: texts.count)
            for (index, item) in items.enumerated() {
                let line = rect.row(index)
                expected.buffer.put(index == 3 ? "\u{25B8}" : " ", x: line.x, y: line.y, style: index == 3 ? theme[.marker] : theme[.text])
                expected.render(Line(" " + item.text, style: item.style ?? theme[.text], truncates: true),
                                in: Rect(x: line.x + 1, y: line.y, width: max(0, line.width - 1), height: 1))
            }
            #expect(drawn.buffer == expected.buffer, "width \(width):\n\(drawn.buffer.lines.joined(separator: "\n"))\n--\n\(expected.buffer.lines.joined(separator: "\n"))")
        }
    }
}
