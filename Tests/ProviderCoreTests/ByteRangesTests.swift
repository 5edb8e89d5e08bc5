import ProviderCore
import Testing

@Suite("ByteRanges: which parts of a sparse file are there")
struct ByteRangesTests {
    @Test("overlapping and touching ranges merge; gaps are what is missing, in order")
    func mergeAndGaps() {
        var ranges = ByteRanges()
        #expect(ranges.gaps(in: 0...99) == [0...99])
        ranges.insert(10...19)
        ranges.insert(40...49)
        #expect(ranges.ranges == [10...19, 40...49])
        #expect(ranges.gaps(in: 0...99) == [0...9, 20...39, 50...99])
        #expect(ranges.gaps(in: 12...18) == [], "inside a present range")
        #expect(ranges.gaps(in: 15...45) == [20...39])
        ranges.insert(20...39)
        #expect(ranges.ranges == [10...49], "touching ranges become one")
        ranges.insert(0...5)
        ranges.insert(3...12)
        #expect(ranges.ranges == [0...49])
        #expect(ranges.gaps(in: 0...49) == [])
        #expect(ranges.gaps(in: 45...60) == [50...60])
        #expect(ranges.end(from: 7) == 50)
        #expect(ranges.end(from: 50) == 50)
    }
}
