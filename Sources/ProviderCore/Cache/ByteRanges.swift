/// A set of byte ranges kept sorted and merged: which parts of a sparse
/// cache file hold fetched bytes.
public struct ByteRanges: Sendable, Equatable {
    /// Disjoint, non-adjacent, in order.
    public private(set) var ranges: [ClosedRange<Int64>] = []

    public init(_ ranges: [ClosedRange<Int64>] = []) {
        ranges.forEach { insert($0) }
    }

    public var isEmpty: Bool { ranges.isEmpty }

    /// How many bytes the set holds.
    public var byteCount: Int64 { ranges.reduce(0) { $0 + Int64($1.count) } }

    public mutating func insert(_ range: ClosedRange<Int64>) {
        var merged = range
        var kept: [ClosedRange<Int64>] = []
        kept.reserveCapacity(ranges.count + 1)
        for existing in ranges {
            // Overlapping or touching: one range.
            if existing.upperBound + 1 >= merged.lowerBound && merged.upperBound + 1 >= existing.lowerBound {
                merged = min(existing.lowerBound, merged.lowerBound)...max(existing.upperBound, merged.upperBound)
            } else {
                kept.append(existing)
            }
        }
        kept.append(merged)
        ranges = kept.sorted { $0.lowerBound < $1.lowerBound }
    }

    /// The parts of `range` not in the set, in order.
    public func gaps(in range: ClosedRange<Int64>) -> [ClosedRange<Int64>] {
        var gaps: [ClosedRange<Int64>] = []
        var next = range.lowerBound
        for present in ranges where present.upperBound >= next {
            if present.lowerBound > range.upperBound { break }
            if present.lowerBound > next { gaps.append(next...(present.lowerBound - 1)) }
            next = present.upperBound + 1
            if next > range.upperBound { return gaps }
        }
        gaps.append(next...range.upperBound)
        return gaps
    }

    /// Where the set's bytes starting at `offset` end (exclusive); `offset`
    /// itself when that byte is missing.
    public func end(from offset: Int64) -> Int64 {
        for present in ranges where present.contains(offset) { return present.upperBound + 1 }
        return offset
    }
}
