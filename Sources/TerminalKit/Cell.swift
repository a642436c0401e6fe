/// One column of the screen: a grapheme with its style. A wide grapheme occupies its cell and
/// the next, which is a `continuation` (drawn by the wide one, never on its own).
public struct Cell: Hashable, Sendable {
    public var character: Character
    public var style: Style
    public var isContinuation: Bool

    public init(_ character: Character = " ", style: Style = .plain, isContinuation: Bool = false) {
        self.character = character
        self.style = style
        self.isContinuation = isContinuation
    }

    public static let blank = Cell()
}
