import ServiceLifecycle

/// Background work every domain does on its own, as one service of the
/// server's group: the refresh of eager folders (`runEagerRefresh`: every
/// `refresh_interval`, downloading what is new or changed below them) and
/// the hourly expiry of the trash and of unfinished uploads (`runHourlyExpiry`). A graceful stop cancels
/// the waits and any fetch in flight, which leaves only tmp/ behind,
/// emptied at the next start.
public struct DomainLoop: Service, CustomStringConvertible {
    public let name: String
    public let providers: [Provider]
    let loop: @Sendable (Provider) async -> Void

    public init(_ name: String, providers: [Provider], loop: @escaping @Sendable (Provider) async -> Void) {
        self.name = name
        self.providers = providers
        self.loop = loop
    }

    /// The eager folders' refresh, in every domain.
    public static func eagerRefresh(_ providers: [Provider]) -> DomainLoop {
        DomainLoop("EagerRefresher", providers: providers) { await $0.runEagerRefresh() }
    }

    /// The trash's and staged uploads' expiry, in every domain.
    public static func hourlyExpiry(_ providers: [Provider]) -> DomainLoop {
        DomainLoop("HourlyExpiry", providers: providers) { await $0.runHourlyExpiry() }
    }

    public func run() async throws {
        // A service that returns early takes the whole group down with it.
        guard !providers.isEmpty else { return try await gracefulShutdown() }
        await cancelWhenGracefulShutdown {
            await withDiscardingTaskGroup { group in
                for provider in providers {
                    group.addTask { await loop(provider) }
                }
            }
        }
    }

    /// The service's name in the group's logs.
    public var description: String { "\(name)(\(providers.map(\.domain).joined(separator: ", ")))" }
}
