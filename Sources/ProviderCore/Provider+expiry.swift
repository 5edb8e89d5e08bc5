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

extension Provider {
    /// Runs `work` soon, in the background, unless a run `queued` guards is
    /// waiting already: after a burst of DELETEs or writes, one expiry
    /// pass, not one each.
    func runSoon(_ queued: NIOLockedValueBox<Bool>, _ work: @escaping @Sendable () async -> Void) {
        guard queued.withLockedValue({ waiting in defer { waiting = true }; return !waiting }) else { return }
        Task {
            queued.withLockedValue { $0 = false }
            await work()
        }
    }
}
