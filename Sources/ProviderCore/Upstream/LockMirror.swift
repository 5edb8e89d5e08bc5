import Foundation

/// An upstream that takes WebDAV locks itself, so that people working on the
/// upstream directly see a file as locked while a davgate client holds it
/// (`mirror_locks = true`). The upstream's token never leaves davgate: the
/// store sends it with its own writes of that path.
public protocol LockMirror: Sendable {
    /// Locks one file upstream for `timeout` seconds (nil: infinite).
    /// - Returns: the upstream's lock token; nil when the path is not
    ///   mirrored (a file kept local).
    /// - Throws: `UpstreamError.locked` when someone holds a conflicting lock there.
    func lock(_ path: ItemPath, exclusive: Bool, timeout: Int?) async throws -> String?
    func refreshLock(_ path: ItemPath, token: String, timeout: Int?) async throws
    func unlock(_ path: ItemPath, token: String) async throws
    /// Takes back a token held before a restart, so the store sends it again.
    func adoptLock(_ path: ItemPath, token: String)
}
