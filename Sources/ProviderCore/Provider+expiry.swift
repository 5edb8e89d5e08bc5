import Logging
import NIOConcurrencyHelpers

extension Provider {
    /// What a domain lets go of with time, at the start and then hourly
    /// while the server runs: the trash's expired entries (retention and
    /// budget), versions past `versions_budget`, and staged uploads nobody
    /// finished.
    public func runHourlyExpiry() async {
        func attempt(_ what: String, _ work: () async throws -> Void) async {
            do {
                try await work()
            } catch {
                logger.warning("\(what) failed; trying again in an hour", metadata: ["error": "\(error)"])
            }
        }
        while !Task.isCancelled {
            await expireStagedUploads()
            if trashPolicy != nil { await attempt("trash expiry") { _ = try await expireTrash() } }
            if versionPolicy?.budget != nil { await attempt("versions expiry") { _ = try await expireVersions() } }
            try? await Task.sleep(for: .seconds(3600))
        }
    }
}

/// One background pass at a time, and another after it when asked while it
/// ran (`Provider.runSoon`).
struct BackgroundPass: Sendable {
    var running = false
    var again = false
}

extension Provider {
    /// Runs `work` soon, in the background: one pass at a time, and one
    /// more when asked while a pass ran (it may have missed what asked),
    /// so a burst of DELETEs or writes costs two passes, not one each. A
    /// failure is logged as `what`'s; the hourly pass tries again.
    func runSoon(_ pass: NIOLockedValueBox<BackgroundPass>, _ what: String, _ work: @escaping @Sendable () async throws -> Void) {
        let start = pass.withLockedValue { state -> Bool in
            if state.running {
                state.again = true
                return false
            }
            state.running = true
            return true
        }
        guard start else { return }
        Task { await NamespaceClock.outsideChange {
            repeat {
                pass.withLockedValue { $0.again = false }
                do {
                    try await work()
                } catch {
                    logger.warning("\(what) failed; the hourly pass tries again", metadata: ["error": "\(error)"])
                }
            } while pass.withLockedValue({ state in
                if !state.again { state.running = false }
                return state.again
            })
        } }
    }
}
