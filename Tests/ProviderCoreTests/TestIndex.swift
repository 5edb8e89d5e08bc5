import Foundation
@testable import ProviderCore

/// The index the provider's tests run over: a SQLite file in the test's
/// folder (the embedded default).
enum TestIndex {
    /// Opens the index `name` of the test whose files are under `root`;
    /// opening it again reopens the same one, as a restart does.
    static func open(_ name: String = "index", in root: URL) async throws -> MetadataIndex {
        try MetadataIndex(file: root.appendingPathComponent("\(name).sqlite"))
    }
}
