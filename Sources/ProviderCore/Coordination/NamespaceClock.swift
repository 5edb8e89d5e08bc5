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
///
/// Within this process a change may say which folder it touches
/// (`Scope`): a write of a file and an upload touch only the folder that
/// holds the name, and a listing of another folder stays valid while they
/// run. Before scopes, every write and every finished upload anywhere in
/// the domain threw away every listing in flight, so during a burst of
/// writes each read of any folder listed it upstream again (issue 14). A
/// change counts as touching everything until it confines itself, which
/// it must do before its first effect: a listing checked while the change
/// touched nothing yet lost nothing by not waiting for it. A write starts
/// confined to the folder the index knew at its path before it waited for
/// the coordination, so that even the resolution of its target under the
/// coordination voids no other folder's listing.
final class NamespaceClock: Sendable {
    /// The change the task runs in (inherited by the tasks it starts, which
    /// may outlive it: a change is matched by its number, not assumed).
    @TaskLocal static var currentChange: UInt64?

    /// What a change or an upload may alter: which folders' listings upstream
    /// and in the index it can make differ.
    enum Scope: Equatable, Sendable {
        case everything
        /// The members of one folder (by item id): names in it made,
        /// replaced or gone, nothing above or below.
        case folder(Int64)

        /// The members of `folder`; everything when the folder is not known.
        static func members(of folder: Int64?) -> Scope {
            folder.map { .folder($0) } ?? .everything
        }

        /// Whether it may alter the listing of `folder` (nil: of any folder).
        func reaches(_ folder: Int64?) -> Bool {
            switch self {
            case .everything: true
            case .folder(let id): folder == nil || folder == id
            }
        }
    }

    struct Reading: Equatable, Sendable {
        fileprivate let generation: UInt64
        fileprivate let quiet: Bool
        /// The folder whose listing it guards; nil: the whole domain's.
        fileprivate let folder: Int64?
        /// The shared index's clock when it was taken (nil: no shared index).
        let shared: NamespaceStamp?
        /// Whether no change (but the reader's own) reaching its folder was
        /// running when it was taken.
        var isQuiet: Bool { quiet }
    }

    private struct State {
        var generation: UInt64 = 0
        /// The changes running, with what each may alter so far.
        var running: [UInt64: Scope] = [:]
        var nextChange: UInt64 = 0
        /// The generation of the last change that reached everything.
        var everythingChanged: UInt64 = 0
        /// The generation of the last change of each folder's members.
        var folderChanged: [Int64: UInt64] = [:]

        /// Records a change, or the end of one, of `scope`.
        mutating func record(_ scope: Scope) {
            generation &+= 1
            switch scope {
            case .everything:
                everythingChanged = generation
            case .folder(let id):
                // Bounded: past it, forgetting the folders is one change of
                // everything (a listing in flight lists again, nothing worse).
                if folderChanged.count >= NamespaceClock.foldersRemembered {
                    folderChanged.removeAll(keepingCapacity: true)
                    everythingChanged = generation
                }
                folderChanged[id] = generation
            }
        }

        /// Whether anything reaching `folder` happened after `generation`
        /// or is running now (but `own`).
        func disturbed(_ folder: Int64?, since generation: UInt64, except own: UInt64?) -> Bool {
            if running.contains(where: { $0.key != own && $0.value.reaches(folder) }) { return true }
            guard let folder else { return self.generation != generation }
            return everythingChanged > generation || (folderChanged[folder] ?? 0) > generation
        }
    }

    /// How many folders' last changes are kept.
    static let foldersRemembered = 10_000

    private let state = NIOLockedValueBox(State())

    /// A reading for a listing of `folder` (nil: of anything in the domain).
    /// `shared`: the shared index's clock, read just before. An odd one is
    /// a change running on some instance; when this task's own change runs,
    /// it is that one (a change holds the domain's turn on every instance).
    func read(shared: NamespaceStamp? = nil, folder: Int64? = nil) -> Reading {
        let own = Self.currentChange
        return state.withLockedValue { state in
            let ownRunning = own.map { state.running[$0] != nil } ?? false
            let sharedQuiet = !(shared?.changeRunning ?? false) || ownRunning
            let localQuiet = !state.running.contains { $0.key != own && $0.value.reaches(folder) }
            return Reading(generation: state.generation, quiet: sharedQuiet && localQuiet, folder: folder, shared: shared)
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
            guard ContinuousClock.now < deadline else {
                return Reading(generation: reading.generation, quiet: true, folder: reading.folder, shared: reading.shared)
            }
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

    /// Nothing moved the clock since `reading`, anywhere in the domain.
    func unchanged(since reading: Reading) -> Bool {
        state.withLockedValue { $0.generation == reading.generation }
    }

    /// Nothing that reaches the reading's folder happened since it was taken
    /// or runs now (but the caller's own change), and nothing did when it
    /// was taken: what a listing refresh requires.
    func undisturbed(since reading: Reading) -> Bool {
        reading.quiet && !state.withLockedValue { $0.disturbed(reading.folder, since: reading.generation, except: Self.currentChange) }
    }

    /// Runs `body` as a namespace change of `scope` (until it confines
    /// itself further: `confine`): the clock moves when it starts and when
    /// it ends.
    func change<T>(confinedTo scope: Scope = .everything, _ body: () async throws -> T) async rethrows -> T {
        let change = state.withLockedValue { state in
            // While it runs, `disturbed` sees it among the running; its end
            // records what it reached by then, which covers its start.
            state.generation &+= 1
            state.nextChange &+= 1
            state.running[state.nextChange] = scope
            return state.nextChange
        }
        defer {
            state.withLockedValue { state in
                state.record(state.running.removeValue(forKey: change) ?? .everything)
            }
        }
        return try await Self.$currentChange.withValue(change) { try await body() }
    }

    /// Says that the change the caller runs in alters only `scope` from now
    /// on, and altered nothing yet: called before its first effect, upstream
    /// or in the index (so it may also move a change to another folder
    /// than it started in). Outside a change it does nothing.
    func confine(to scope: Scope) {
        guard let own = Self.currentChange else { return }
        state.withLockedValue { state in
            if state.running[own] != nil { state.running[own] = scope }
        }
    }

    /// A change that happened at once (an upload the upstream took) in `scope`.
    func tick(_ scope: Scope = .everything) {
        state.withLockedValue { $0.record(scope) }
    }
}
