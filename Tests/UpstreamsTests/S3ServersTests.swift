import DavgateTestSupport
import Foundation
import Testing

/// The S3 test servers, s3tool.py and the fault proxy work before any store
/// relies on them: both servers start with an empty bucket, what s3tool
/// puts it lists, and the proxy forwards signed requests (rclone checks
/// them) and injects what it is told.
@Suite("S3 test servers")
struct S3ServersTests {
    @Test("starts with an empty bucket; an object put through s3tool is listed, read back and deleted", arguments: S3ServerKind.allCases)
    func startsEmpty(kind: S3ServerKind) async throws {
        let server = try await kind.start()
        defer { server.cleanUp() }
        #expect(try await server.keys().isEmpty)
        let key = "dir with space/naïve ü 日本.txt"
        let data = Data("hello, bucket\n".utf8)
        let etag = try await server.put(key, data)
        #expect(etag == "292d928e30de928345ffd5eaec10f8c9")
        #expect(try await server.keys() == [key: S3ListedObject(size: data.count, etag: etag)])
        #expect(try await server.object(key) == data)
        #expect(try await server.multipartUploads().isEmpty)
        try await server.delete(key)
        #expect(try await server.keys().isEmpty)
        try await server.makeBucket("second-bucket")
        #expect(try await server.s3tool(["--bucket", "second-bucket", "list"]).text.isEmpty)
    }

    /// A request signed with S3Signer for `proxy`'s address, sent there.
    static func send(_ method: String, key: String?, query: [(name: String, value: String?)] = [], body: Data = Data(),
                     to proxy: S3FaultProxy, secret: String? = nil) async throws -> LoopbackHTTP.Response {
        try await SignedS3Request.send(method, key: key, query: query, body: body, server: proxy.backend, port: proxy.port, secret: secret)
    }

    @Test("the fault proxy forwards signed requests as they are and injects SlowDown, a cut body and a failed part",
          arguments: S3ServerKind.allCases)
    func faultProxy(kind: S3ServerKind) async throws {
        let server = try await kind.start()
        defer { server.cleanUp() }
        let proxy = try await S3FaultProxy(in: server)
        defer { proxy.cleanUp() }
        let body = Data("through the proxy".utf8)

        let put = try await Self.send("PUT", key: "via proxy/file.txt", body: body, to: proxy)
        #expect(put.status == 200, "\(put.text)")
        #expect(try await server.keys()["via proxy/file.txt"]?.size == body.count)
        if kind.verifiesSignatures {
            let forged = try await Self.send("PUT", key: "forged.txt", body: body, to: proxy, secret: "not/the+secret")
            #expect(forged.status == 403, "\(forged.text)")
        }

        try await proxy.slowDown(next: 1)
        let slowed = try await Self.send("GET", key: "via proxy/file.txt", to: proxy)
        #expect(slowed.status == 503)
        #expect(slowed.text.contains("<Code>SlowDown</Code>"))
        let again = try await Self.send("GET", key: "via proxy/file.txt", to: proxy)
        #expect(again.status == 200)
        #expect(again.body == body)

        try await proxy.cutGetBodies(after: 5)
        let cut = try await Self.send("GET", key: "via proxy/file.txt", to: proxy)
        #expect(cut.status == 200)
        #expect(cut.header("content-length") == "\(body.count)")
        #expect(cut.body == body.prefix(5), "the connection closed after 5 body bytes")

        let created = try await Self.send("POST", key: "big.bin", query: [("uploads", nil)], to: proxy)
        let uploadID = try #require(created.text.firstMatch(of: /<UploadId>([^<]+)<\/UploadId>/)?.1).description
        try await proxy.failUploadPart(1)
        let part = Data(repeating: 7, count: 1000)
        let failed = try await Self.send("PUT", key: "big.bin", query: [("partNumber", "1"), ("uploadId", uploadID)], body: part, to: proxy)
        #expect(failed.status == 500)
        #expect(failed.text.contains("<Code>InternalError</Code>"))
        let retried = try await Self.send("PUT", key: "big.bin", query: [("partNumber", "1"), ("uploadId", uploadID)], body: part, to: proxy)
        #expect(retried.status == 200, "\(retried.text)")
        #expect(try await server.multipartUploads().map(\.uploadId) == [uploadID])

        let requests = try await proxy.requests()
        let received = try await proxy.received()
        #expect(received[.getObject] == 3)
        #expect(received[.uploadPart] == 2)
        #expect(received[.putObject] == (kind.verifiesSignatures ? 2 : 1))
        #expect(requests.filter { $0.fault != nil }.map(\.status) == [503, 200, 500], "\(requests)")
        try await proxy.reset()
        #expect(try await proxy.requests().isEmpty)
    }
}
