import NIOConcurrencyHelpers

/// Runs at most one task per key; late callers await the running one.
///
/// This is how concurrent first reads of a placeholder share one download
/// (the File Provider calls `startProvidingItem` once per item). The shared
/// task is unstructured on purpose: one waiter going away must not cancel
/// the fetch the others are waiting on.
public final class SingleFlight<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    private let running = NIOLockedValueBox<[Key: Task<Value, any Error>]>([:])

    public init() {}

    public func run(_ key: Key, _ work: @escaping @Sendable () async throws -> Value) async throws -> Value {
        let task = running.withLockedValue { tasks in
            if let existing = tasks[key] { return existing }
            // The removal below takes the same lock, so it cannot run before
            // this insertion has finished.
            let task = Task<Value, any Error> {
                defer { _ = self.running.withLockedValue { $0.removeValue(forKey: key) } }
                return try await work()
            }
            tasks[key] = task
            return task
        }
        return try await task.value
    }
}
