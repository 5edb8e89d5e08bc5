import ServiceLifecycle

/// The write-back journals' uploads of every domain, as one service of the
/// server's `ServiceGroup`: started with the server, and on a graceful stop
/// (after the server, which is added after it, has stopped taking writes)
/// it starts nothing new, lets the uploads in flight finish within `grace`,
/// cancels what is left, and returns, so that what the journals still hold
/// is reported only once nothing is uploading any more.
///
/// It lives here rather than beside the HTTP server: what a stop means for
/// the journal (which entries go now, which wait for the next start) is the
/// provider's to decide, and ServiceLifecycle is a small protocol package
/// with no HTTP in it, so the core can depend on it and still know nothing
/// of Hummingbird. One service for all domains, not one each: a group stops
/// its services one after the other, so per domain the graces would add up
/// and the last domain would go on starting uploads while the first drains.
public struct Uploader: Service, CustomStringConvertible {
    public let providers: [Provider]
    /// How long uploads in flight may go on after a graceful stop.
    public let grace: Duration

    public init(providers: [Provider], grace: Duration = .seconds(30)) {
        self.providers = providers
        self.grace = grace
    }

    /// Runs until the group shuts down gracefully or cancels it; every
    /// domain's uploads inherit the graceful shutdown as child tasks.
    public func run() async throws {
        // A service that returns early takes the whole group down with it.
        guard !providers.isEmpty else { return try await gracefulShutdown() }
        await withDiscardingTaskGroup { group in
            for provider in providers {
                group.addTask { await provider.runUploads(grace: grace) }
            }
        }
    }

    /// The service's name in the group's logs.
    public var description: String { "Uploader(\(providers.map(\.domain).joined(separator: ", ")))" }
}
