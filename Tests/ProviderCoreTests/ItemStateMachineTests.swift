import ProviderCore
import Testing

/// The item state machine on its own: every legal transition with the
/// state and action it leads to, written out here independently of the
/// machine's table, and every other pair of state and event refused
/// without a change of state.
@Suite("the item state machine")
struct ItemStateMachineTests {
    typealias Event = ItemStateMachine.Event

    static let states: [ItemState] = [.folder, .placeholder, .fetching, .partial(bytesLocal: 10), .materialized, .modified,
                                      .uploading(bytesSent: 5), .failed, .conflict]
    static let events: [Event] = [.fetchStarted, .rangeFetched(bytesLocal: 20), .fetchFinished, .fetchFailed,
                                  .written(through: true), .written(through: false), .uploadStarted,
                                  .uploadProgressed(bytesSent: 7), .uploadSucceeded(newerPending: false),
                                  .uploadSucceeded(newerPending: true), .uploadFailed(givenUp: false), .uploadFailed(givenUp: true),
                                  .versionMismatch(newerPending: false), .versionMismatch(newerPending: true),
                                  .upstreamChanged, .evicted]

    struct Legal {
        var from: ItemState
        var event: Event
        var to: ItemState
        var action: ItemStateMachine.Action = .none
    }

    /// The item's life, as the README's diagram draws it.
    static let legal: [Legal] = {
        var table: [Legal] = [
            Legal(from: .placeholder, event: .fetchStarted, to: .fetching),
            Legal(from: .partial(bytesLocal: 10), event: .fetchStarted, to: .fetching),
            Legal(from: .placeholder, event: .rangeFetched(bytesLocal: 20), to: .partial(bytesLocal: 20)),
            Legal(from: .partial(bytesLocal: 10), event: .rangeFetched(bytesLocal: 20), to: .partial(bytesLocal: 20)),
            Legal(from: .fetching, event: .rangeFetched(bytesLocal: 20), to: .fetching),
            Legal(from: .placeholder, event: .fetchFinished, to: .materialized),
            Legal(from: .fetching, event: .fetchFinished, to: .materialized),
            Legal(from: .partial(bytesLocal: 10), event: .fetchFinished, to: .materialized),
            Legal(from: .fetching, event: .fetchFailed, to: .placeholder),

            Legal(from: .modified, event: .uploadStarted, to: .uploading(bytesSent: 0)),
            Legal(from: .failed, event: .uploadStarted, to: .uploading(bytesSent: 0)),
            Legal(from: .uploading(bytesSent: 5), event: .uploadProgressed(bytesSent: 7), to: .uploading(bytesSent: 7)),

            Legal(from: .placeholder, event: .upstreamChanged, to: .placeholder),
            Legal(from: .fetching, event: .upstreamChanged, to: .placeholder, action: .dropCache),
            Legal(from: .partial(bytesLocal: 10), event: .upstreamChanged, to: .placeholder, action: .dropCache),
            Legal(from: .materialized, event: .upstreamChanged, to: .placeholder, action: .dropCache),
            Legal(from: .conflict, event: .upstreamChanged, to: .placeholder, action: .dropCache),
            Legal(from: .modified, event: .upstreamChanged, to: .modified),
            Legal(from: .uploading(bytesSent: 5), event: .upstreamChanged, to: .uploading(bytesSent: 5)),
            Legal(from: .failed, event: .upstreamChanged, to: .failed),

            Legal(from: .materialized, event: .evicted, to: .placeholder, action: .dropCache),
            Legal(from: .partial(bytesLocal: 10), event: .evicted, to: .placeholder, action: .dropCache),
        ]
        // Any file may be written: through it is what the upstream holds, back it waits for its upload.
        for state in states where state != .folder {
            table.append(Legal(from: state, event: .written(through: true), to: .materialized))
            table.append(Legal(from: state, event: .written(through: false), to: .modified, action: .awaitUpload))
        }
        // An upload settles from the journal's states (a MOVE's flush delivers a failed one too).
        for state in [ItemState.modified, .uploading(bytesSent: 5), .failed] {
            table.append(Legal(from: state, event: .uploadSucceeded(newerPending: false), to: .materialized))
            table.append(Legal(from: state, event: .uploadSucceeded(newerPending: true), to: .modified))
            table.append(Legal(from: state, event: .uploadFailed(givenUp: false), to: .modified))
            table.append(Legal(from: state, event: .uploadFailed(givenUp: true), to: .failed))
            table.append(Legal(from: state, event: .versionMismatch(newerPending: false), to: .placeholder, action: .dropCache))
            table.append(Legal(from: state, event: .versionMismatch(newerPending: true), to: .modified))
        }
        return table
    }()

    @Test("every legal transition leads to its state and action")
    func legalTransitions() throws {
        for transition in Self.legal {
            var machine = ItemStateMachine(transition.from)
            let action = try machine.handle(transition.event)
            #expect(machine.state == transition.to, "\(transition.from) on \(transition.event)")
            #expect(action == transition.action, "\(transition.from) on \(transition.event)")
        }
    }

    @Test("every other event is refused and leaves the state as it was")
    func illegalTransitions() {
        var refused = 0
        for state in Self.states {
            for event in Self.events where !Self.legal.contains(where: { $0.from == state && $0.event == event }) {
                var machine = ItemStateMachine(state)
                #expect(throws: ItemStateMachine.IllegalTransition(state: state, event: event)) { try machine.handle(event) }
                #expect(machine.state == state)
                refused += 1
            }
        }
        // 9 states x 16 events, less the legal pairs: the table above is complete.
        #expect(refused == Self.states.count * Self.events.count - Self.legal.count)
        #expect(refused > 80)
    }

    @Test("what survives a restart: fetches and uploads in flight fall back to where they started")
    func storedStates() {
        #expect(ItemState.fetching.stored == .placeholder)
        #expect(ItemState.partial(bytesLocal: 3).stored == .placeholder)
        #expect(ItemState.uploading(bytesSent: 3).stored == .modified)
        for stored in StoredState.allCases { #expect(stored.state.stored == stored) }
        #expect(StoredState.evictable == [.materialized])
        #expect(ItemState.Name.allCases.filter(\.isLocal) == [.materialized, .modified, .uploading, .failed, .conflict])
        #expect(ItemState.partial(bytesLocal: 3).bytesLocal(size: 10) == 3)
        #expect(ItemState.uploading(bytesSent: 3).bytesLocal(size: 10) == 10)
        #expect(ItemState.placeholder.bytesLocal(size: 10) == 0)
    }
}
