import Logging

extension MetadataIndex {
    /// Connects to a shared index on PostgreSQL (`[index] url`), creating
    /// its schema on first use: the index several instances share.
    /// - Throws: `ProviderError.indexUnavailable` when the server cannot be
    ///   reached, or the server's error.
    public init(postgres location: PostgresLocation, logger: Logger) async throws {
        store = try await PostgresIndex(location: location, logger: logger)
    }

    /// Connects only to read (`davgate status --offline`): nothing is created.
    /// - Throws: `IndexVersionError` when its schema is not this davgate's.
    public init(readingOnly location: PostgresLocation, logger: Logger) async throws {
        store = try await PostgresIndex(location: location, readingOnly: true, logger: logger)
    }
}

/// Every operation of the protocol is in the `PostgresIndex+*` files.
extension PostgresIndex: IndexStore {}
