import AsyncHTTPClient
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import ProviderCore

/// Locks mirrored upstream (`mirror_locks`): LOCK, refresh and UNLOCK of one
/// file, and the If header that submits the tokens with davgate's own
/// writes, since the upstream refuses them without (RFC 4918 section 7).
extension WebDAVStore: LockMirror {
    public func lock(_ path: ItemPath, exclusive: Bool, timeout: Int?) async throws -> String? {
        var request = try self.request("LOCK", path)
        request.headers.add(name: "Depth", value: "0")
        request.headers.add(name: "Timeout", value: Self.timeoutValue(timeout))
        request.headers.add(name: "Content-Type", value: "application/xml; charset=utf-8")
        let scope = exclusive ? "exclusive" : "shared"
        request.body = .bytes(ByteBuffer(string: """
            <?xml version="1.0" encoding="utf-8"?><D:lockinfo xmlns:D="DAV:"><D:lockscope><D:\(scope)/></D:lockscope>\
            <D:locktype><D:write/></D:locktype><D:owner>davgate, for one of its clients</D:owner></D:lockinfo>
            """))
        let answer = try await send(request, operation: .lock)
        guard let header = answer.headers.first(name: "Lock-Token"),
              let token = header.split(separator: "<").last?.split(separator: ">").first.map(String.init), !token.isEmpty else {
            throw UpstreamError.io("LOCK answered without a Lock-Token")
        }
        heldLocks.withLockedValue { $0[path] = token }
        return token
    }

    public func refreshLock(_ path: ItemPath, token: String, timeout: Int?) async throws {
        var request = try self.request("LOCK", path)
        request.headers.add(name: "If", value: "(<\(token)>)")
        request.headers.add(name: "Timeout", value: Self.timeoutValue(timeout))
        try await send(request, operation: .lock)
    }

    public func unlock(_ path: ItemPath, token: String) async throws {
        defer { heldLocks.withLockedValue { $0[path] = nil } }
        var request = try self.request("UNLOCK", path)
        request.headers.add(name: "Lock-Token", value: "<\(token)>")
        try await send(request, operation: .lock)
    }

    public func adoptLock(_ path: ItemPath, token: String) {
        heldLocks.withLockedValue { $0[path] = token }
    }

    static func timeoutValue(_ seconds: Int?) -> String {
        seconds.map { "Second-\($0)" } ?? "Infinite"
    }

    /// The If header for a write at `path` (RFC 4918 section 10.4): our
    /// upstream lock tokens at or below it, each tagged with its resource,
    /// and each list also true without the token, so that a token the
    /// upstream has forgotten (an expired lock) fails nothing:
    /// `<url> (<token> ["etag"]) (["etag"])`, or `(Not <DAV:no-lock>)` when
    /// the write is not conditional. nil when nothing needs saying.
    func ifHeader(for path: ItemPath, version: String?) throws -> String? {
        let held = heldLocks.withLockedValue { locks in locks.filter { $0.key.starts(with: path) } }
        let tag = version.map { "[\(Self.quotedTag($0))]" }
        guard !held.isEmpty else { return tag.map { "(\($0))" } }
        return try held.sorted { $0.key.lexicographicallyPrecedes($1.key) }.map { lockedPath, token in
            let condition = lockedPath == path ? tag : nil
            let without = condition ?? "Not <DAV:no-lock>"
            return "<\(try url(lockedPath))> (<\(token)>\(condition.map { " " + $0 } ?? "")) (\(without))"
        }.joined(separator: " ")
    }

    /// After a DELETE or MOVE the upstream forgot the locks at and below
    /// the old path.
    func forgetLocks(under path: ItemPath) {
        heldLocks.withLockedValue { locks in
            for key in locks.keys where key.starts(with: path) { locks[key] = nil }
        }
    }
}
