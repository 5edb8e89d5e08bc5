import Foundation
import PostgresNIO

/// This instance's holdings (`LocalHoldings`) set up against the shared
/// index at start.
extension PostgresIndex {
    /// Binds the holdings to this database (`feed.identity`: holdings kept
    /// for another one go), and drops the entries of items deleted while
    /// this instance was not running, or by another instance.
    func adoptHoldings() async throws {
        let identity = try await read { t in try await t.first("SELECT identity FROM feed WHERE id = 1", as: String.self) }
        guard let identity else { throw IndexDatabaseError(message: "the index has no feed row") }
        try await holdings.adopt(identity: identity)
        try await holdings.prune { ids in
            try await self.read { t in
                Set(try await t.rows("SELECT id FROM item WHERE id = ANY(\(ids))").map { try $0.decode(Int64.self) })
            }
        }
    }
}

extension PostgresIndex {
    /// The shared rows live in PostgreSQL; here only the holdings' local
    /// database keeps pages to give back.
    func releaseMemory() {
        holdings.releaseMemory()
    }
}
