import Foundation
import NIOConcurrencyHelpers
import ProviderCore
import Testing

/// Every state driven for real through the provider (a directory upstream
/// wrapped to slow a fetch and an upload down and to refuse uploads), then
/// the per-item answer (`states(of:)`, which `g:state` and the browser
/// listing render) and the status page's counts (`status().items`) must
/// agree item for item, the files counted local included.
@Suite("item states: g:state and the status page agree", .serialized)
struct ItemStateAgreementTests {
    @Test("each of the nine states, and the status counts match the per-item states")
    func everyStateAgrees() async throws {
        let f = try await Fixture(ttl: 600, writeMode: .back, uploads: UploadPolicy(quietDelay: 0, maxAge: 0, parallelism: 1))
        defer { f.cleanUp() }
        let provider = f.provider
        @Sendable func state(_ name: String) async throws -> ItemState.Name? {
            try await provider.item(at: [name]).map { provider.state(of: $0).name }
        }
        func upload(until done: @escaping @Sendable () async throws -> Bool) async throws {
            let uploader = Task { await provider.runUploads() }
            defer { uploader.cancel() }
            #expect(try await eventually { try await done() })
        }

        // Upstream files, listed as placeholders.
        try f.write("upstream", "placeholder.txt")
        try f.write("upstream", "materialized.txt")
        try f.write(String(repeating: "r", count: 100_000), "partial.bin")
        try f.write(String(repeating: "s", count: 100_000), "fetching.bin")
        _ = try await provider.makeFolder(at: ["folder"])
        #expect(try await state("placeholder.txt") == .placeholder)

        // Whole and ranged reads.
        let materialized = try #require(try await provider.item(at: ["materialized.txt"]))
        _ = try await provider.contents(of: materialized, at: ["materialized.txt"])
        let partial = try #require(try await provider.item(at: ["partial.bin"]))
        _ = try await provider.openContents(of: partial, at: ["partial.bin"], range: 0...999)
        #expect(try await eventually { try await state("partial.bin") == .partial })

        // A conflict: our new file meets one created upstream meanwhile.
        _ = try await f.put("ours", at: ["c.txt"])
        try f.write("theirs", "c.txt")
        // Done once the copy is there and the upload's journal entry is
        // settled too: the copy is recorded first, and an uploader cancelled
        // in between leaves c.txt's entry to the failure injected next.
        try await upload {
            let status = try await provider.status()
            return status.conflicts.count == 1 && status.uploads.pending == 0
        }

        // A failure given up at once (upload_max_age 0).
        _ = try await f.put("refused", at: ["failed.txt"])
        f.store.failing.withLockedValue { $0["upload"] = .io("injected") }
        try await upload { try await state("failed.txt") == .failed }
        f.store.failing.withLockedValue { $0 = [:] }

        // One upload held in flight; the write after it waits (one at a time).
        _ = try await f.put("uploading", at: ["uploading.txt"])
        _ = try await f.put("modified", at: ["modified.txt"])
        f.store.uploadLinger.withLockedValue { $0 = .seconds(60) }
        let uploader = Task { await provider.runUploads() }
        defer { uploader.cancel() }
        #expect(try await eventually { try await state("uploading.txt") == .uploading })

        // One whole fetch held in flight.
        f.store.fetchDelay.withLockedValue { $0 = .seconds(60) }
        let fetching = try #require(try await provider.item(at: ["fetching.bin"]))
        _ = try await provider.openContents(of: fetching, at: ["fetching.bin"])
        #expect(try await eventually { try await state("fetching.bin") == .fetching })

        let root = try await provider.root()
        let items = try await provider.children(of: root)
        let perItem = provider.states(of: items).values.map(\.name)
        let named = Dictionary(grouping: perItem, by: { $0 }).mapValues(\.count)
        #expect(Set(named.keys) == Set(ItemState.Name.allCases), "every state driven: \(named)")
        let status = try await provider.status()
        #expect(status.items.states == named, "status \(status.items.states) vs per item \(named)")
        #expect(status.items.local == perItem.filter(\.isLocal).count)
        #expect(status.items.local == 5, "materialized, modified, uploading, failed and the conflict copy: \(items.map { "\($0.name): \(provider.state(of: $0).name)" })")
        #expect(status.items.files == items.filter { !$0.isFolder }.count)
        uploader.cancel()
    }
}
