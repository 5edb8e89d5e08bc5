import Foundation
import Logging

extension MetadataIndex {
    /// Whether several instances may use this index at once (PostgreSQL).
    public var isShared: Bool { store.isShared }

    /// The instances on a shared index, alive or lately killed; empty for
    /// the embedded one.
    public func instances() async throws -> [InstanceStatus] {
        try await store.instances()
    }

    /// Beats for this instance every `InstanceStatus.beatInterval` until
    /// cancelled, then removes its row. `uploads` counts its uploads running.
    /// A beat that fails (the database is down) is logged once until one
    /// succeeds again.
    /// `address`: where it listens (known once it does).
    public func beat(instance id: String, address: @Sendable () -> String, uploads: @Sendable () -> Int, logger: Logger) async {
        let started = Date()
        var failing = false
        while !Task.isCancelled {
            do {
                try await store.beat(instance: id, address: address(), started: started, uploads: uploads())
                if failing { logger.notice("the shared index hears this instance's heartbeat again") }
                failing = false
            } catch {
                if !failing { logger.warning("this instance's heartbeat did not reach the shared index: \(error)") }
                failing = true
            }
            try? await Task.sleep(for: InstanceStatus.beatInterval)
        }
        // Not cancelled with the loop: a stopping instance still says so.
        try? await Task { [store] in try await store.leave(instance: id) }.value
    }
}
