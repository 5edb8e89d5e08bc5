import DavgateTestSupport
import Foundation
import Upstreams

/// One S3 request signed with S3Signer and sent over a plain socket with
/// exactly its signed headers: for tests that check what a server (or the
/// fault proxy in front of it) answers, without a store in between.
enum SignedS3Request {
    /// Sends `method` on `key` (the bucket itself when nil) of `server`'s
    /// bucket to `port` (the server's own, or a proxy's), signed for
    /// `127.0.0.1:port` with `secret`.
    static func send(_ method: String, key: String?, query: [(name: String, value: String?)] = [],
                     headers: [(name: String, value: String)] = [], body: Data = Data(),
                     server: any S3TestServer, port: Int? = nil, secret: String? = nil) async throws -> LoopbackHTTP.Response {
        let port = port ?? server.port
        let path = "/\(server.bucket)" + (key.map {
            "/" + $0.split(separator: "/", omittingEmptySubsequences: false).map { S3Signer.encode(String($0)) }.joined(separator: "/")
        } ?? "")
        let request = S3Signer.Request(method: method, path: path, query: query, headers: [("host", "127.0.0.1:\(port)")] + headers,
                                       payloadHash: S3Signer.payloadHash(body))
        let credentials = S3Credentials(accessKeyID: server.accessKeyID, secretAccessKey: secret ?? server.secretAccessKey)
        let signed = request.headers + S3Signer(credentials: credentials, region: server.region).sign(request, at: Date())
        let target = path + (query.isEmpty ? "" : "?" + request.queryString)
        return try await LoopbackHTTP.send(port: port, method: method, target: target, headers: signed, body: body)
    }
}
