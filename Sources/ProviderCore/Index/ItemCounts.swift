import Foundation

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
