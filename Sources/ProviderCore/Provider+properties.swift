/// Dead properties (PROPPATCH), kept in the index with the item.
extension Provider {
    public func deadProperties(of item: Item) async throws -> [DeadProperty] {
        try await index.deadProperties(of: item.id)
    }

    public func deadProperties(of items: [Item]) async throws -> [Int64: [DeadProperty]] {
        try await index.deadProperties(of: items.map(\.id))
    }

    /// Applies a PROPPATCH. Setting the content policy `eager` fetches the
    /// item's content (everything below, for a folder) now, in the
    /// background, and keeps it through eviction while the policy stands.
    ///
    /// The item's locks are checked under the coordination, as a write's are.
    public func changeProperties(of item: Item, _ changes: [PropertyChange],
                                 conditions: WriteConditions = .unconditional) async throws {
        try await coordinated {
            try await check(conditions.locksOnly, target: item, parent: nil)
            try await index.applyPropertyChanges(changes, to: item.id)
        }
        if changes.last(where: { if case .contentPolicy = $0 { true } else { false } }) == .contentPolicy(.eager) {
            // Unstructured: the PROPPATCH is answered before the fetch, which, like a GET's, has
            // nothing to drain at a stop (a fetch cut short leaves only tmp/, emptied at start).
            Task { await fetchEagerly(item) }
        }
    }

    /// The content policy that applies to each item, set or inherited.
    public func contentPolicies(of items: [Item]) async throws -> [Int64: EffectivePolicy] {
        try await index.effectivePolicies(of: items.map(\.id))
    }
}
