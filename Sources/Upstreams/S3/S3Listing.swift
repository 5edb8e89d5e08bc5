import DAVXML
import Foundation
import NIOCore
import ProviderCore

#if canImport(Glibc)
import Glibc
#endif

/// One page of a ListObjectsV2 answer: at most 1,000 keys and common
/// prefixes, and the token for the next page.
struct S3Listing: Sendable {
    struct Object: Sendable {
        var key: String
        var size: Int64
        var etag: String
        var modified: Date
    }

    var objects: [Object] = []
    /// Common prefixes, each ending in the delimiter.
    var prefixes: [String] = []
    var nextToken: String?

    /// A page of 1,000 keys is some 300 KB of XML; 16 MiB bounds a hostile one.
    static let maxPageBytes = 16 << 20
    static let limits = XMLLimits(maxBytes: maxPageBytes, maxDepth: 16, maxNodes: 200_000)

    static func parse(_ buffer: ByteBuffer) throws -> S3Listing {
        let root: XMLElement
        do {
            root = try S3XML.parse(buffer)
        } catch {
            throw UpstreamError.io("an unreadable ListObjectsV2 answer: \(error)")
        }
        guard root.name.local == "ListBucketResult" else {
            throw UpstreamError.io("a ListObjectsV2 answer of <\(root.name.local)>")
        }
        var page = S3Listing()
        for element in root.elements {
            switch element.name.local {
            case "Contents":
                guard let key = element.child("Key")?.text else { continue }
                page.objects.append(Object(
                    key: key,
                    size: element.child("Size").flatMap { Int64($0.text) } ?? 0,
                    etag: S3Store.version(ofETag: element.child("ETag")?.text ?? ""),
                    modified: element.child("LastModified").flatMap { parseTimestamp($0.text) } ?? Date(timeIntervalSince1970: 0)))
            case "CommonPrefixes":
                if let prefix = element.child("Prefix")?.text { page.prefixes.append(prefix) }
            default:
                break
            }
        }
        if root.child("IsTruncated")?.text == "true" {
            guard let token = root.child("NextContinuationToken")?.text, !token.isEmpty else {
                throw UpstreamError.io("a truncated ListObjectsV2 answer without a continuation token")
            }
            page.nextToken = token
        }
        return page
    }

    /// `2026-11-25T14:14:14.123Z` (ISO 8601 in UTC, as S3 lists times).
    static func parseTimestamp(_ text: String) -> Date? {
        let bytes = Array(text.utf8)
        guard bytes.count >= 20, bytes[4] == 0x2D, bytes[7] == 0x2D, bytes[10] == 0x54, bytes[13] == 0x3A, bytes[16] == 0x3A
        else { return nil }
        func number(_ range: Range<Int>) -> Int32? { Int32(String(decoding: bytes[range], as: UTF8.self)) }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
              let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19) else { return nil }
        var parts = tm()
        parts.tm_year = year - 1900
        parts.tm_mon = month - 1
        parts.tm_mday = day
        parts.tm_hour = hour
        parts.tm_min = minute
        parts.tm_sec = second
        var fraction = 0.0
        if bytes[19] == 0x2E, let end = bytes[20...].firstIndex(where: { !(0x30...0x39).contains($0) }) {
            fraction = Double("0." + String(decoding: bytes[20..<end], as: UTF8.self)) ?? 0
        }
        return Date(timeIntervalSince1970: Double(timegm(&parts)) + fraction)
    }
}
