import DavgateTestSupport
import Foundation
import Testing
@testable import Upstreams

/// S3Signer against botocore's own S3 signer (botocore.auth.S3SigV4Auth),
/// request for request: the same URL, headers, body and moment must give
/// the same Authorization header, character for character. botocore is the
/// reference because it is what S3's own tools sign with; a server that
/// accepts boto3 accepts these.
@Suite("S3Signer against botocore")
struct S3SignerTests {
    static let host = "127.0.0.1:9000"
    static let bucket = "davgate-bucket"
    /// 2026-11-25 14:15:00 UTC.
    static let moment = Date(timeIntervalSince1970: 1_795_616_100)
    static let credentials = S3Credentials(accessKeyID: S3TestAccount.accessKeyID, secretAccessKey: S3TestAccount.secretAccessKey)

    /// One request to sign both ways.
    struct Case: Sendable {
        let name: String
        let request: S3Signer.Request
        let body: Data
        var unsigned: Bool { request.payloadHash == S3Signer.unsignedPayload }
    }

    /// The path as sent for a key: each segment encoded, `/` kept.
    static func path(_ key: String) -> String {
        "/\(bucket)/" + key.split(separator: "/", omittingEmptySubsequences: false).map { S3Signer.encode(String($0)) }.joined(separator: "/")
    }

    static func request(_ method: String, key: String?, query: [(name: String, value: String?)] = [],
                        headers: [(name: String, value: String)] = [], body: Data = Data(), unsigned: Bool = false,
                        host: String) -> S3Signer.Request {
        S3Signer.Request(method: method, path: key.map(path) ?? "/\(bucket)", query: query,
                         headers: [("host", host)] + headers,
                         payloadHash: unsigned ? S3Signer.unsignedPayload : S3Signer.payloadHash(body))
    }

    static let deleteBody = Data("""
        <?xml version="1.0" encoding="UTF-8"?>
        <Delete><Quiet>true</Quiet><Object><Key>a b/ü.txt</Key></Object><Object><Key>x&amp;y</Key></Object></Delete>
        """.utf8)

    static let part = Data(repeating: 0x61, count: 1000)
    static let report = Data("%PDF-1.4\n%%EOF\n".utf8)

    /// The requests, for a server at `host`. Each is complete as it
    /// stands (its Content-Length and Content-MD5 are its body's), so a
    /// server that verifies signatures can be sent it too.
    static func cases(host: String = host) -> [Case] {
        func request(_ method: String, key: String?, query: [(name: String, value: String?)] = [],
                     headers: [(name: String, value: String)] = [], body: Data = Data(), unsigned: Bool = false) -> S3Signer.Request {
            Self.request(method, key: key, query: query, headers: headers, body: body, unsigned: unsigned, host: host)
        }
        return [
            Case(name: "GET of a key with spaces and unicode",
                 request: request("GET", key: "dir with space/naïve ü 日本.txt"), body: Data()),
            Case(name: "GET of a key with reserved characters",
                 request: request("GET", key: "a+b=c&d;e,f'g(h)"), body: Data()),
            Case(name: "HEAD of a key with %, ~, *, ! and @",
                 request: request("HEAD", key: "100% ~tilde*star!@home"), body: Data()),
            Case(name: "GET of a key with // and .. kept as they are (S3 signs the path unnormalised)",
                 request: request("GET", key: "a//b/../c/./d"), body: Data()),
            Case(name: "ListObjectsV2 with several parameters",
                 request: request("GET", key: nil, query: [
                     ("list-type", "2"), ("prefix", "dir with space/sub dir/"), ("delimiter", "/"),
                     ("continuation-token", "1a+b/c==x"), ("max-keys", "1000"), ("encoding-type", "url"),
                 ]), body: Data()),
            Case(name: "ListObjectsV2 whose prefix holds unicode, ~ and *",
                 request: request("GET", key: nil, query: [("prefix", "日本~*'()"), ("list-type", "2")]), body: Data()),
            Case(name: "CreateMultipartUpload, a bare flag",
                 request: request("POST", key: "big/file one.bin", query: [("uploads", nil)],
                                  headers: [("content-type", "application/octet-stream")]), body: Data()),
            Case(name: "UploadPart with partNumber and an uploadId holding + / = ~",
                 request: request("PUT", key: "big/file one.bin", query: [("uploadId", "2~Abc.DEF_ghi-+/=="), ("partNumber", "7")],
                                  headers: [("content-length", "\(part.count)")], unsigned: true), body: part),
            Case(name: "PutObject with an unsigned payload",
                 request: request("PUT", key: "docs/report 2026.pdf",
                                  headers: [("Content-Type", "application/pdf"), ("Content-Length", "\(report.count)")], unsigned: true),
                 body: report),
            Case(name: "DeleteObjects with its body's real SHA-256",
                 request: request("POST", key: nil, query: [("delete", nil)],
                                  headers: [("Content-Type", "application/xml"), ("Content-MD5", "wYI1QCCPrB6aazCJZqPuNw==")],
                                  body: deleteBody),
                 body: deleteBody),
            Case(name: "headers in mixed case with runs of spaces, a repeated header",
                 request: request("PUT", key: "notes/today.txt",
                                  headers: [("X-Amz-Meta-Note", "  two  spaces   and more   "), ("Content-Type", "text/plain;   charset=utf-8"),
                                            ("x-amz-meta-dup", "first"), ("X-AMZ-META-DUP", "second  value"),
                                            ("If-None-Match", "*")],
                                  body: Data("hello\n".utf8)),
                 body: Data("hello\n".utf8)),
            Case(name: "CompleteMultipartUpload with a conditional header",
                 request: request("POST", key: "big/file one.bin", query: [("uploadId", "2~Abc.DEF_ghi-+/==")],
                                  headers: [("If-Match", "\"0123456789abcdef\""), ("content-type", "application/xml")],
                                  body: Data("<CompleteMultipartUpload/>".utf8)),
                 body: Data("<CompleteMultipartUpload/>".utf8)),
            Case(name: "a header value holding tabs and a no-break space, whitespace to botocore and to Go's strings.Fields",
                 request: request("PUT", key: "notes/tabs.txt",
                                  headers: [("x-amz-meta-tabs", "a\tb \t\tc\u{A0}\u{A0}d\t"), ("content-length", "0")]),
                 body: Data()),
        ]
    }

    /// botocore's answers for `cases`, signed with `secret`.
    static func botocore(_ cases: [Case], secret: String, amzDate: String) async throws -> [BotocoreAnswer] {
        let requests: [[String: Any]] = cases.map { item in
            let query = item.request.query.isEmpty ? "" : "?" + item.request.queryString
            var spec: [String: Any] = [
                "method": item.request.method,
                "url": "http://\(host)\(item.request.path)\(query)",
                "query": item.request.query.map { [$0.name, $0.value.map { $0 as Any } ?? NSNull()] as [Any] },
                "headers": item.request.headers.map { [$0.name, $0.value] },
                "unsignedPayload": item.unsigned,
            ]
            if !item.body.isEmpty { spec["body"] = item.body.base64EncodedString() }
            return spec
        }
        let input = try JSONSerialization.data(withJSONObject: [
            "accessKeyID": credentials.accessKeyID, "secret": secret, "region": "us-east-1", "date": amzDate, "requests": requests,
        ])
        let output = try await Python.run("botocore_sign.py", [], input: input)
        return try JSONDecoder().decode([BotocoreAnswer].self, from: output.stdout)
    }

    struct BotocoreAnswer: Decodable {
        let fromQuery: String
        let fromURL: String
        let payloadHash: String
        let canonicalRequest: String
    }

    static func authorization(_ signer: S3Signer, _ request: S3Signer.Request) -> (authorization: String, amzDate: String) {
        let headers = signer.sign(request, at: moment)
        return (headers.first { $0.name == "authorization" }!.value, headers.first { $0.name == "x-amz-date" }!.value)
    }

    @Test("every request is signed as botocore signs it, with the query as given and as sent")
    func sameAsBotocore() async throws {
        let signer = S3Signer(credentials: Self.credentials, region: "us-east-1")
        let cases = Self.cases()
        let amzDate = Self.authorization(signer, cases[0].request).amzDate
        #expect(amzDate == "20261125T141500Z")
        let answers = try await Self.botocore(cases, secret: S3TestAccount.secretAccessKey, amzDate: amzDate)
        try #require(answers.count == cases.count)
        for (item, answer) in zip(cases, answers) {
            let ours = Self.authorization(signer, item.request).authorization
            var withDate = item.request
            withDate.headers += [("x-amz-date", amzDate), ("x-amz-content-sha256", item.request.payloadHash)]
            let canonical = S3Signer.canonicalRequest(withDate).text
            #expect(ours == answer.fromQuery, "\(item.name)\nours:\n\(canonical)\nbotocore:\n\(answer.canonicalRequest)")
            // A server rebuilds the canonical query from the query string it
            // receives; botocore doing the same must agree.
            #expect(ours == answer.fromURL, "\(item.name): the query string as sent, \(item.request.queryString)")
            #expect(item.request.payloadHash == answer.payloadHash, "\(item.name): payload hash")
        }
    }

    @Test("rclone serve s3, which checks every signature, accepts each request, and refuses it signed with another secret")
    func rcloneAccepts() async throws {
        let server = try await S3ServerKind.rclone.start()
        defer { server.cleanUp() }
        func send(_ item: Case, secret: String) async throws -> LoopbackHTTP.Response {
            let signer = S3Signer(credentials: S3Credentials(accessKeyID: server.accessKeyID, secretAccessKey: secret), region: server.region)
            let headers = item.request.headers + signer.sign(item.request, at: Date())
            let target = item.request.path + (item.request.query.isEmpty ? "" : "?" + item.request.queryString)
            return try await LoopbackHTTP.send(port: server.port, method: item.request.method, target: target, headers: headers, body: item.body)
        }
        for item in Self.cases(host: "127.0.0.1:\(server.port)") {
            // Not found, not implemented, a key rclone will not store: all
            // are answers to a request whose signature checked out.
            let response = try await send(item, secret: server.secretAccessKey)
            #expect(response.status != 403 && !response.text.contains("Signature"), "\(item.name): \(response.status) \(response.text)")
            let forged = try await send(item, secret: "another/secret+key")
            #expect(forged.status == 403, "\(item.name) with another secret: \(forged.status) \(forged.text)")
        }
    }

    @Test("a different secret gives a different signature (the comparison can fail)")
    func differentSecret() async throws {
        let signer = S3Signer(credentials: Self.credentials, region: "us-east-1")
        let sample = Array(Self.cases().prefix(2))
        let (ours, amzDate) = Self.authorization(signer, sample[0].request)
        let answers = try await Self.botocore(sample, secret: S3TestAccount.secretAccessKey.replacingOccurrences(of: "/", with: "+"),
                                              amzDate: amzDate)
        #expect(answers[0].fromQuery != ours)
        #expect(answers[0].fromQuery.prefix(while: { $0 != "," }) == ours.prefix(while: { $0 != "," }), "same credential scope")
    }
}
