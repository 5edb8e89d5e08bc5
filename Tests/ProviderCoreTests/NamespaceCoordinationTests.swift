import Foundation
import NIOConcurrencyHelpers
@testable import ProviderCore
import Testing

/// DELETE, MOVE, COPY, MKCOL and PROPPATCH check the writer's locks where
/// they commit, under the coordination that grants a LOCK, as a PUT does:
/// a LOCK queued ahead of them wins even though the server's early look
/// found no lock. The order is forced with a write-through upload holding
/// the coordination: the LOCK waits first, the change second, and then the
/// upload is cancelled.
@Suite("namespace changes coordinated with LOCK")
struct NamespaceCoordinationTests {
    static let stranger = WriteConditions(principal: "bob")

    /// Runs `change` queued right behind a LOCK of `path` by alice, both
    /// waiting for a slow upload; returns the error the change threw.
    func behindLock(_ f: Fixture, on path: ItemPath, _ change: @escaping @Sendable () async throws -> Void) async throws -> (any Error)? {
        let provider = f.provider
        let target = try #require(try await provider.item(at: path))
        f.store.uploadsBegun.withLockedValue { $0 = [] }
        // Held until both wait, however slow the machine: then cancelled.
        f.store.uploadLinger.withLockedValue { $0 = .seconds(60) }
        let slow = Task { try await f.put("slow", at: ["slow-\(UUID().uuidString).txt"]) }
        #expect(await eventually { f.store.uploadsBegun.withLockedValue { $0.count } > 0 })
        let lock = Task {
            try await provider.createLock(on: target, depthInfinity: true, exclusive: true, ownerXML: nil, principal: "alice", timeout: 60)
        }
        #expect(await eventually { provider.mutations.waiting == 1 }, "the LOCK waits first")
        let outcome = Task { try await change() }
        #expect(await eventually { provider.mutations.waiting == 2 }, "the change waits behind it")
        f.store.uploadLinger.withLockedValue { $0 = .zero }
        slow.cancel()
        _ = try? await slow.value
        let granted = try await lock.value
        let refused: (any Error)?
        do {
            try await outcome.value
            refused = nil
        } catch {
            refused = error
        }
        try await provider.unlock(token: granted.token)
        return refused
    }

    @Test("a DELETE, MOVE, COPY over, MKCOL inside and PROPPATCH queued behind a LOCK are refused with the lock's root; nothing changes")
    func changesBehindLock() async throws {
        let f = try await Fixture()
        defer { f.cleanUp() }
        let provider = f.provider
        _ = try await f.put("keep", at: ["a.txt"])
        _ = try await f.put("other", at: ["b.txt"])
        let locked = ProviderError.locked(domain: "files", root: ["a.txt"], isFolder: false)

        #expect(try await behindLock(f, on: ["a.txt"]) { try await provider.delete(at: ["a.txt"], conditions: Self.stranger) } as? ProviderError == locked)
        #expect(try await behindLock(f, on: ["a.txt"]) {
            _ = try await provider.move(from: ["a.txt"], to: ["moved.txt"], overwrite: false, conditions: Self.stranger)
        } as? ProviderError == locked)
        #expect(try await behindLock(f, on: ["a.txt"]) {
            _ = try await provider.copy(from: ["b.txt"], to: ["a.txt"], recursive: false, overwrite: true, conditions: Self.stranger)
        } as? ProviderError == locked)
        #expect(try await behindLock(f, on: ["a.txt"]) {
            let item = try #require(try await provider.item(at: ["a.txt"]))
            try await provider.changeProperties(of: item, [.set(DeadProperty(namespace: "urn:x", name: "p", xml: "<p xmlns=\"urn:x\"/>"))],
                                                conditions: Self.stranger)
        } as? ProviderError == locked)
        let a = try #require(try await provider.item(at: ["a.txt"]))
        #expect(try await provider.deadProperties(of: a).isEmpty)
        #expect(try await provider.item(at: ["moved.txt"]) == nil)
        #expect(try String(contentsOf: f.upstream.appendingPathComponent("a.txt"), encoding: .utf8) == "keep")

        _ = try await provider.makeFolder(at: ["dir"])
        #expect(try await behindLock(f, on: ["dir"]) {
            _ = try await provider.makeFolder(at: ["dir", "sub"], conditions: Self.stranger)
        } as? ProviderError == ProviderError.locked(domain: "files", root: ["dir"], isFolder: true))
        #expect(try await provider.item(at: ["dir", "sub"]) == nil)
    }

    @Test("the lock's holder goes through: its token, under the same order")
    func holderGoesThrough() async throws {
        let f = try await Fixture()
        defer { f.cleanUp() }
        let provider = f.provider
        _ = try await f.put("keep", at: ["a.txt"])
        // The token is known once the LOCK is granted; the holder's DELETE then races a refresh of it.
        let item = try #require(try await provider.item(at: ["a.txt"]))
        let lock = try await provider.createLock(on: item, depthInfinity: false, exclusive: true, ownerXML: nil, principal: "alice", timeout: 60)
        let withToken = WriteConditions(principal: "alice", tokens: [lock.token])
        async let refreshed = provider.refreshLock(token: lock.token, timeout: 600)
        try await provider.delete(at: ["a.txt"], conditions: withToken)
        _ = try await refreshed
        #expect(try await provider.item(at: ["a.txt"]) == nil)
        #expect(!FileManager.default.fileExists(atPath: f.upstream.appendingPathComponent("a.txt").path))
    }
}
