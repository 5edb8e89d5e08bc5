import AsyncHTTPClient
import DAVProtocol
import DAVXML
import NIOCore
import ProviderCore

extension S3Store {
    /// What a request was for; some answers mean different things by operation.
    enum Operation: Sendable {
        case read, list, upload, makeFolder, delete, copy
    }

    /// An S3 answer in `UpstreamError` terms. Refused credentials become a
    /// 502 that names the vault entry; throttling that outlasted the retries
    /// a 503 with Retry-After.
    func error(status: Int, code: String?, message: String?, operation: Operation) -> UpstreamError {
        let reason = "HTTP \(status) \(code ?? StatusLine.reason(status))" + (message.map { ": \($0)" } ?? "")
        switch (status, code) {
        case (_, "NoSuchBucket"?):
            return .forbidden("\(S3StoreConfigurationError.noSuchBucket(bucket: bucket, endpoint: origin))")
        case (401, _), (403, _):
            let check = credentialsSource.map { "check \($0)" }
                ?? "the domain has no credentials; add a vault entry (the access key id as the account, the secret key as the secret) and name it in the domain's credentials"
            return .forbidden("\(reason) from S3: \(check)")
        case (404, _), (410, _):
            return .notFound
        case (412, _), (409, "ConditionalRequestConflict"?):
            return .versionMismatch
        case (409, _):
            return .conflict
        case (416, _):
            return .io("file ended before the requested range")
        case (400, "EntityTooLarge"?), (507, _):
            return .noSpace
        case (429, _), (500...599, _):
            return .unavailable("\(reason) after \(retry.attempts) attempts")
        default:
            return .io(reason)
        }
    }
}

/// S3's error document: `<Error><Code>NoSuchKey</Code><Message>...</Message></Error>`.
struct S3ErrorDocument: Sendable, Equatable {
    var code: String
    var message: String?

    /// Reads an error answer's body (up to 64 KiB; S3's are a few hundred
    /// bytes); nil when it holds no error document (a HEAD has no body).
    static func read(_ body: HTTPClientResponse.Body) async -> S3ErrorDocument? {
        guard let buffer = try? await body.collect(upTo: 64 << 10) else { return nil }
        return parse(buffer)
    }

    static func parse(_ buffer: ByteBuffer) -> S3ErrorDocument? {
        guard buffer.readableBytes > 0,
              let root = try? S3XML.parse(buffer),
              root.name.local == "Error",
              let code = root.child("Code")?.text, !code.isEmpty
        else { return nil }
        return S3ErrorDocument(code: code, message: root.child("Message")?.text)
    }
}

extension XMLElement {
    /// The first child element with this local name, in whatever namespace:
    /// S3 answers in its own, some servers in none.
    func child(_ local: String) -> XMLElement? {
        elements.first { $0.name.local == local }
    }

    func children(_ local: String) -> [XMLElement] {
        elements.filter { $0.name.local == local }
    }
}
