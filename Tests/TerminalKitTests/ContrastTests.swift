import Foundation
import SaveDeskThemes
import Testing

@testable import TerminalKit

/// Every theme reads on the terminals people use: each role's foreground on its background, as
/// xterm's default palette and a modern one (Windows Terminal's Campbell) draw them, clears a
/// contrast floor (WCAG's ratio): 4.5:1 for what is read or pressed (text, controls, badges, bars,
/// toasts), 3:1 for what only sets things apart (muted text, borders, bars of charts). Bold text
/// is checked both as it is and as many terminals draw it, in the bright colour.
@Suite("Theme contrast")
struct ContrastTests {
    struct Palette {
        var name: String
        /// The sixteen basic colours.
        var basic: [(Int, Int, Int)]
        /// The terminal's own foreground and background, for a dark and a light profile.
        var darkDefaults: (fg: (Int, Int, Int), bg: (Int, Int, Int))
        var lightDefaults: (fg: (Int, Int, Int), bg: (Int, Int, Int))
    }

    static let xterm = Palette(
        name: "xterm",
        basic: [(0, 0, 0), (205, 0, 0), (0, 205, 0), (205, 205, 0), (0, 0, 238), (205, 0, 205), (0, 205, 205), (229, 229, 229),
                (127, 127, 127), (255, 0, 0), (0, 255, 0), (255, 255, 0), (92, 92, 255), (255, 0, 255), (0, 255, 255), (255, 255, 255)],
        darkDefaults: ((229, 229, 229), (0, 0, 0)), lightDefaults: ((0, 0, 0), (255, 255, 255))
    )
    static let campbell = Palette(
        name: "Campbell",
        basic: [(12, 12, 12), (197, 15, 31), (19, 161, 14), (193, 156, 0), (0, 55, 218), (136, 23, 152), (58, 150, 221), (204, 204, 204),
                (118, 118, 118), (231, 72, 86), (22, 198, 12), (249, 241, 165), (59, 120, 255), (180, 0, 158), (97, 214, 214), (242, 242, 242)],
        darkDefaults: ((204, 204, 204), (12, 12, 12)), lightDefaults: ((12, 12, 12), (242, 242, 242))
    )

    static func rgb(_ color: Color, _ palette: Palette, isForeground: Bool, light: Bool, bright: Bool) -> (Int, Int, Int) {
        let defaults = light ? palette.lightDefaults : palette.darkDefaults
        guard case .indexed(let index) = color else { return isForeground ? defaults.fg : defaults.bg }
        switch Int(index) {
        case 0..<8: return palette.basic[Int(index) + (bright ? 8 : 0)]
        case 8..<16: return palette.basic[Int(index)]
        case 16..<232:
            let value = Int(index) - 16
            func level(_ n: Int) -> Int { n == 0 ? 0 : 55 + n * 40 }
            return (level(value / 36), level((value / 6) % 6), level(value % 6))
        default:
            let gray = 8 + (Int(index) - 232) * 10
            return (gray, gray, gray)
        }
    }

    static func luminance(_ color: (Int, Int, Int)) -> Double {
        func channel(_ value: Int) -> Double {
            let c = Double(value) / 255
            return c <= 0.03928 ? c / 12.92 : pow((c + 0.055) / 1.055, 2.4)
        }
        return 0.2126 * channel(color.0) + 0.7152 * channel(color.1) + 0.0722 * channel(color.2)
    }

    static func ratio(_ a: (Int, Int, Int), _ b: (Int, Int, Int)) -> Double {
        let (x, y) = (luminance(a), luminance(b))
        return (max(x, y) + 0.05) / (min(x, y) + 0.05)
    }

    static let decorative: Set<Theme.Role> = [.muted, .border, .chartBar]

    /// The worst ratio of a style on a palette (bold also as bright).
    static func worst(_ style: Style, _ palette: Palette, light: Bool) -> Double {
        var fg = style.foreground, bg = style.background
        if style.attributes.contains(.reverse) { swap(&fg, &bg) }
        let brights = style.attributes.contains(.bold) ? [false, true] : [false]
        return brights.map { bright in
            ratio(rgb(fg, palette, isForeground: !style.attributes.contains(.reverse), light: light, bright: bright),
                  rgb(bg, palette, isForeground: style.attributes.contains(.reverse), light: light, bright: false))
        }.min() ?? 1
    }

    @Test(arguments: BundledThemes.names)
    func everyRoleClearsItsFloor(name: String) throws {
        let theme = try Theme.load(file: try #require(BundledThemes.url(named: name)).path)
        let light = name == "light"
        var failures: [String] = []
        for palette in [Self.xterm, Self.campbell] {
            for role in Theme.Role.allCases {
                let style = theme[role]
                // A role with neither colour is the terminal's own text: readable by definition.
                guard style.foreground != .default || style.background != .default || style.attributes.contains(.reverse) else { continue }
                let floor = Self.decorative.contains(role) ? 3.0 : 4.5
                let ratio = Self.worst(style, palette, light: light)
                if ratio < floor { failures.append("\(role.rawValue) on \(palette.name): \(String(format: "%.2f", ratio)):1 < \(floor)") }
            }
        }
        #expect(failures.isEmpty, "\(name): \(failures)")
    }

    @Test func theRatioIsWCAGs() {
        #expect(abs(Self.ratio((0, 0, 0), (255, 255, 255)) - 21) < 0.01)
        #expect(abs(Self.ratio((0, 0, 238), (0, 0, 0)) - 2.23) < 0.05, "xterm's blue on black")
    }
}
