/// Dead properties (PROPPATCH), kept in the index with the item.
extension Provider {
    public func deadProperties(of item: Item) async throws -> [DeadProperty] {
        try await index.deadProperties(of: item.id)
    }

    public func deadProperties(of items: [Item]) async throws -> [Int64: [DeadProperty]] {
        try await index.deadProperties(of: items.map(\.id))
    }

    /// Applies a PROPPATCH. Setting davgate's `pinned` property pins the
    /// item: its content (everything below, for a folder) is fetched now, in
    /// the background, and never evicted while the property is there.
    ///
    /// The item's locks are checked under the coordination, as a write's are.
    public func changeProperties(of item: Item, _ changes: [PropertyChange],
                                 conditions: WriteConditions = .unconditional) async throws {
        try await coordinated {
            try await check(conditions.locksOnly, target: item, parent: nil)
            try await index.applyPropertyChanges(changes, to: item.id)
        }
        let pins = changes.contains { change in
            if case .set(let property) = change { return property.namespace == Self.namespace && property.name == "pinned" }
            return false
        }
        if pins {
            // Unstructured: the PROPPATCH is answered before the fetch, which, like a GET's, has
            // nothing to drain at a stop (a fetch cut short leaves only tmp/, emptied at start).
            Task { await fetchPinned(item) }
        }
    }
}
