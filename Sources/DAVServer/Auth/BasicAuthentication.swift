import Foundation
import HTTPTypes

/// HTTP Basic credentials (RFC 7617), the only scheme every WebDAV client
/// speaks; safe only over TLS, which is why plain HTTP refuses it by default.
struct BasicCredentials: Sendable {
    var user: String
    var password: String

    init?(header: String?) {
        guard let header, header.count > 6,
              header.prefix(6).lowercased() == "basic " else { return nil }
        let encoded = header.dropFirst(6).trimmingCharacters(in: .whitespaces)
        guard let data = Data(base64Encoded: encoded),
              let decoded = String(data: data, encoding: .utf8),
              let colon = decoded.firstIndex(of: ":") else { return nil }
        user = String(decoded[..<colon])
        password = String(decoded[decoded.index(after: colon)...])
    }
}
