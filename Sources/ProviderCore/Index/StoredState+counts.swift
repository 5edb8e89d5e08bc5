extension StoredState {
    /// Counts of items per stored state, as the index groups its rows, as
    /// counts per `g:state` name (the status page's); a state this davgate
    /// does not know is left out.
    static func countsByName(_ rows: [(state: String, count: Int)]) -> [ItemState.Name: Int] {
        var counts: [ItemState.Name: Int] = [:]
        for row in rows {
            if let stored = StoredState(rawValue: row.state) { counts[stored.state.name] = row.count }
        }
        return counts
    }
}
