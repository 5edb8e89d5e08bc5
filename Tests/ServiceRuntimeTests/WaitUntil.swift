import Testing

/// Polls `condition` every 10 ms, for up to 30 s: a slow machine only makes
/// a test that waits for a service's next look slower, not failed.
func waitUntil(_ condition: @Sendable () -> Bool) async throws {
    let deadline = ContinuousClock.now + .seconds(30)
    while !condition() {
        guard ContinuousClock.now < deadline else {
            Issue.record("waited 30 s in vain")
            return
        }
        try await Task.sleep(for: .milliseconds(10))
    }
}
