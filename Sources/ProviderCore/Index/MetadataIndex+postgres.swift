import Foundation
import Logging

extension MetadataIndex {
    /// Connects to a shared index on PostgreSQL (`[index] url`), creating
    /// its schema on first use: the index several instances share.
    /// - Parameters:
    ///   - holdings: this instance's file of which versions its content
    ///     cache holds (`holdings.sqlite` in the state folder, beside the
    ///     cache): facts of one instance, which the shared rows do not keep.
    /// - Throws: `ProviderError.indexUnavailable` when the server cannot be
    ///   reached, or the server's error.
    public init(postgres location: PostgresLocation, holdings: URL, logger: Logger) async throws {
        store = try await PostgresIndex(location: location, holdingsFile: holdings, logger: logger)
    }

    /// Connects only to read (`davgate status --offline`): nothing is
    /// created, and the holdings file, if any, is only read.
    /// - Throws: `IndexVersionError` when its schema is not this davgate's.
    public init(readingOnly location: PostgresLocation, holdings: URL? = nil, logger: Logger) async throws {
        store = try await PostgresIndex(location: location, readingOnly: true, holdingsFile: holdings, logger: logger)
    }
}

/// Every operation of the protocol is in the `PostgresIndex+*` files.
extension PostgresIndex: IndexStore {}
