/// Dead properties (PROPPATCH), kept in the index with the item.
extension Provider {
    public func deadProperties(of item: Item) async throws -> [DeadProperty] {
        try await index.deadProperties(of: item.id)
    }

    public func deadProperties(of items: [Item]) async throws -> [Int64: [DeadProperty]] {
        try await index.deadProperties(of: items.map(\.id))
    }

    public func changeProperties(of item: Item, _ changes: [PropertyChange]) async throws {
        try await index.applyPropertyChanges(changes, to: item.id)
    }
}
