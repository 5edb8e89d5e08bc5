import DAVXML
import DavgateTestSupport
import Foundation
import NIOConcurrencyHelpers
import ProviderCore
import Testing
@testable import Upstreams

@Suite("WebDAVStore specifics")
struct WebDAVStoreTests {
    func apacheStore(_ server: ApacheServer, password: String = ApacheServer.password,
                     timeouts: (connect: Duration, read: Duration) = (.seconds(10), .seconds(60))) throws -> WebDAVStore {
        try WebDAVStore(baseURL: server.baseURL, credentials: (ApacheServer.user, password), extraTrustRoot: nil, timeouts: timeouts)
    }

    func temporaryFile(_ label: String) -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("\(label)-\(UUID().uuidString)")
    }

    @Test("a folder listing is one PROPFIND Depth 1 that names its properties, and no GET")
    func listingNamesProperties() async throws {
        let server = try await ApacheServer(dumpRequestBodies: true)
        defer { server.cleanUp() }
        let store = try apacheStore(server)
        let local = temporaryFile("small")
        try Data("x".utf8).write(to: local)
        defer { try? FileManager.default.removeItem(at: local) }
        _ = try await store.makeFolder(["many"])
        for i in 0..<50 { _ = try await store.upload(local, to: ["many", "file \(i).txt"]) }

        let before = server.accessLines.count
        let listing = try await store.list(["many"])
        let after = Array(server.accessLines.dropFirst(before))
        #expect(listing.count == 50)
        #expect(Set(listing.map(\.name)) == Set((0..<50).map { "file \($0).txt" }))
        // Apache logs a request after answering it: the last upload's own
        // lines may land after `before` was taken, so count by kind.
        let listings = after.filter { !$0.contains("depth=0") && !$0.hasPrefix("PUT ") }
        #expect(listings.count == 1, "one request for the whole folder: \(after)")
        #expect(listings.first?.hasPrefix("PROPFIND /dav/many/ 207 depth=1") == true, "\(after)")
        #expect(!server.accessLines.contains { $0.hasPrefix("GET") })
        // mod_dumpio wrote the request bodies into the error log.
        let bodies = try String(contentsOf: server.errorLog, encoding: .utf8)
        for property in ["resourcetype", "getcontentlength", "getlastmodified", "getetag"] {
            #expect(bodies.contains(property))
        }
        #expect(!bodies.contains("allprop"))
        #expect(!bodies.contains("propname"))
        try await store.shutdown()
    }

    @Test("a 64 MiB fetch streams into the file with progress in many steps, a reader's chunk at a time; uploads stream too, counting their bytes")
    func streamedFetch() async throws {
        let server = try await ApacheServer()
        defer { server.cleanUp() }
        let store = try apacheStore(server)
        let size = 64 << 20
        let local = temporaryFile("big")
        defer { try? FileManager.default.removeItem(at: local) }
        try writeRandomFile(at: local, size: size)

        // The upload counts its bytes as they go: watched from beside it,
        // the count is seen part way, and ends at the size.
        let progress = UploadProgress()
        let counts = NIOLockedValueBox<Set<Int64>>([])
        let watcher = Task.detached {
            while !Task.isCancelled {
                let sent = progress.bytesSent
                counts.withLockedValue { _ = $0.insert(sent) }
                try? await Task.sleep(for: .milliseconds(1))
            }
        }
        let uploaded = try await store.upload(local, to: ["big.bin"], expecting: .any, progress: progress)
        watcher.cancel()
        #expect(uploaded.size == Int64(size))
        #expect(progress.bytesSent == Int64(size))
        #expect(counts.withLockedValue { $0.contains { $0 > 0 && $0 < Int64(size) } }, "seen part way: \(counts.withLockedValue { $0.sorted() })")

        let destination = temporaryFile("fetched")
        defer { try? FileManager.default.removeItem(at: destination) }
        let reports = NIOLockedValueBox<[Int64]>([])
        let entry = try await store.fetch(["big.bin"], range: nil, into: destination) { count in
            reports.withLockedValue { $0.append(count) }
        }
        let seen = reports.withLockedValue { $0 }
        #expect(entry.size == Int64(size))
        #expect(entry.version == uploaded.version)
        #expect(seen.count >= 64, "progress after each chunk, not once at the end: \(seen.count) reports")
        // Written 256 KiB at a time (GatheredWrites), not per network chunk
        // of at most 64 KiB (1,030 reports here when it was): a batch held
        // 5 ms on a loaded machine is written short, so most steps, not
        // all, are that long.
        let steps = zip(seen.dropFirst(), seen).map { $0 - $1 }.sorted()
        #expect(seen.count <= size / (256 * 1024) * 3 / 2, "\(seen.count) reports")
        #expect((steps.isEmpty ? 0 : steps[steps.count / 2]) >= 256 * 1024, "median step of \(steps.count)")
        #expect(seen == seen.sorted())
        #expect((seen.first ?? .max) <= 1 << 20, "the first bytes are reported before the rest arrive")
        #expect(seen.last == Int64(size))
        #expect(try Data(contentsOf: destination) == Data(contentsOf: local))

        // A range in the middle: only those bytes, at their offsets.
        let sparse = temporaryFile("sparse")
        defer { try? FileManager.default.removeItem(at: sparse) }
        let range: ClosedRange<Int64> = Int64(30 << 20)...Int64((40 << 20) - 1)
        let rangeReports = NIOLockedValueBox<Int>(0)
        _ = try await store.fetch(["big.bin"], range: range, into: sparse) { _ in rangeReports.withLockedValue { $0 += 1 } }
        let bytes = try Data(contentsOf: sparse)
        let original = try Data(contentsOf: local)
        #expect(bytes.count == 40 << 20)
        #expect(bytes[range.lowerBound...] == original[range.lowerBound...range.upperBound])
        #expect(bytes[0..<4096].allSatisfy { $0 == 0 })
        #expect(rangeReports.withLockedValue { $0 } > 1)
        let ranges = server.accessLines.filter { $0.hasPrefix("GET /dav/big.bin 206") }
        #expect(ranges.count == 1)
        try await store.shutdown()
    }

    @Test("a server that ignores Range: bytes before and after the range are read past")
    func rangeIgnored() async throws {
        let server = try CannedHTTPServer { _ in
            CannedHTTPServer.answer("200 OK", headers: ["ETag": "\"v1\""], body: "0123456789abcdef")
        }
        defer { server.stop() }
        let store = try WebDAVStore(baseURL: server.baseURL, credentials: nil, extraTrustRoot: nil)
        let destination = temporaryFile("ignored-range")
        defer { try? FileManager.default.removeItem(at: destination) }
        let reported = NIOLockedValueBox<Int64>(0)
        let entry = try await store.fetch(["r"], range: 4...9, into: destination) { n in reported.withLockedValue { $0 = n } }
        #expect(entry.version == "\"v1\"")
        #expect(reported.withLockedValue { $0 } == 6)
        let bytes = try Data(contentsOf: destination)
        #expect(bytes.count == 10)
        #expect(String(decoding: bytes[4...9], as: UTF8.self) == "456789")
        #expect(server.requests.withLockedValue { $0 }.first?.contains("Range: bytes=4-9") == true)
        try await store.shutdown()
    }

    @Test("a 206 that starts after the first byte asked for is refused, nothing reported: the hole before it is no content")
    func partialStartingLate() async throws {
        let server = try CannedHTTPServer { _ in
            CannedHTTPServer.answer("206 Partial Content", headers: ["ETag": "\"v1\"", "Content-Range": "bytes 6-9/16"], body: "6789")
        }
        defer { server.stop() }
        let store = try WebDAVStore(baseURL: server.baseURL, credentials: nil, extraTrustRoot: nil)
        let destination = temporaryFile("late-range")
        defer { try? FileManager.default.removeItem(at: destination) }
        let reported = NIOLockedValueBox<Int64>(0)
        await #expect(throws: UpstreamError.self) {
            _ = try await store.fetch(["r"], range: 4...9, into: destination) { n in reported.withLockedValue { $0 = n } }
        }
        #expect(reported.withLockedValue { $0 } == 0)
        try await store.shutdown()
    }

    @Test("listing: hrefs decoded and NFC, the folder itself skipped with or without its slash, weak ETags settle")
    func listingParse() async throws {
        let multistatus = """
            <?xml version="1.0" encoding="utf-8"?>
            <D:multistatus xmlns:D="DAV:" xmlns:A="http://apache.org/dav/props/">
            <D:response><D:href>http://127.0.0.1/dav/d%20x</D:href>
             <D:propstat><D:prop><D:resourcetype><D:collection/></D:resourcetype><D:getetag>"dir"</D:getetag></D:prop>
             <D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response>
            <D:response><D:href>/dav/d%20x/a%20b%23c.txt</D:href>
             <D:propstat><D:prop><D:resourcetype/><D:getcontentlength>12</D:getcontentlength>
              <D:getlastmodified>Sun, 06 Nov 1994 08:49:37 GMT</D:getlastmodified><D:getetag>W/"12-abc"</D:getetag>
              <A:executable>T</A:executable></D:prop>
             <D:status>HTTP/1.1 200 OK</D:status></D:propstat>
             <D:propstat><D:prop><D:quota-used-bytes/></D:prop><D:status>HTTP/1.1 404 Not Found</D:status></D:propstat></D:response>
            <D:response><D:href>/dav/d%20x/u%CC%88ber</D:href>
             <D:propstat><D:prop><D:resourcetype/><D:getcontentlength>3</D:getcontentlength>
              <D:getlastmodified>Sun, 06 Nov 1994 08:49:37 GMT</D:getlastmodified></D:prop>
             <D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response>
            <D:response><D:href>/dav/d%20x/sub/</D:href>
             <D:propstat><D:prop><D:resourcetype><D:collection/></D:resourcetype></D:prop>
             <D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response>
            <D:response><D:href>/dav/d%20x/sub/deeper</D:href>
             <D:propstat><D:prop><D:resourcetype/></D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response>
            </D:multistatus>
            """
        let server = try CannedHTTPServer { head in
            head.hasPrefix("PROPFIND /dav/d%20x/ ")
                ? CannedHTTPServer.answer("207 Multi-Status", headers: ["Content-Type": "application/xml"], body: multistatus)
                : CannedHTTPServer.answer("404 Not Found")
        }
        defer { server.stop() }
        let store = try WebDAVStore(baseURL: server.baseURL, credentials: ("u", "p"), extraTrustRoot: nil)
        let entries = try await store.list(["d x"]).sorted { $0.name < $1.name }
        #expect(entries.map(\.name) == ["a b#c.txt", "sub", "\u{FC}ber"])
        let file = try #require(entries.first)
        #expect(file.size == 12 && !file.isFolder && file.executable)
        #expect(file.version == "\"12-abc\"", "W/ dropped: Apache's tag is weak only in the second after a change")
        #expect(file.modified == Date(timeIntervalSince1970: 784_111_777))
        #expect(entries[1].isFolder && entries[1].size == 0)
        #expect(entries[2].version == "3-784111777", "size and mtime when there is no ETag")
        let head = try #require(server.requests.withLockedValue { $0 }.first)
        #expect(head.contains("Depth: 1"))
        #expect(head.contains("Authorization: Basic dTpw"))
        try await store.shutdown()
    }

    @Test("the PROPFIND body names properties (RFC 4918 section 9.1), never allprop")
    func propfindBody() throws {
        let body = PropfindAnswer.requestBody(PropfindAnswer.entryProperties)
        let root = try XMLDocumentParser.parse(body)
        #expect(root.name == .dav("propfind"))
        let names = try #require(root.first(.dav("prop"))).elements.map(\.name)
        #expect(names == PropfindAnswer.entryProperties)
        #expect(root.first(.dav("allprop")) == nil)
    }

    @Test("refused credentials are .forbidden naming the vault, without the password")
    func wrongPassword() async throws {
        let server = try await ApacheServer()
        defer { server.cleanUp() }
        let store = try apacheStore(server, password: "not-the-password")
        do {
            _ = try await store.list([])
            Issue.record("a wrong password was accepted")
        } catch let UpstreamError.forbidden(message) {
            #expect(message.contains("vault"))
            #expect(!message.contains("not-the-password"))
        }
        for shown in ["\(store)", String(reflecting: store), store.displayName, { var s = ""; dump(store, to: &s); return s }()] {
            #expect(!shown.contains("not-the-password"))
            #expect(!shown.contains("bm90LXRoZS1wYXNzd29yZA"), "nor its base64")
        }
        try await store.shutdown()
    }

    @Test("a stopped server is .unreachable (nothing was sent), at once")
    func serverStopped() async throws {
        let server = try await ApacheServer()
        defer { server.cleanUp() }
        let store = try apacheStore(server)
        #expect(try await store.list([]).isEmpty)
        server.stop()
        let start = ContinuousClock.now
        await #expect {
            _ = try await store.list([])
        } throws: { error in
            if case UpstreamError.unreachable = error { return true }
            Issue.record("\(error)")
            return false
        }
        // Not waiting out the 60 s read timeout: an upper bound loose enough
        // for a CI machine running the whole suite on two busy cores.
        #expect(ContinuousClock.now - start < .seconds(45))
        try await store.shutdown()
    }

    @Test("a server that accepts and never answers is .timeout after the read timeout")
    func serverHangs() async throws {
        let silent = try LoopbackSocket(listen: true)
        let store = try WebDAVStore(baseURL: URL(string: "http://127.0.0.1:\(silent.port)/dav/")!, credentials: nil,
                                    extraTrustRoot: nil, timeouts: (.seconds(2), .milliseconds(500)))
        let start = ContinuousClock.now
        await #expect(throws: UpstreamError.timeout) { _ = try await store.list([]) }
        await #expect(throws: UpstreamError.timeout) {
            _ = try await store.fetch(["f"], into: temporaryFile("never"))
        }
        // Two 500 ms read timeouts, never the default 60 s; loose for a busy CI machine.
        #expect(ContinuousClock.now - start < .seconds(45))
        try await store.shutdown()
    }

    @Test("TLS: a self-signed upstream is refused unless its certificate is trusted")
    func tlsTrust() async throws {
        let server = try await DavgateProcess()
        defer { server.cleanUp() }
        let untrusting = try WebDAVStore(baseURL: server.filesURL, credentials: ("admin", server.adminPassword), extraTrustRoot: nil)
        do {
            _ = try await untrusting.list([])
            Issue.record("an untrusted certificate was accepted")
        } catch let UpstreamError.forbidden(message) {
            #expect(message.hasPrefix("TLS: "), "\(message)")
        }
        try await untrusting.shutdown()
        let trusting = try WebDAVStore(baseURL: server.filesURL, credentials: ("admin", server.adminPassword),
                                       extraTrustRoot: server.certificate)
        #expect(try await trusting.list([]).isEmpty)
        try await trusting.shutdown()
    }

    @Test("configuration: http(s) with a host, no credentials in the URL, a trailing slash added")
    func configuration() throws {
        let store = try WebDAVStore(baseURL: URL(string: "https://example.com:8443/remote.php/dav/files/a%20b")!,
                                    credentials: nil, extraTrustRoot: nil)
        #expect(store.baseURL.absoluteString == "https://example.com:8443/remote.php/dav/files/a%20b/")
        #expect(try store.url(["x y", "ü"]) == "https://example.com:8443/remote.php/dav/files/a%20b/x%20y/%C3%BC")
        #expect(throws: UpstreamError.self) { try store.url([".."]) }
        #expect(throws: WebDAVStoreConfigurationError.credentialsInURL) {
            try WebDAVStore(baseURL: URL(string: "https://u:p@example.com/")!, credentials: nil, extraTrustRoot: nil)
        }
        #expect(throws: WebDAVStoreConfigurationError.self) {
            try WebDAVStore(baseURL: URL(string: "ftp://example.com/")!, credentials: nil, extraTrustRoot: nil)
        }
        #expect(throws: WebDAVStoreConfigurationError.self) {
            try WebDAVStore(baseURL: URL(string: "https://example.com/")!, credentials: nil,
                            extraTrustRoot: URL(fileURLWithPath: "/nonexistent.pem"))
        }
    }

    @Test("statuses map to precise errors")
    func statusMapping() {
        #expect(WebDAVStore.error(status: 401, operation: .read, credentials: "the vault entry X")
                == .forbidden("HTTP 401 Unauthorized from the upstream: check the vault entry X"))
        #expect(WebDAVStore.error(status: 403, operation: .read)
                == .forbidden("HTTP 403 Forbidden from the upstream: the domain has no credentials; add a vault entry and name it in the domain's credentials"))
        #expect(WebDAVStore.error(status: 404, operation: .delete) == .notFound)
        #expect(WebDAVStore.error(status: 405, operation: .makeFolder) == .exists)
        #expect(WebDAVStore.error(status: 409, operation: .makeFolder) == .notFound)
        #expect(WebDAVStore.error(status: 409, operation: .upload) == .conflict)
        #expect(WebDAVStore.error(status: 412, operation: .upload) == .versionMismatch)
        #expect(WebDAVStore.error(status: 412, operation: .moveOrCopy) == .exists)
        #expect(WebDAVStore.error(status: 423, operation: .upload) == .locked)
        #expect(WebDAVStore.error(status: 507, operation: .upload) == .noSpace)
        #expect(WebDAVStore.error(status: 502, operation: .read) == .unavailable("HTTP 502 Bad Gateway"))
    }
}
