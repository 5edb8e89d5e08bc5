import DavgateTestSupport
import Foundation
import NIOConcurrencyHelpers
import ProviderCore
import Testing
import Upstreams

/// The behaviour every UpstreamStore must have, whatever is behind it. Each
/// store setup gets a fresh, empty root: a temporary folder, a fresh Apache
/// mod_dav, a fresh davgate (over TLS, trusting its own certificate).
enum StoreSetup: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case directory
    /// The WebDAV store against Apache httpd with mod_dav_fs, Basic auth.
    case apache
    /// The WebDAV store against another davgate over TLS.
    case davgate
    /// The keep-local wrapper (`._*`, `.DS_Store`) over a directory: for every
    /// other name it must be its store.
    case keepLocal
    /// The S3 store against moto's server, below a prefix, `name/` markers.
    case s3Moto
    /// The S3 store against `rclone serve s3`, which checks signatures and
    /// keeps objects as files: hidden folder markers.
    case s3Rclone

    var testDescription: String { rawValue }

    /// Whether the store behind this setup reports RFC 4331 quota: Apache's
    /// mod_dav_fs (2.4) has no quota properties and S3 has no quota, so
    /// their stores say nil.
    var reportsQuota: Bool { ![.apache, .s3Moto, .s3Rclone].contains(self) }

    /// Runs `body` with a store over a fresh, empty root, then tears it down.
    func withStore(_ body: (any UpstreamStore) async throws -> Void) async throws {
        let (store, cleanUp) = try await make()
        do {
            try await body(store)
        } catch {
            await cleanUp()
            throw error
        }
        await cleanUp()
    }

    func make() async throws -> (store: any UpstreamStore, cleanUp: @Sendable () async -> Void) {
        switch self {
        case .directory:
            let root = FileManager.default.temporaryDirectory.appendingPathComponent("store-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
            return (DirectoryStore(root: root), { try? FileManager.default.removeItem(at: root) })
        case .apache:
            let server = try await ApacheServer()
            let store = try WebDAVStore(baseURL: server.baseURL, credentials: (ApacheServer.user, ApacheServer.password),
                                        extraTrustRoot: nil)
            return (store, {
                try? await store.shutdown()
                server.cleanUp()
            })
        case .keepLocal:
            let root = FileManager.default.temporaryDirectory.appendingPathComponent("store-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: root.appendingPathComponent("upstream"), withIntermediateDirectories: true)
            let store = try KeepLocalStore(wrapping: DirectoryStore(root: root.appendingPathComponent("upstream")),
                                           folder: root.appendingPathComponent("local"), patterns: ["._*", ".DS_Store"])
            return (store, { try? FileManager.default.removeItem(at: root) })
        case .s3Moto, .s3Rclone:
            let server = try await (self == .s3Moto ? S3ServerKind.moto : .rclone).start()
            let store = try S3Store(endpoint: server.endpoint, bucket: server.bucket, prefix: self == .s3Moto ? "under/a prefix/" : "",
                                    region: server.region, pathStyle: true,
                                    credentials: S3Credentials(accessKeyID: server.accessKeyID, secretAccessKey: server.secretAccessKey),
                                    folderMarkers: self == .s3Moto ? .slash : .hidden)
            return (store, {
                try? await store.shutdown()
                server.cleanUp()
            })
        case .davgate:
            let server = try await DavgateProcess()
            let store = try WebDAVStore(baseURL: server.filesURL, credentials: ("admin", server.adminPassword),
                                        extraTrustRoot: server.certificate)
            return (store, {
                try? await store.shutdown()
                server.cleanUp()
            })
        }
    }
}

@Suite("UpstreamStore contract")
final class UpstreamStoreContractTests: Sendable {
    /// This test's upload sources (Swift Testing makes an instance per
    /// test), removed after it: an upload leaves its source where it was,
    /// and these files piled up in the temporary folder by the thousand.
    let sources = FileManager.default.temporaryDirectory.appendingPathComponent("contract-sources-\(UUID().uuidString)")

    deinit { try? FileManager.default.removeItem(at: sources) }

    func localFile(_ text: String) throws -> URL {
        try FileManager.default.createDirectory(at: sources, withIntermediateDirectories: true)
        let url = sources.appendingPathComponent("local-\(UUID().uuidString)")
        try text.write(to: url, atomically: true, encoding: .utf8)
        return url
    }

    func fetch(_ store: any UpstreamStore, _ path: ItemPath) async throws -> (UpstreamEntry, String) {
        let destination = FileManager.default.temporaryDirectory.appendingPathComponent("fetch-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: destination) }
        let entry = try await store.fetch(path, into: destination)
        return (entry, try String(contentsOf: destination, encoding: .utf8))
    }

    @Test("upload, list, stat and fetch agree on names, sizes and versions", arguments: StoreSetup.allCases)
    func uploadListFetch(setup: StoreSetup) async throws {
        try await setup.withStore { store in
            let source = try localFile("hello")
            defer { try? FileManager.default.removeItem(at: source) }
            let uploaded = try await store.upload(source, to: ["a.txt"])
            #expect(uploaded.name == "a.txt" && uploaded.size == 5 && !uploaded.isFolder)
            // The local file stays where it was.
            #expect(FileManager.default.fileExists(atPath: source.path))
            let listing = try await store.list([])
            #expect(listing.map(\.name) == ["a.txt"])
            #expect(listing.first?.version == uploaded.version)
            #expect(try await store.stat(["a.txt"])?.version == uploaded.version)
            #expect(try await store.stat(["missing"]) == nil)
            let (entry, text) = try await fetch(store, ["a.txt"])
            #expect(text == "hello")
            #expect(entry.version == uploaded.version)
        }
    }

    @Test("a replaced file gets a new version even with the same size", arguments: StoreSetup.allCases)
    func versionsChange(setup: StoreSetup) async throws {
        try await setup.withStore { store in
            let first = try await store.upload(try localFile("aaaa"), to: ["f"])
            let second = try await store.upload(try localFile("bbbb"), to: ["f"])
            #expect(first.version != second.version)
            #expect(try await fetch(store, ["f"]).1 == "bbbb")
        }
    }

    @Test("folders: make, list members, delete recursively", arguments: StoreSetup.allCases)
    func folders(setup: StoreSetup) async throws {
        try await setup.withStore { store in
            let folder = try await store.makeFolder(["d"])
            #expect(folder.isFolder)
            await #expect(throws: UpstreamError.exists) { _ = try await store.makeFolder(["d"]) }
            await #expect(throws: UpstreamError.notFound) { _ = try await store.makeFolder(["x", "y"]) }
            _ = try await store.upload(try localFile("1"), to: ["d", "one"])
            _ = try await store.makeFolder(["d", "sub"])
            #expect(Set(try await store.list(["d"]).map(\.name)) == ["one", "sub"])
            await #expect(throws: UpstreamError.self) { _ = try await store.upload(try localFile("x"), to: ["nope", "f"]) }
            try await store.delete(["d"])
            #expect(try await store.list([]).isEmpty)
            await #expect(throws: UpstreamError.notFound) { try await store.delete(["d"]) }
            await #expect(throws: UpstreamError.notFound) { _ = try await store.list(["d"]) }
        }
    }

    @Test("move and copy never overwrite implicitly", arguments: StoreSetup.allCases)
    func moveCopy(setup: StoreSetup) async throws {
        try await setup.withStore { store in
            _ = try await store.makeFolder(["d"])
            _ = try await store.upload(try localFile("content"), to: ["d", "f"])
            _ = try await store.upload(try localFile("other"), to: ["g"])
            await #expect(throws: UpstreamError.exists) { _ = try await store.move(["g"], to: ["d", "f"]) }
            await #expect(throws: UpstreamError.exists) { _ = try await store.copy(["g"], to: ["d", "f"], recursive: false) }
            let copy = try await store.copy(["d"], to: ["e"], recursive: true)
            #expect(copy.isFolder)
            #expect(try await fetch(store, ["e", "f"]).1 == "content")
            let shallow = try await store.copy(["d"], to: ["empty"], recursive: false)
            #expect(shallow.isFolder)
            #expect(try await store.list(["empty"]).isEmpty)
            _ = try await store.move(["d"], to: ["moved"])
            #expect(try await store.stat(["d"]) == nil)
            #expect(try await fetch(store, ["moved", "f"]).1 == "content")
        }
    }

    @Test("a range fetch writes only those bytes, at their offsets", arguments: StoreSetup.allCases)
    func rangeFetch(setup: StoreSetup) async throws {
        try await setup.withStore { store in
            let uploaded = try await store.upload(try localFile("0123456789abcdef"), to: ["r"])
            let destination = FileManager.default.temporaryDirectory.appendingPathComponent("range-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: destination) }
            let reported = NIOLockedValueBox<Int64>(0)
            let entry = try await store.fetch(["r"], range: 4...9, into: destination) { count in reported.withLockedValue { $0 = count } }
            #expect(entry.version == uploaded.version)
            #expect(reported.withLockedValue { $0 } == 6)
            let bytes = try Data(contentsOf: destination)
            #expect(bytes.count == 10)
            #expect(String(decoding: bytes[4...9], as: UTF8.self) == "456789")
            #expect(bytes[0..<4].allSatisfy { $0 == 0 }, "bytes before the range are not written")
        }
    }

    @Test("a fetch names its version before the first byte, and stops there when told to", arguments: StoreSetup.allCases)
    func fetchBegins(setup: StoreSetup) async throws {
        struct Refused: Error {}
        try await setup.withStore { store in
            let uploaded = try await store.upload(try localFile("0123456789abcdef"), to: ["v"])
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("begin-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: folder) }

            let announced = NIOLockedValueBox<(UpstreamEntry, Int64)?>(nil)
            let progress = NIOLockedValueBox<Int64>(0)
            let whole = folder.appendingPathComponent("whole")
            _ = try await store.fetch(["v"], range: nil, into: whole, observer: FetchObserver(
                began: { entry in announced.withLockedValue { $0 = (entry, progress.withLockedValue { $0 }) } },
                progressed: { count in progress.withLockedValue { $0 = count } }))
            let (entry, bytesBefore) = try #require(announced.withLockedValue { $0 })
            #expect(entry.version == uploaded.version && entry.size == 16)
            #expect(bytesBefore == 0, "announced before any byte was reported")

            // Refused at the start: a whole fetch leaves no file, a range fetch writes nothing.
            let refusedWhole = folder.appendingPathComponent("refused")
            await #expect(throws: Refused.self) {
                _ = try await store.fetch(["v"], range: nil, into: refusedWhole, observer: FetchObserver(began: { _ in throw Refused() }))
            }
            #expect(!FileManager.default.fileExists(atPath: refusedWhole.path))
            let sparse = folder.appendingPathComponent("sparse")
            try Data(count: 16).write(to: sparse)
            await #expect(throws: Refused.self) {
                _ = try await store.fetch(["v"], range: 2...5, into: sparse, observer: FetchObserver(began: { _ in throw Refused() }))
            }
            #expect(try Data(contentsOf: sparse) == Data(count: 16))
        }
    }

    @Test("conditional uploads refuse to overwrite someone else's change", arguments: StoreSetup.allCases)
    func conditionalUpload(setup: StoreSetup) async throws {
        try await setup.withStore { store in
            let first = try await store.upload(try localFile("one"), to: ["c"], expecting: .absent)
            await #expect(throws: UpstreamError.versionMismatch) {
                _ = try await store.upload(try localFile("two"), to: ["c"], expecting: .absent)
            }
            let second = try await store.upload(try localFile("two"), to: ["c"], expecting: .version(first.version))
            await #expect(throws: UpstreamError.versionMismatch) {
                _ = try await store.upload(try localFile("three"), to: ["c"], expecting: .version(first.version))
            }
            #expect(try await fetch(store, ["c"]).1 == "two")
            #expect(try await store.stat(["c"])?.version == second.version)
        }
    }

    @Test("quota reports space", arguments: StoreSetup.allCases)
    func quota(setup: StoreSetup) async throws {
        try await setup.withStore { store in
            let quota = try await store.quota()
            guard setup.reportsQuota else {
                #expect(quota == nil)
                return
            }
            let reported = try #require(quota)
            #expect(reported.available > 0)
            #expect(reported.used > 0)
        }
    }

    @Test("names with spaces, reserved characters and non-ASCII letters survive every operation", arguments: StoreSetup.allCases)
    func awkwardNames(setup: StoreSetup) async throws {
        try await setup.withStore { store in
            let folder = "dir with space & ü"
            let names = ["a b.txt", "100% #1?.txt", "naïve;x=1", "日本語", "+plus'quote\"", "é"]
            _ = try await store.makeFolder([folder])
            for name in names {
                let uploaded = try await store.upload(try localFile(name), to: [folder, name])
                #expect(uploaded.name == name)
            }
            #expect(Set(try await store.list([folder]).map(\.name)) == Set(names))
            #expect(try await store.list([]).map(\.name) == [folder])
            for name in names {
                #expect(try await fetch(store, [folder, name]).1 == name)
            }
            _ = try await store.move([folder, names[1]], to: [folder, "moved ✓"])
            #expect(try await fetch(store, [folder, "moved ✓"]).1 == names[1])
            try await store.delete([folder, names[0]])
            #expect(try await store.stat([folder, names[0]]) == nil)
        }
    }

    @Test("a listing of a file is a conflict; of nothing, not found", arguments: StoreSetup.allCases)
    func listingErrors(setup: StoreSetup) async throws {
        try await setup.withStore { store in
            _ = try await store.upload(try localFile("x"), to: ["file"])
            await #expect(throws: UpstreamError.conflict) { _ = try await store.list(["file"]) }
            await #expect(throws: UpstreamError.notFound) { _ = try await store.list(["nothing"]) }
            await #expect(throws: UpstreamError.notFound) { _ = try await store.fetch(["nothing"], into: FileManager.default.temporaryDirectory.appendingPathComponent("never-\(UUID().uuidString)")) }
        }
    }
}

@Suite("DirectoryStore specifics")
struct DirectoryStoreTests {
    @Test("listing hides in-progress files and names that are not NFC")
    func hiddenNames() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("dirstore-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: root) }
        _ = FileManager.default.createFile(atPath: root.appendingPathComponent(".davgate-tmp-123").path, contents: Data())
        _ = FileManager.default.createFile(atPath: root.appendingPathComponent("u\u{308}ber").path, contents: Data())
        _ = FileManager.default.createFile(atPath: root.appendingPathComponent("plain").path, contents: Data())
        #expect(try await DirectoryStore(root: root).list([]).map(\.name) == ["plain"])
    }

    @Test("names that could escape the root are refused")
    func escapingNames() async throws {
        let store = DirectoryStore(root: FileManager.default.temporaryDirectory)
        for bad in [[".."], ["a", "..", ".."], ["."], ["a/b"], [""]] {
            await #expect(throws: UpstreamError.self) { _ = try await store.stat(bad) }
        }
    }
}
