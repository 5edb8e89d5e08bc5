import ServiceLifecycle

/// Every domain's trash purged of what outlived `trash_retention` or its
/// budget, at the start and hourly after, as one service of the server's
/// group (a graceful stop cancels the waits).
public struct TrashExpiry: Service, CustomStringConvertible {
    public let providers: [Provider]

    public init(providers: [Provider]) {
        self.providers = providers.filter { $0.trashPolicy != nil }
    }

    public func run() async throws {
        // A service that returns early takes the whole group down with it.
        guard !providers.isEmpty else { return try await gracefulShutdown() }
        await cancelWhenGracefulShutdown {
            await withDiscardingTaskGroup { group in
                for provider in providers {
                    group.addTask { await provider.runTrashExpiry() }
                }
            }
        }
    }

    public var description: String { "TrashExpiry(\(providers.map(\.domain).joined(separator: ", ")))" }
}
