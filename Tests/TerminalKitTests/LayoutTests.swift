import Testing
@testable import TerminalKit

@Suite("Layout")
struct LayoutTests {
    @Test func fixedPartsKeepTheirSizeAndAFillTakesTheRest() {
        let parts = Layout.vertical([.fixed(1), .fill(), .fixed(1)]).split(Rect(x: 0, y: 0, width: 80, height: 24))
        #expect(parts.map(\.y) == [0, 1, 23] && parts.map(\.height) == [1, 22, 1] && parts.allSatisfy { $0.width == 80 })
    }

    @Test func fillsShareByWeightAfterTheSpacing() {
        let parts = Layout.horizontal([.fixed(10), .fill(1), .fill(2)], spacing: 1).split(Rect(x: 2, y: 3, width: 43, height: 5))
        #expect(parts.map(\.x) == [2, 13, 25] && parts.map(\.width) == [10, 11, 20], "31 left: 10 and 20, the odd cell to the first fill")
        #expect(parts.allSatisfy { $0.y == 3 && $0.height == 5 })
    }

    @Test func minimumsGrowWhenNothingFills() {
        #expect(Layout.sizes([.min(5), .min(5)], total: 20) == [10, 10])
        #expect(Layout.sizes([.min(5), .fill()], total: 20) == [5, 15], "a fill takes what is left first")
    }

    @Test func partsThatDoNotFitAreClippedTheLastFirst() {
        let parts = Layout.vertical([.fixed(10), .fixed(10), .fixed(3)]).split(Rect(x: 0, y: 0, width: 4, height: 15))
        #expect(parts.map(\.height) == [10, 5, 0] && parts.map(\.y) == [0, 10, 15])
    }

    @Test func aColumnPlacesWidgetsUnderOneAnotherByTheirHeight() {
        var frame = Frame(width: 12, height: 6)
        var column = Column(frame.area)
        let first = column.place(Paragraph("one two three four"), into: &frame)
        #expect(first == Rect(x: 0, y: 0, width: 12, height: 2), "wrapped to two rows at 12 columns")
        column.skip()
        let second = column.place(Line("indented"), indent: 2, into: &frame)
        #expect(second == Rect(x: 2, y: 3, width: 10, height: 1))
        let clipped = column.place(Paragraph("a b c d e f g h i j k l m n o p q r s t u v w x y z"), maxHeight: 5, into: &frame)
        #expect(clipped.height == 2 && column.rest.height == 0, "at most what is left")
        #expect(frame.buffer.lines[0] == "one two" && frame.buffer.lines[3] == "  indented")
    }
}
