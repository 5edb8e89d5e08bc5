import Foundation
import Testing

/// Polls `condition` for up to `seconds`, recording an issue when it never holds:
/// clients that upload in the background reach the upstream a little later.
func eventually(_ what: String, seconds: Double = 30, sourceLocation: SourceLocation = #_sourceLocation,
                _ condition: () async throws -> Bool) async throws {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if try await condition() { return }
        try await Task.sleep(for: .milliseconds(200))
    }
    Issue.record("not within \(Int(seconds)) s: \(what)", sourceLocation: sourceLocation)
}
