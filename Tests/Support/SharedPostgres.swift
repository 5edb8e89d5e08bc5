import Foundation

/// One server for the whole test process, started on first use (fsync
/// off: these tests do not crash it), with a database per test; the
/// server's exit guard stops it when the process ends.
public actor SharedPostgres {
    public static let shared = SharedPostgres()
    /// Tests start together: the first to ask starts the server, the
    /// others wait for the same start.
    private var starting: Task<PostgresServer, any Error>?
    private var databases = Set<String>()

    /// The URL of the database for `key`, made on first use.
    public func database(for key: String) async throws -> String {
        let name = "t_" + String(key.lowercased().map { $0.isLetter || $0.isNumber ? $0 : "_" }).suffix(60)
        let starting = self.starting ?? Task { try await PostgresServer(fsync: false) }
        self.starting = starting
        let server = try await starting.value
        if databases.insert(name).inserted {
            try await server.createDatabase(name)
        }
        return server.url(database: name)
    }
}
