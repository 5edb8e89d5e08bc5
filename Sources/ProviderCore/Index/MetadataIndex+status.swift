import Foundation
import GRDB

/// Counts for the status page, answered by the index in one read each.
extension MetadataIndex {
    public struct ItemCounts: Sendable, Codable, Equatable {
        public var files: Int
        public var folders: Int
        /// Files whose whole current content is local.
        public var local: Int
        public var bytesListed: Int64
        /// Items (the root aside) in each state, as `g:state` names them.
        public var states: [ItemState.Name: Int]

        public init(states: [ItemState.Name: Int], bytesListed: Int64) {
            self.states = states
            self.bytesListed = bytesListed
            folders = states[.folder] ?? 0
            files = states.filter { $0.key != .folder }.values.reduce(0, +)
            local = states.filter { $0.key.isLocal }.values.reduce(0, +)
        }
    }

}

extension MetadataIndex.ItemCounts {
    /// "12 placeholder, 3 materialized, 1 uploading": the states with items,
    /// in the order of the item's life.
    public var stateSummary: String {
        states.filter { $0.value > 0 }.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key.rawValue)" }.joined(separator: ", ")
    }
}

extension MetadataIndex {
    /// How many items of the domain are in each stored state, the root aside.
    func storedStateCounts(domain: String) async throws -> [ItemState.Name: Int] {
        try await pool.read { db in
            var counts: [ItemState.Name: Int] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT state, COUNT(*) FROM item WHERE domain = ? AND parent_id IS NOT NULL GROUP BY state",
                                        arguments: [domain]) {
                if let stored = StoredState(rawValue: row[0]) { counts[stored.state.name] = row[1] }
            }
            return counts
        }
    }

    func bytesListed(domain: String) async throws -> Int64 {
        try await pool.read { db in
            try Int64.fetchOne(db, sql: "SELECT COALESCE(SUM(size), 0) FROM item WHERE domain = ? AND is_folder = 0", arguments: [domain]) ?? 0
        }
    }

    /// Ids of the domain's items in a stored state (at most `limit`).
    func items(in state: StoredState, domain: String, limit: Int = 200) async throws -> [Int64] {
        try await pool.read { db in
            try Int64.fetchAll(db, sql: "SELECT id FROM item WHERE domain = ? AND state = ? ORDER BY id LIMIT ?",
                               arguments: [domain, state.rawValue, limit])
        }
    }
}
