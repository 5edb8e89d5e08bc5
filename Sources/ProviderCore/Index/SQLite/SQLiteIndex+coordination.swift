import Foundation

/// One process holds the embedded index: the provider's own locks and
/// clock coordinate everything, so there is nothing to share.
extension SQLiteIndex {
    var isShared: Bool { false }

    func withDomainTurn<T>(domain: String, _ body: () async throws -> T) async throws -> T {
        try await body()
    }

    func withListingTurn<T>(folder: Int64, _ body: (_ waited: Bool) async throws -> T) async throws -> T {
        try await body(false)
    }

    func namespaceStamp(domain: String) async throws -> NamespaceStamp? { nil }

    func moveNamespaceClock(domain: String, _ move: NamespaceMove) async throws {}

    func beat(instance id: String, address: String, started: Date, uploads: Int) async throws {}

    func instances() async throws -> [InstanceStatus] { [] }

    func leave(instance id: String) async throws {}
}
