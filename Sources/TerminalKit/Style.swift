/// A terminal colour as a theme names it. The backend maps it to what the terminal has
/// (256 colours, 8, or none).
public enum Color: Hashable, Sendable {
    /// The terminal's own foreground or background.
    case `default`
    /// One of the 256 indexed colours (0–7 the basic eight, 8–15 bright).
    case indexed(UInt8)

    public static let black = Color.indexed(0), red = Color.indexed(1), green = Color.indexed(2), yellow = Color.indexed(3)
    public static let blue = Color.indexed(4), magenta = Color.indexed(5), cyan = Color.indexed(6), white = Color.indexed(7)

    /// The nearest of the basic eight (for 8-colour terminals).
    public var basic: Color {
        guard case .indexed(let index) = self else { return self }
        switch index {
        case 0..<8: return self
        case 8..<16: return .indexed(index - 8)
        case 232...255: return index < 244 ? .black : .white
        default:
            // The 6×6×6 cube: keep each channel that is at least half on.
            let value = Int(index) - 16
            let (r, g, b) = (value / 36, (value / 6) % 6, value % 6)
            let bits = (r >= 3 ? 1 : 0) | (g >= 3 ? 2 : 0) | (b >= 3 ? 4 : 0)
            return .indexed(UInt8(bits))
        }
    }

    /// The 256-colour index nearest to an RGB value.
    public static func rgb(_ red: UInt8, _ green: UInt8, _ blue: UInt8) -> Color {
        func level(_ value: UInt8) -> Int { value < 48 ? 0 : value < 115 ? 1 : (Int(value) - 35) / 40 }
        if red == green && green == blue {
            if red < 8 { return .indexed(16) }
            if red > 248 { return .indexed(231) }
            return .indexed(UInt8(232 + (Int(red) - 8) / 10))
        }
        return .indexed(UInt8(16 + 36 * level(red) + 6 * level(green) + level(blue)))
    }
}

/// Text attributes.
public struct Attributes: OptionSet, Hashable, Sendable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let bold = Attributes(rawValue: 1 << 0)
    public static let dim = Attributes(rawValue: 1 << 1)
    public static let underline = Attributes(rawValue: 1 << 2)
    public static let reverse = Attributes(rawValue: 1 << 3)
    public static let italic = Attributes(rawValue: 1 << 4)
}

/// How a cell looks.
public struct Style: Hashable, Sendable {
    public var foreground: Color
    public var background: Color
    public var attributes: Attributes

    public init(foreground: Color = .default, background: Color = .default, attributes: Attributes = []) {
        self.foreground = foreground
        self.background = background
        self.attributes = attributes
    }

    public static let plain = Style()

    public func adding(_ extra: Attributes) -> Style {
        var copy = self
        copy.attributes.formUnion(extra)
        return copy
    }
}
