import Foundation
import NIOConcurrencyHelpers
import ProviderCore
import Upstreams

/// A wrapper around the real directory store that counts calls, can slow
/// fetches, listings and uploads down and can make chosen operations fail:
/// the only place in the tests where a failure is injected.
final class FaultyStore: UpstreamStore {
    let base: DirectoryStore
    let fetchCount = NIOLockedValueBox(0)
    /// The range of every fetch, nil for whole ones, in order.
    let fetchedRanges = NIOLockedValueBox<[ClosedRange<Int64>?]>([])
    let fetchDelay = NIOLockedValueBox<Duration>(.zero)
    let failing = NIOLockedValueBox<[String: UpstreamError]>([:])

    init(root: URL) { base = DirectoryStore(root: root) }

    var displayName: String { "faulty(\(base.displayName))" }

    private func check(_ operation: String) throws {
        if let error = failing.withLockedValue({ $0[operation] }) { throw error }
    }

    /// How long a listing waits after reading the folder before it answers:
    /// a listing read before some change and delivered after it.
    let listLinger = NIOLockedValueBox<Duration>(.zero)

    /// The folders listed, in order.
    let listed = NIOLockedValueBox<[ItemPath]>([])

    /// Runs after a listing read the folder and before it answers: what
    /// happens while the listing is on its way.
    let afterList = NIOLockedValueBox<(@Sendable (ItemPath) async throws -> Void)?>(nil)

    func list(_ folder: ItemPath) async throws -> [UpstreamEntry] {
        listed.withLockedValue { $0.append(folder) }
        try check("list")
        let entries = try await base.list(folder)
        try await Task.sleep(for: listLinger.withLockedValue { $0 })
        try await afterList.withLockedValue { $0 }?(folder)
        return entries
    }
    /// Set: listings arrive in pages of this many entries, in name order,
    /// as S3's do; `betweenPages` runs after each page but the last.
    let listPageSize = NIOLockedValueBox<Int?>(nil)
    let betweenPages = NIOLockedValueBox<(@Sendable () async throws -> Void)?>(nil)
    /// The count of entries in each page delivered, in order.
    let pagesDelivered = NIOLockedValueBox<[Int]>([])

    func listPages(_ folder: ItemPath, _ page: ([UpstreamEntry]) async throws -> Void) async throws -> String? {
        guard let size = listPageSize.withLockedValue({ $0 }) else {
            try await page(try await list(folder))
            return nil
        }
        let entries = try await list(folder).sorted { $0.name < $1.name }
        var start = 0
        repeat {
            let slice = Array(entries[start..<min(start + size, entries.count)])
            pagesDelivered.withLockedValue { $0.append(slice.count) }
            try await page(slice)
            start += size
            if start < entries.count, let hook = betweenPages.withLockedValue({ $0 }) { try await hook() }
        } while start < entries.count
        return nil
    }

    /// The paths stat'ed, in order.
    let statted = NIOLockedValueBox<[ItemPath]>([])

    /// Runs after a stat read the upstream and before it answers: a change
    /// landing while the answer is on its way.
    let afterStat = NIOLockedValueBox<(@Sendable (ItemPath) async throws -> Void)?>(nil)

    func stat(_ path: ItemPath) async throws -> UpstreamEntry? {
        statted.withLockedValue { $0.append(path) }
        try check("stat")
        let entry = try await base.stat(path)
        if let hook = afterStat.withLockedValue({ $0 }) { try await hook(path) }
        return entry
    }
    func fetch(_ path: ItemPath, range: ClosedRange<Int64>?, into destination: URL,
               observer: FetchObserver) async throws -> UpstreamEntry {
        fetchCount.withLockedValue { $0 += 1 }
        fetchedRanges.withLockedValue { $0.append(range) }
        try await Task.sleep(for: fetchDelay.withLockedValue { $0 })
        try check("fetch")
        return try await base.fetch(path, range: range, into: destination, observer: observer)
    }
    /// How long an upload waits before it delivers: an upload in flight
    /// while the uploader stops. A cancellation cuts it short.
    let uploadLinger = NIOLockedValueBox<Duration>(.zero)
    /// The path of every upload begun, in order.
    let uploadsBegun = NIOLockedValueBox<[ItemPath]>([])

    /// Runs once the upstream holds an upload, before davgate hears back.
    let afterUpload = NIOLockedValueBox<(@Sendable (ItemPath) async throws -> Void)?>(nil)

    /// Uploads running now, and the most that ran at once (reset it to
    /// watch a stretch of time).
    let uploadsInFlight = NIOLockedValueBox(0)
    let mostUploadsInFlight = NIOLockedValueBox(0)
    /// While true, uploads begun wait (counted in flight) until it is false.
    let uploadsHeld = NIOLockedValueBox(false)

    func upload(_ file: URL, to path: ItemPath, expecting: UpstreamExpectation, progress: UploadProgress?) async throws -> UpstreamEntry {
        uploadsBegun.withLockedValue { $0.append(path) }
        try check("upload")
        let running = uploadsInFlight.withLockedValue { $0 += 1; return $0 }
        mostUploadsInFlight.withLockedValue { $0 = max($0, running) }
        defer { uploadsInFlight.withLockedValue { $0 -= 1 } }
        while uploadsHeld.withLockedValue({ $0 }) { try await Task.sleep(for: .milliseconds(5)) }
        try await Task.sleep(for: uploadLinger.withLockedValue { $0 })
        let entry = try await base.upload(file, to: path, expecting: expecting, progress: progress)
        try await afterUpload.withLockedValue { $0 }?(path)
        return entry
    }
    func makeFolder(_ path: ItemPath) async throws -> UpstreamEntry {
        try check("makeFolder")
        return try await base.makeFolder(path)
    }
    func delete(_ path: ItemPath) async throws {
        try check("delete")
        try await base.delete(path)
    }
    func move(_ source: ItemPath, to destination: ItemPath) async throws -> UpstreamEntry {
        try check("move")
        return try await base.move(source, to: destination)
    }
    func copy(_ source: ItemPath, to destination: ItemPath, recursive: Bool) async throws -> UpstreamEntry {
        try check("copy")
        return try await base.copy(source, to: destination, recursive: recursive)
    }
    func quota() async throws -> UpstreamQuota? { try await base.quota() }
    /// Answers as another davgate's domain would.
    let davgate = NIOLockedValueBox(false)
    func isDavgate() async throws -> Bool { davgate.withLockedValue { $0 } }
}
