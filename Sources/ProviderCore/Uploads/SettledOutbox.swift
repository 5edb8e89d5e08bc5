import NIOConcurrencyHelpers

/// Outbox files whose journal rows a finished upload removed in a commit
/// that need not be durable yet (`IndexStore.completeUpload`). Each is
/// deleted only after an index sync that covers that commit
/// (`Provider.removeSettledOutbox`): a power loss that takes the commit
/// back must find every row it brings back with its file.
final class SettledOutbox: Sendable {
    private let names = NIOLockedValueBox<[String]>([])

    func add(_ settled: [String]) {
        guard !settled.isEmpty else { return }
        names.withLockedValue { $0.append(contentsOf: settled) }
    }

    /// Everything added so far, handed over once.
    func take() -> [String] {
        names.withLockedValue { names in
            defer { names.removeAll() }
            return names
        }
    }
}
