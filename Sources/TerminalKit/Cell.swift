import Synchronization

/// One column of the screen: a grapheme with its style. A wide grapheme occupies its cell and
/// the next, which is a `continuation` (drawn by the wide one, never on its own).
///
/// A cell is plain data (no reference to count): a frame of them is made, compared with the last
/// one and freed on every key, and a `Character` in each cell made all three walk the cells one
/// by one. The grapheme is kept as its scalar when it is one scalar (nearly every cell), else as
/// its number in `Graphemes`.
///
/// Every byte of a cell is a field (`size == stride`): `BufferDiff` compares a row's bytes, and
/// the two bytes of padding a cell had were never written (an array of cells left them as malloc
/// gave them), so nearly every row compared unequal and was walked cell by cell on every key.
public struct Cell: Hashable, Sendable {
    private var grapheme: UInt32
    public var style: Style
    public var isContinuation: Bool
    /// Fills what would be padding; always zero.
    private var spare: UInt16 = 0

    public init(_ character: Character = " ", style: Style = .plain, isContinuation: Bool = false) {
        grapheme = Graphemes.code(for: character)
        self.style = style
        self.isContinuation = isContinuation
    }

    init(_ scalar: Unicode.Scalar, style: Style) {
        grapheme = scalar.value
        self.style = style
        isContinuation = false
    }

    public var character: Character {
        get { Graphemes.character(for: grapheme) }
        set { grapheme = Graphemes.code(for: newValue) }
    }

    public static let blank = Cell()
}

/// The graphemes of more than one scalar that cells have held (a letter and its accents, an
/// emoji sequence), numbered from past the last scalar value. Cells compare by these numbers, so
/// two spellings of one grapheme (a precomposed letter and the letter with a combining mark) are
/// different cells: drawn again, never drawn wrong.
enum Graphemes {
    private static let firstCluster: UInt32 = 0x11_0000
    private static let known = Mutex<(numbers: [String: UInt32], graphemes: [Character])>(([:], []))

    static func code(for character: Character) -> UInt32 {
        let scalars = character.unicodeScalars
        if let first = scalars.first, scalars.index(after: scalars.startIndex) == scalars.endIndex { return first.value }
        let text = String(character)
        return known.withLock { known in
            if let number = known.numbers[text] { return number }
            let number = firstCluster + UInt32(known.graphemes.count)
            known.numbers[text] = number
            known.graphemes.append(character)
            return number
        }
    }

    static func character(for code: UInt32) -> Character {
        if code < firstCluster, let scalar = Unicode.Scalar(code) { return Character(scalar) }
        return known.withLock { $0.graphemes[Int(code - firstCluster)] }
    }
}
