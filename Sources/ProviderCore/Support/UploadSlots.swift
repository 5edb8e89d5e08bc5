import NIOConcurrencyHelpers

/// Who may upload now: at most `limit` uploads at once and one per item, so
/// an item's uploads stay in order while different items go side by side.
/// A DELETE holds its items: it waits for their uploads in flight and keeps
/// new ones out until it has forgotten them.
public final class UploadSlots: Sendable {
    private enum Want {
        case upload(Int64)
        case hold(Set<Int64>)
    }

    private struct State {
        var uploading: Set<Int64> = []
        var held: Set<Int64> = []
        var waiters: [(want: Want, continuation: CheckedContinuation<Void, Never>)] = []

        /// Takes what `want` asks for if it is free now.
        mutating func take(_ want: Want, limit: Int) -> Bool {
            switch want {
            case .upload(let id):
                // A DELETE waiting for this item goes first: no more bytes for it.
                let awaited = waiters.contains { if case .hold(let ids) = $0.want { ids.contains(id) } else { false } }
                guard uploading.count < limit, !uploading.contains(id), !held.contains(id), !awaited else { return false }
                uploading.insert(id)
            case .hold(let ids):
                guard uploading.isDisjoint(with: ids), held.isDisjoint(with: ids) else { return false }
                held.formUnion(ids)
            }
            return true
        }
    }

    private let limit: Int
    private let state = NIOLockedValueBox(State())

    public init(limit: Int) {
        self.limit = max(1, limit)
    }

    func withUpload<T>(of id: Int64, _ body: () async throws -> T) async throws -> T {
        await acquire(.upload(id))
        defer { release { $0.uploading.remove(id) } }
        return try await body()
    }

    func withHeld<T>(_ ids: Set<Int64>, _ body: () async throws -> T) async throws -> T {
        await acquire(.hold(ids))
        defer { release { $0.held.subtract(ids) } }
        return try await body()
    }

    private func acquire(_ want: Want) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let taken = state.withLockedValue { s -> Bool in
                if s.take(want, limit: limit) { return true }
                s.waiters.append((want, continuation))
                return false
            }
            if taken { continuation.resume() }
        }
    }

    /// Frees a slot, then wakes, oldest first, every waiter that fits now.
    private func release(_ free: (inout State) -> Void) {
        let woken = state.withLockedValue { s -> [CheckedContinuation<Void, Never>] in
            free(&s)
            var woken: [CheckedContinuation<Void, Never>] = []
            var still: [(want: Want, continuation: CheckedContinuation<Void, Never>)] = []
            for waiter in s.waiters {
                if s.take(waiter.want, limit: limit) { woken.append(waiter.continuation) } else { still.append(waiter) }
            }
            s.waiters = still
            return woken
        }
        woken.forEach { $0.resume() }
    }
}
