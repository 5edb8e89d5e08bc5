import Foundation
import HTTPTypes

/// HTTP Basic credentials (RFC 7617), the only scheme every WebDAV client
/// speaks; safe only over TLS, which is why plain HTTP refuses it by default.
struct BasicCredentials: Sendable {
    var user: String
    var password: String

    init?(header: String?) {
        guard let header, header.utf8.count > 6,
              header.utf8.prefix(6).elementsEqual("basic ".utf8, by: { $0 | 0x20 == $1 }) else { return nil }
        // Every request carries this header: UTF-8 views, not Foundation's
        // character sets, which cost more than the rest of the check.
        let encoded = header.utf8.dropFirst(6).drop { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }
        let trimmed = encoded.reversed().drop { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }.count
        guard let data = Data(base64Encoded: Data(encoded.prefix(trimmed))),
              let decoded = String(data: data, encoding: .utf8),
              let colon = decoded.firstIndex(of: ":") else { return nil }
        user = String(decoded[..<colon])
        password = String(decoded[decoded.index(after: colon)...])
    }
}
