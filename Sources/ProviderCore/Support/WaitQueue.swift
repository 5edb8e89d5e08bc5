/// Tasks parked until what each wants is granted, oldest first, each under
/// an id of its own so that a cancelled one can be taken out alone: the one
/// queue behind `AsyncMutex`, `UploadSlots` and the readers of a `Download`.
struct WaitQueue<Want: Sendable>: Sendable {
    struct Waiter: Sendable {
        let id: UInt64
        let want: Want
        let continuation: CheckedContinuation<Void, any Error>
    }

    /// Oldest first.
    private(set) var parked: [Waiter] = []
    private var lastID: UInt64 = 0

    var isEmpty: Bool { parked.isEmpty }
    var count: Int { parked.count }

    /// An id no waiter of this queue has had.
    mutating func nextID() -> UInt64 {
        lastID &+= 1
        return lastID
    }

    mutating func append(_ id: UInt64, wanting want: Want, _ continuation: CheckedContinuation<Void, any Error>) {
        parked.append(Waiter(id: id, want: want, continuation: continuation))
    }

    /// Takes the waiter out, if it is still parked; nil when it was granted
    /// already (then it is no longer the queue's to cancel).
    mutating func remove(_ id: UInt64) -> CheckedContinuation<Void, any Error>? {
        guard let index = parked.firstIndex(where: { $0.id == id }) else { return nil }
        return parked.remove(at: index).continuation
    }

    mutating func remove(at index: Int) -> CheckedContinuation<Void, any Error> {
        parked.remove(at: index).continuation
    }

    func contains(where wanted: (Want) -> Bool) -> Bool {
        parked.contains { wanted($0.want) }
    }
}

/// State under a mutex that tasks can wait on: its queue, and what decides
/// whether a want is granted.
protocol WaitingState: Sendable {
    associatedtype Want: Sendable
    var waiters: WaitQueue<Want> { get set }
    /// Whether `want` may go on now; takes what it grants (a lock, a slot),
    /// so that the next waiter asked sees it taken.
    mutating func grant(_ want: Want) -> Bool
}

extension WaitingState {
    /// Takes out, oldest first, every waiter whose want is granted now, for
    /// the caller to resume once it has let go of the mutex.
    mutating func takeGranted() -> [CheckedContinuation<Void, any Error>] {
        var granted: [CheckedContinuation<Void, any Error>] = []
        var index = 0
        while index < waiters.count {
            if grant(waiters.parked[index].want) {
                granted.append(waiters.remove(at: index))
            } else {
                index += 1
            }
        }
        return granted
    }
}
