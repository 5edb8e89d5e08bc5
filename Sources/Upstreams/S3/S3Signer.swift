import Crypto
import Foundation

/// An S3 access key: the key id is sent with every request, the secret only
/// ever enters an HMAC. Descriptions never show the secret.
public struct S3Credentials: Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    public let accessKeyID: String
    let secretAccessKey: String

    public init(accessKeyID: String, secretAccessKey: String) {
        self.accessKeyID = accessKeyID
        self.secretAccessKey = secretAccessKey
    }

    public var description: String { "S3Credentials(\(accessKeyID), secret <redacted>)" }
    public var debugDescription: String { description }
}

/// AWS Signature Version 4 for S3 requests (the "Authorization header"
/// form): a canonical request, the string to sign over its hash, and an
/// HMAC chain from the secret through date, region and service.
///
/// S3 differs from other AWS services in one way that matters here: the
/// path is signed exactly as it is sent, each segment percent-encoded once
/// (never twice) and never normalised, so a key holding `//` or `..` is
/// signed as the key it is. The tests check every signature against
/// botocore's own signer.
public struct S3Signer: Sendable {
    public let credentials: S3Credentials
    public let region: String
    public let service: String

    /// The payload hash that signs headers only, for streamed bodies (the
    /// connection's TLS, not the signature, then guards the bytes).
    public static let unsignedPayload = "UNSIGNED-PAYLOAD"
    /// The hash of an empty body, for GET, HEAD, DELETE and their kin.
    public static let emptyPayload = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

    public init(credentials: S3Credentials, region: String, service: String = "s3") {
        self.credentials = credentials
        self.region = region
        self.service = service
    }

    /// One request as it will be sent.
    public struct Request: Sendable {
        public var method: String
        /// The path as sent: each segment percent-encoded by `encode(_:)`.
        public var path: String
        /// Query parameters, not encoded; `nil` values are bare flags
        /// (`?uploads`), signed as `uploads=`.
        public var query: [(name: String, value: String?)]
        /// Every header to sign, `host` included; names in any case.
        public var headers: [(name: String, value: String)]
        /// Hex SHA-256 of the body, or `unsignedPayload`.
        public var payloadHash: String

        public init(method: String, path: String, query: [(name: String, value: String?)] = [],
                    headers: [(name: String, value: String)], payloadHash: String) {
            self.method = method
            self.path = path
            self.query = query
            self.headers = headers
            self.payloadHash = payloadHash
        }

        /// The query as sent: sorted and encoded the way it is signed, so
        /// the server's canonical form and ours cannot differ.
        public var queryString: String {
            S3Signer.canonicalQuery(query)
        }
    }

    /// The headers to add to `request`: `x-amz-date`, `x-amz-content-sha256`
    /// and `authorization`, in that order.
    public func sign(_ request: Request, at date: Date) -> [(name: String, value: String)] {
        let amzDate = Self.amzDate(date)
        var signed = request
        signed.headers.append(("x-amz-date", amzDate))
        signed.headers.append(("x-amz-content-sha256", request.payloadHash))
        let (canonical, signedHeaders) = Self.canonicalRequest(signed)
        let day = String(amzDate.prefix(8))
        let scope = "\(day)/\(region)/\(service)/aws4_request"
        let stringToSign = "AWS4-HMAC-SHA256\n\(amzDate)\n\(scope)\n\(Self.hex(SHA256.hash(data: Data(canonical.utf8))))"
        var key = SymmetricKey(data: Data("AWS4\(credentials.secretAccessKey)".utf8))
        for part in [day, region, service, "aws4_request"] {
            key = SymmetricKey(data: Data(HMAC<SHA256>.authenticationCode(for: Data(part.utf8), using: key)))
        }
        let signature = Self.hex(HMAC<SHA256>.authenticationCode(for: Data(stringToSign.utf8), using: key))
        let authorization = "AWS4-HMAC-SHA256 Credential=\(credentials.accessKeyID)/\(scope), "
            + "SignedHeaders=\(signedHeaders), Signature=\(signature)"
        return [("x-amz-date", amzDate), ("x-amz-content-sha256", request.payloadHash), ("authorization", authorization)]
    }

    /// The canonical request and the signed header names (for tests and logs
    /// at trace level; it holds no secret).
    static func canonicalRequest(_ request: Request) -> (text: String, signedHeaders: String) {
        var byName: [String: [String]] = [:]
        for (name, value) in request.headers {
            byName[name.lowercased(), default: []].append(Self.trimmed(value))
        }
        let names = byName.keys.sorted()
        let headerLines = names.map { "\($0):\(byName[$0]!.joined(separator: ","))\n" }.joined()
        let signedHeaders = names.joined(separator: ";")
        let text = [request.method, request.path, canonicalQuery(request.query), headerLines, signedHeaders, request.payloadHash]
            .joined(separator: "\n")
        return (text, signedHeaders)
    }

    static func canonicalQuery(_ query: [(name: String, value: String?)]) -> String {
        let pairs: [(name: String, value: String)] = query.map { (encode($0.name), encode($0.value ?? "")) }
        let sorted = pairs.sorted { (a, b) -> Bool in a.name == b.name ? a.value < b.value : a.name < b.name }
        return sorted.map { "\($0.name)=\($0.value)" }.joined(separator: "&")
    }

    /// Percent-encodes everything but RFC 3986's unreserved characters
    /// (A-Z a-z 0-9 - . _ ~), UTF-8 first, hex in upper case, as SigV4 asks.
    public static func encode(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            if unreserved(byte) {
                out.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                out += "%"
                out.unicodeScalars.append(hexDigit(byte >> 4))
                out.unicodeScalars.append(hexDigit(byte & 0xF))
            }
        }
        return out
    }

    private static func unreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x41...0x5A, 0x61...0x7A, 0x30...0x39: true  // A-Z a-z 0-9
        case 0x2D, 0x2E, 0x5F, 0x7E: true  // - . _ ~
        default: false
        }
    }

    private static func hexDigit(_ value: UInt8) -> Unicode.Scalar {
        Unicode.Scalar(value < 10 ? 0x30 + value : 0x41 + value - 10)
    }

    /// SigV4's Trimall: whitespace dropped at both ends and each run of it
    /// made one space. Whitespace is Unicode's (tab and no-break space
    /// too), as botocore (`str.split()`) and Go servers such as rclone
    /// (`strings.Fields`) count it: collapsing only spaces, a value holding
    /// a tab was signed otherwise and refused with SignatureDoesNotMatch.
    static func trimmed(_ value: String) -> String {
        value.unicodeScalars.split(whereSeparator: \.properties.isWhitespace).map { String(Substring($0)) }
            .joined(separator: " ")
    }

    /// `20261125T141500Z`, in UTC whatever the machine's zone.
    static func amzDate(_ date: Date) -> String {
        var time = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        gmtime_r(&time, &parts)
        func two(_ n: Int32) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return "\(parts.tm_year + 1900)\(two(parts.tm_mon + 1))\(two(parts.tm_mday))T\(two(parts.tm_hour))\(two(parts.tm_min))\(two(parts.tm_sec))Z"
    }

    static func hex(_ bytes: some Sequence<UInt8>) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0xF)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Hex SHA-256 of a small body (a DeleteObjects or CompleteMultipartUpload document).
    public static func payloadHash(_ body: some DataProtocol) -> String {
        hex(SHA256.hash(data: body))
    }
}
