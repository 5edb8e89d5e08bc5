import NIOConcurrencyHelpers

/// Who may upload now: at most `limit` uploads at once and one per item, so
/// an item's uploads stay in order while different items go side by side.
/// A DELETE holds its items: it waits for their uploads in flight and keeps
/// new ones out until it has forgotten them. A task cancelled while it waits
/// stops waiting (throws `CancellationError`).
public final class UploadSlots: Sendable {
    private enum Want: Sendable {
        case upload(Int64)
        case hold(Set<Int64>)
    }

    private struct State: WaitingState {
        var limit: Int
        var uploading: Set<Int64> = []
        var held: Set<Int64> = []
        var waiters = WaitQueue<Want>()

        /// Takes what `want` asks for if it is free now.
        mutating func grant(_ want: Want) -> Bool {
            switch want {
            case .upload(let id):
                // A DELETE waiting for this item goes first: no more bytes for it.
                let awaited = waiters.contains { if case .hold(let ids) = $0 { ids.contains(id) } else { false } }
                guard uploading.count < limit, !uploading.contains(id), !held.contains(id), !awaited else { return false }
                uploading.insert(id)
            case .hold(let ids):
                guard uploading.isDisjoint(with: ids), held.isDisjoint(with: ids) else { return false }
                held.formUnion(ids)
            }
            return true
        }
    }

    private let state: NIOLockedValueBox<State>

    public init(limit: Int) {
        state = NIOLockedValueBox(State(limit: max(1, limit)))
    }

    /// Changes how many uploads may run at once; a raised limit lets the
    /// waiting ones in at once, a lowered one lets those running finish.
    func setLimit(_ limit: Int) {
        state.updateAndWake { $0.limit = max(1, limit) }
    }

    /// Tasks parked now (tests wait for a waiter to be parked).
    var waiting: Int { state.withLockedValue { $0.waiters.count } }

    func withUpload<T>(of id: Int64, _ body: () async throws -> T) async throws -> T {
        try await state.wait(for: .upload(id))
        // Frees the slot, then wakes, oldest first, every waiter that fits now.
        defer { state.updateAndWake { _ = $0.uploading.remove(id) } }
        return try await body()
    }

    func withHeld<T>(_ ids: Set<Int64>, _ body: () async throws -> T) async throws -> T {
        try await state.wait(for: .hold(ids))
        defer { state.updateAndWake { $0.held.subtract(ids) } }
        return try await body()
    }
}
