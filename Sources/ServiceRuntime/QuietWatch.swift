/// When a busy server has gone quiet: fed a count of requests begun once per
/// period, it says yes once per quiet spell, the first period in which the
/// count did not move after it had moved since the last yes. An idle server
/// is never told twice; a busy one never at all.
public struct QuietWatch: Sendable {
    private var last: Int
    private var released: Int

    /// `count`: the requests begun so far (nothing to release yet).
    public init(count: Int) {
        last = count
        released = count
    }

    public mutating func quietAfterWork(count: Int) -> Bool {
        defer { last = count }
        guard count == last, count != released else { return false }
        released = count
        return true
    }
}
