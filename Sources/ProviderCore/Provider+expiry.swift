import Logging
import NIOConcurrencyHelpers

extension Provider {
    /// What a domain lets go of with time, at the start and then hourly
    /// while the server runs: the trash's expired entries (retention and
    /// budget), versions past `versions_budget`, and staged uploads nobody
    /// finished.
    public func runHourlyExpiry() async {
        while !Task.isCancelled {
            await expireStagedUploads()
            if trashPolicy != nil {
                do {
                    try await expireTrash()
                } catch {
                    logger.warning("trash expiry failed; trying again in an hour", metadata: ["error": "\(error)"])
                }
            }
            if versionPolicy?.budget != nil {
                do {
                    try await expireVersions()
                } catch {
                    logger.warning("versions expiry failed; trying again in an hour", metadata: ["error": "\(error)"])
                }
            }
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
    /// so a burst of DELETEs or writes costs two passes, not one each.
    func runSoon(_ pass: NIOLockedValueBox<BackgroundPass>, _ work: @escaping @Sendable () async -> Void) {
        let start = pass.withLockedValue { state -> Bool in
            if state.running {
                state.again = true
                return false
            }
            state.running = true
            return true
        }
        guard start else { return }
        Task {
            repeat {
                pass.withLockedValue { $0.again = false }
                await work()
            } while pass.withLockedValue({ state in
                if !state.again { state.running = false }
                return state.again
            })
        }
    }
}
