import NIOConcurrencyHelpers

/// When the domain's namespace last changed here: a listing refresh reads
/// the clock before it asks the upstream, and applies what it fetched only
/// if nothing changed since.
///
/// A namespace change moves the clock when it starts and when it ends. A
/// reading taken while one runs is never undisturbed, even if nothing
/// moves afterwards: the change may have reached the upstream already and
/// not the index yet, so the listing can hold its new name while the index
/// does not; applying it would make a placeholder the change then collides
/// with, or sweep what the change records next (found with the shared
/// index, where the index's commits are slower and the window wider).
///
/// A change may list folders itself (the trash's, on the way to it): its
/// own readings do not count it as running (`currentChange`).
///
/// With a shared index, other instances' changes count too: a reading
/// carries the index's stamp (`NamespaceStamp`), which the index checks
/// again in the transaction that applies the listing.
final class NamespaceClock: Sendable {
    /// The change the task runs in (inherited by the tasks it starts, which
    /// may outlive it: a change is matched by its number, not assumed).
    @TaskLocal static var currentChange: UInt64?

    struct Reading: Equatable, Sendable {
        fileprivate let generation: UInt64
        fileprivate let quiet: Bool
        /// The shared index's clock when it was taken (nil: no shared index).
        let shared: NamespaceStamp?
        /// Whether no change (but the reader's own) was running when it was taken.
        var isQuiet: Bool { quiet }
    }

    private struct State {
        var generation: UInt64 = 0
        var running: Set<UInt64> = []
        var nextChange: UInt64 = 0
    }

    private let state = NIOLockedValueBox(State())

    /// `shared`: the shared index's clock, read just before. An odd one is
    /// a change running on some instance; when this task's own change runs,
    /// it is that one (a change holds the domain's turn on every instance).
    func read(shared: NamespaceStamp? = nil) -> Reading {
        let own = Self.currentChange
        return state.withLockedValue { state in
            let ownRunning = own.map { state.running.contains($0) } ?? false
            let sharedQuiet = !(shared?.changeRunning ?? false) || ownRunning
            return Reading(generation: state.generation, quiet: sharedQuiet && state.running.allSatisfy { $0 == own }, shared: shared)
        }
    }

    /// A reading taken once no change (but the caller's own) runs: for a
    /// folder never listed, which has no last listing to serve meanwhile.
    /// Past `limit` it settles for the reading it has, taken as quiet: a
    /// change may itself be waiting for this listing (joined through the
    /// folder's single flight), and a folder never listed must answer
    /// something; that narrow race is the one every reading had before this
    /// clock looked at running changes.
    /// `read` takes a reading (with the shared index's clock, when there is one).
    static func quietReading(limit: Duration = .seconds(2), _ read: () async throws -> Reading) async throws -> Reading {
        let deadline = ContinuousClock.now + limit
        var reading = try await read()
        while !reading.isQuiet {
            guard ContinuousClock.now < deadline else { return Reading(generation: reading.generation, quiet: true, shared: reading.shared) }
            try? await Task.sleep(for: .milliseconds(reading.shared == nil ? 10 : 50))
            reading = try await read()
        }
        return reading
    }

    /// Runs `body` as work of its own, not of the change the caller may run
    /// in: for background tasks a change starts, which outlive it.
    static func outsideChange<T: Sendable>(_ body: () async -> T) async -> T {
        await $currentChange.withValue(nil) { await body() }
    }

    /// Nothing moved the clock since `reading`.
    func unchanged(since reading: Reading) -> Bool {
        state.withLockedValue { $0.generation == reading.generation }
    }

    /// Nothing moved the clock since `reading`, and no change was running
    /// when it was taken: what a listing refresh requires.
    func undisturbed(since reading: Reading) -> Bool {
        reading.quiet && unchanged(since: reading)
    }

    /// Runs `body` as a namespace change: the clock moves when it starts and when it ends.
    func change<T>(_ body: () async throws -> T) async rethrows -> T {
        let change = state.withLockedValue { state in
            state.generation &+= 1
            state.nextChange &+= 1
            state.running.insert(state.nextChange)
            return state.nextChange
        }
        defer {
            state.withLockedValue { state in
                state.generation &+= 1
                state.running.remove(change)
            }
        }
        return try await Self.$currentChange.withValue(change) { try await body() }
    }

    /// A change that happened at once (an upload the upstream took).
    func tick() {
        state.withLockedValue { $0.generation &+= 1 }
    }
}
