import DavgateTestSupport
import Foundation
import Logging
@testable import ProviderCore

/// The index the provider's tests run over: a SQLite file in the test's
/// folder (the embedded default), or, with `DAVGATE_TEST_INDEX=postgres`,
/// a database of its own on one PostgreSQL server the test process shares
/// (the shared index; `scripts/test` runs the suite both ways).
enum TestIndex {
    static let usesPostgres = ProcessInfo.processInfo.environment["DAVGATE_TEST_INDEX"] == "postgres"

    /// Opens the index `name` of the test whose files are under `root`;
    /// opening it again reopens the same one, as a restart does.
    static func open(_ name: String = "index", in root: URL) async throws -> MetadataIndex {
        guard usesPostgres else { return try MetadataIndex(file: root.appendingPathComponent("\(name).sqlite")) }
        return try await openPostgres(name, in: root)
    }

    /// The shared index `name` of the test under `root` on PostgreSQL,
    /// whatever `DAVGATE_TEST_INDEX` says, seen by the instance whose
    /// holdings file is `holdings` (default: one beside the test's files,
    /// named after the index). Several instances open the same `name`
    /// with holdings of their own.
    static func openPostgres(_ name: String = "index", in root: URL, holdings: URL? = nil) async throws -> MetadataIndex {
        let url = try await SharedPostgres.shared.database(for: "\(root.lastPathComponent)_\(name)")
        return try await MetadataIndex(postgres: try PostgresLocation(url: url),
                                       holdings: holdings ?? root.appendingPathComponent("\(name)-holdings.sqlite"),
                                       logger: Logger(label: "test"))
    }
}
