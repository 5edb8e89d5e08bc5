import ServiceLifecycle

/// The background refresh of eager folders (`ContentPolicy.eager`), every
/// domain's, as one service of the server's group: each domain refreshes
/// its eager folders every `refresh_interval` and downloads what is new or
/// changed below them, so they stay current without a client asking. A
/// graceful stop cancels the waits and any fetch in flight, which leaves
/// only tmp/ behind, emptied at the next start.
public struct EagerRefresher: Service, CustomStringConvertible {
    public let providers: [Provider]

    public init(providers: [Provider]) {
        self.providers = providers
    }

    public func run() async throws {
        // A service that returns early takes the whole group down with it.
        guard !providers.isEmpty else { return try await gracefulShutdown() }
        await cancelWhenGracefulShutdown {
            await withDiscardingTaskGroup { group in
                for provider in providers {
                    group.addTask { await provider.runEagerRefresh() }
                }
            }
        }
    }

    /// The service's name in the group's logs.
    public var description: String { "EagerRefresher(\(providers.map(\.domain).joined(separator: ", ")))" }
}
