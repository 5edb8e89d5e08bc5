import NIOConcurrencyHelpers

/// Where an item's content is, as a user would want to see it (the File
/// Provider's download state).
public enum ContentState: String, Sendable {
    /// In the upstream only: listed with its metadata, fetched on first read.
    case placeholder
    /// Being fetched from the upstream right now.
    case fetching
    /// Some ranges are local (read with Range), the rest still upstream.
    case partial
    /// The current version is in the local cache.
    case materialized
    /// Written here, waiting in the journal for its upload (write-back).
    case modified
    /// Being uploaded right now.
    case uploading
    /// Its upload was given up after `upload_max_age`: kept here, reported.
    case failed
    case folder
}

extension Provider {
    public func contentState(of item: Item) -> ContentState {
        if item.isFolder { return .folder }
        if item.dirty { return .modified }
        if item.isMaterialized { return .materialized }
        return fetches.withLockedValue { table in
            if table.whole[item.id] != nil { return .fetching }
            if let sparse = table.sparse[item.id], sparse.holds(item), !sparse.present.isEmpty { return .partial }
            return .placeholder
        }
    }

    /// The states of a page of items, with what only the journal knows
    /// (an upload given up) and what is being uploaded now.
    public func contentStates(of items: [Item]) async throws -> [Int64: ContentState] {
        let failed = Set(try await index.latestEntries(of: items.filter(\.dirty).map(\.id)).filter(\.failed).map(\.itemID))
        let uploading = Set(uploadProgress.withLockedValue { $0.keys })
        var states: [Int64: ContentState] = [:]
        for item in items {
            states[item.id] = failed.contains(item.id) ? .failed
                : item.dirty && uploading.contains(item.id) ? .uploading : contentState(of: item)
        }
        return states
    }

    /// The bytes of the item's current content that are local: all of them
    /// when materialized, the fetched ranges when partly local.
    public func bytesCached(of item: Item) -> Int64 {
        if item.isFolder { return 0 }
        if item.isMaterialized { return item.size }
        return fetches.withLockedValue { table in
            guard let sparse = table.sparse[item.id], sparse.holds(item) else { return 0 }
            return sparse.present.byteCount
        }
    }

    /// Whether the item is the kept-both copy of a conflicting edit (it
    /// carries the `g:conflict-of` property naming the file it conflicts with).
    public static func isConflictCopy(_ properties: [DeadProperty]) -> Bool {
        properties.contains { $0.namespace == namespace && $0.name == "conflict-of" }
    }
}
