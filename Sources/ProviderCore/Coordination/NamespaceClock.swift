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
final class NamespaceClock: Sendable {
    struct Reading: Equatable, Sendable {
        fileprivate let generation: UInt64
        fileprivate let quiet: Bool
    }

    private struct State {
        var generation: UInt64 = 0
        var running = 0
    }

    private let state = NIOLockedValueBox(State())

    func read() -> Reading {
        state.withLockedValue { Reading(generation: $0.generation, quiet: $0.running == 0) }
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

    func beginChange() {
        state.withLockedValue { $0.generation &+= 1; $0.running += 1 }
    }

    func endChange() {
        state.withLockedValue { $0.generation &+= 1; $0.running -= 1 }
    }

    /// A change that happened at once (an upload the upstream took).
    func tick() {
        state.withLockedValue { $0.generation &+= 1 }
    }
}
