/// What the person did: a key (with the keys screens care about named), a mouse click, or a
/// change of the terminal's size.
public enum KeyEvent: Hashable, Sendable {
    case character(Character)
    case up, down, left, right
    case enter, escape, backspace, delete, tab, backTab
    case home, end, pageUp, pageDown
    /// Ctrl plus a letter ("c" for Ctrl-C).
    case control(Character)
    case function(Int)
    /// A click (button 1 pressed or clicked) at a cell.
    case mouse(x: Int, y: Int)
    case resize(width: Int, height: Int)

    /// The digit of a number key, if this is one.
    public var digit: Int? {
        if case .character(let c) = self, let value = c.wholeNumberValue, c.isASCII { return value }
        return nil
    }
}
