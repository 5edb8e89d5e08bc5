import DavgateTestSupport
import Foundation
import Testing

/// What S3ServerKind says about each server is what the server does: the
/// store's tests branch on these properties, so a new moto or rclone that
/// changes an answer must fail here, by name, and not somewhere deep in a
/// contract test.
@Suite("S3 test servers' quirks")
struct S3ServerQuirksTests {
    @Test("each kind's quirk properties match the server's answers", arguments: S3ServerKind.allCases)
    func quirks(kind: S3ServerKind) async throws {
        let server = try await kind.start()
        defer { server.cleanUp() }
        func send(_ method: String, _ key: String?, query: [(name: String, value: String?)] = [],
                  headers: [(name: String, value: String)] = [], body: Data = Data(), secret: String? = nil) async throws -> LoopbackHTTP.Response {
            try await SignedS3Request.send(method, key: key, query: query, headers: headers, body: body, server: server, secret: secret)
        }
        let one = Data("1".utf8)

        let forged = try await send("PUT", "forged", body: one, secret: "not/the+secret")
        #expect((forged.status == 403) == kind.verifiesSignatures, "\(forged.status) \(forged.text)")

        #expect(try await send("PUT", "kept", body: one).status == 200)
        let overwrite = try await send("PUT", "kept", headers: [("If-None-Match", "*")], body: one)
        #expect((overwrite.status == 412) == kind.honoursConditions, "PUT If-None-Match: * on a key that exists: \(overwrite.status)")
        let wrongETag = try await send("GET", "kept", headers: [("If-Match", "\"0123456789abcdef0123456789abcdef\"")])
        #expect((wrongETag.status == 412) == kind.honoursConditions, "GET If-Match with another ETag: \(wrongETag.status)")

        #expect(try await send("PUT", "marker/", body: Data()).status == 200)
        let markerShown = try await server.keys()["marker/"] != nil
        #expect(markerShown == kind.keepsFolderMarkers)

        let listed = try await server.s3tool(["list", "--prefix", "kept"]).text
        #expect(listed.contains("\t\"") == kind.quotesListedETags, "\(listed)")

        #expect(try await send("PUT", "name", body: one).status == 200)
        let beneath = try await send("PUT", "name/inside", body: one)
        #expect((beneath.status == 200) == kind.allowsKeyAndPrefixOfOneName, "\(beneath.status)")

        let doubled = try await send("PUT", "a//b", body: one)
        #expect((doubled.status == 200) == kind.takesAnyKey, "\(doubled.status) \(doubled.text)")

        let uploads = try await send("GET", nil, query: [("uploads", nil)])
        #expect((uploads.status == 200) == kind.listsNoUploadsAsEmpty, "\(uploads.status) \(uploads.text)")

        // Parts 1 and 3: the first at S3's 5 MiB minimum for all but the last.
        let created = try await send("POST", "gaps", query: [("uploads", nil)])
        let uploadID = try #require(created.text.firstMatch(of: /<UploadId>([^<]+)<\/UploadId>/)?.1).description
        var parts = ""
        for (number, size) in [(1, 5 << 20), (3, 10)] {
            let part = try await send("PUT", "gaps", query: [("partNumber", "\(number)"), ("uploadId", uploadID)],
                                body: Data(repeating: UInt8(number), count: size))
            let etag = try #require(part.header("etag"), "part \(number): \(part.status) \(part.text)")
            parts += "<Part><PartNumber>\(number)</PartNumber><ETag>\(etag)</ETag></Part>"
        }
        let completed = try await send("POST", "gaps", query: [("uploadId", uploadID)],
                                 body: Data("<CompleteMultipartUpload>\(parts)</CompleteMultipartUpload>".utf8))
        let gapsTaken = completed.status == 200 && !completed.text.contains("<Error>")
        #expect(gapsTaken == kind.allowsPartNumberGaps, "\(completed.status) \(completed.text)")
    }
}
