import NIOConcurrencyHelpers

/// Items' states as clients see them: the stored state from the row with
/// what is in flight now (a download, a sparse file, an upload) replayed
/// over it through the state machine, so `g:state`, the browser listing,
/// `davgate status` and eviction all read one answer.
extension Provider {
    /// What is in flight for one item, from the provider's in-memory tables.
    private func activity(of item: Item) -> [ItemStateMachine.Event] {
        var events: [ItemStateMachine.Event] = []
        fetches.withLockedValue { table in
            if let sparse = table.sparse[item.id], sparse.holds(item), !sparse.present.isEmpty {
                events.append(.rangeFetched(bytesLocal: sparse.present.byteCount))
            }
            if table.whole[item.id] != nil { events.append(.fetchStarted) }
        }
        if let progress = uploadProgress.withLockedValue({ $0[item.id] }) {
            events.append(.uploadStarted)
            events.append(.uploadProgressed(bytesSent: progress.bytesSent))
        }
        return events
    }

    /// The item's state now.
    public func state(of item: Item) -> ItemState {
        var machine = ItemStateMachine(stored: item.state)
        for event in activity(of: item) {
            // In flight for a version the row no longer has (a download
            // finishing as a write lands): the row is the answer.
            do { try machine.handle(event) } catch { return item.state.state }
        }
        return machine.state
    }

    /// The states of a page of items.
    public func states(of items: [Item]) -> [Int64: ItemState] {
        Dictionary(uniqueKeysWithValues: items.map { ($0.id, state(of: $0)) })
    }

    /// How many of the domain's items are in each state (folders but the
    /// root counted as `folder`): the stored counts from the index, with
    /// the few items in flight moved to their transient state.
    public func stateCounts() async throws -> [ItemState.Name: Int] {
        var counts = try await index.storedStateCounts(domain: domain)
        let busy = Set(fetches.withLockedValue { Array($0.whole.keys) + Array($0.sparse.keys) })
            .union(uploadProgress.withLockedValue { $0.keys })
        for id in busy {
            guard let item = try await index.item(id: id) else { continue }
            let now = state(of: item)
            guard now.name != item.state.state.name else { continue }
            counts[item.state.state.name, default: 0] -= 1
            counts[now.name, default: 0] += 1
        }
        return counts.filter { $0.value > 0 }
    }
}
