import Foundation
import NIOConcurrencyHelpers

/// What the last calls to the upstream said, for the status page: when it
/// last answered, and the last error with its time.
public final class UpstreamHealth: Sendable {
    public struct Snapshot: Sendable, Codable, Equatable {
        public var lastSuccess: Date?
        public var lastError: String?
        public var lastErrorAt: Date?
        /// The last call failed (with an error that says the upstream, not the request, is at fault).
        public var failing: Bool

        /// Nothing known: the upstream was not asked (`davgate status --offline`).
        public static let notAsked = Snapshot(failing: false)
    }

    private let state = NIOLockedValueBox(Snapshot(failing: false))

    var snapshot: Snapshot { state.withLockedValue { $0 } }

    func succeeded() {
        state.withLockedValue {
            $0.lastSuccess = Date()
            $0.failing = false
        }
    }

    /// Records errors about the upstream itself; a missing file or a
    /// conflicting name is an answer, not a failure.
    func failed(_ error: UpstreamError) {
        switch error {
        case .unavailable, .unreachable, .timeout, .forbidden, .io, .noSpace:
            state.withLockedValue {
                $0.lastError = error.description
                $0.lastErrorAt = Date()
                $0.failing = true
            }
        case .notFound, .exists, .conflict, .versionMismatch, .locked:
            succeeded()
        }
    }
}
