extension Duration {
    /// The duration in whole nanoseconds, for the clocks and waits that
    /// count in them (atomics, Dispatch).
    var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}
