/// A domain's namespace clock as a shared index keeps it, for instances
/// that cannot see each other's memory: moved by every namespace change
/// on any instance (odd while one runs) and by every upload the upstream
/// took. A listing read at one stamp is applied only in a transaction that
/// still finds it, so a refresh on one instance can never undo a change
/// another made meanwhile (`NamespaceClock` is the same rule inside one
/// process, and the only one the embedded index needs).
struct NamespaceStamp: Sendable, Equatable {
    let domain: String
    let generation: Int64

    /// Whether a namespace change was running somewhere when it was read.
    var changeRunning: Bool { generation % 2 != 0 }
}

/// How a namespace change or an upload moves the shared clock.
enum NamespaceMove: Sendable {
    /// A change begins: the generation becomes odd (and moves past any odd
    /// value a killed instance left behind).
    case changeBegan
    /// A change ends: the generation becomes even again.
    case changeEnded
    /// The upstream took an upload outside a change: moved by two, parity kept.
    case tick
}
