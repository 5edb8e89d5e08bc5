import AsyncHTTPClient
import DAVProtocol
import DAVXML
import Foundation
import NIOCore
import NIOHTTP1
import ProviderCore

/// What a `207 Multi-Status` answer to our PROPFIND says about one resource
/// (RFC 4918 sections 14.16, 14.24): its decoded path and the properties that
/// came back in a 2xx propstat.
struct PropfindAnswer: Sendable {
    var path: DAVPath?
    var isFolder = false
    var size: Int64?
    var modified: Date?
    /// The ETag without `W/` (``WebDAVStore/version(ofETag:)``).
    var etag: String?
    var executable = false
    var quotaAvailable: Int64?
    var quotaUsed: Int64?
    /// RFC 6578 `DAV:sync-token`: the collection's change feed position.
    var syncToken: String?

    /// The properties a listing asks for; never `allprop` (section 9.1: it
    /// makes servers compute everything, dead properties included).
    static let entryProperties: [XMLName] = [
        .dav("resourcetype"), .dav("getcontentlength"), .dav("getlastmodified"), .dav("getetag"),
        XMLName("http://apache.org/dav/props/", "executable"),
    ]

    /// RFC 4331 section 3: quota properties are only returned when named.
    static let quotaProperties: [XMLName] = [.dav("quota-available-bytes"), .dav("quota-used-bytes")]

    /// A `DAV:propfind` body naming exactly these properties.
    static func requestBody(_ names: [XMLName]) -> String {
        "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<D:propfind xmlns:D=\"DAV:\"><D:prop>"
            + names.map(PropertyXML.empty).joined() + "</D:prop></D:propfind>"
    }

    /// Parse caps for answers: far larger than request bodies (a folder of
    /// 100,000 files is some 40 MB of XML), still bounded.
    static let limits = XMLLimits(maxBytes: 64 << 20, maxDepth: 64, maxNodes: 4_000_000)

    /// The entry for a member of a listing, or the target of a stat; nil when
    /// the answer names no item (the root has no name, its caller names it).
    func entry(name: String? = nil) -> UpstreamEntry? {
        guard let name = name ?? path?.name else { return nil }
        let size = isFolder ? 0 : (self.size ?? 0)
        let modified = self.modified ?? Date(timeIntervalSince1970: 0)
        // Without an ETag, size and modification second are the best
        // version a server offers; GET builds the same from its headers.
        let version = etag ?? Self.fallbackVersion(size: size, modified: modified)
        return UpstreamEntry(name: name, isFolder: isFolder, size: size, modified: modified,
                             version: version, executable: executable && !isFolder)
    }

    var quota: UpstreamQuota? {
        guard let quotaAvailable else { return nil }
        return UpstreamQuota(available: quotaAvailable, used: quotaUsed ?? 0)
    }

    static func fallbackVersion(size: Int64, modified: Date) -> String {
        "\(size)-\(Int64(modified.timeIntervalSince1970.rounded(.down)))"
    }

    /// Reads the `DAV:response` elements of a multistatus.
    static func answers(_ root: XMLElement) throws(UpstreamError) -> [PropfindAnswer] {
        guard root.name == .dav("multistatus") else {
            throw .io("PROPFIND answer is not a DAV:multistatus but \(root.name)")
        }
        return root.elements.filter { $0.name == .dav("response") }.map(answer)
    }

    static func answer(_ response: XMLElement) -> PropfindAnswer {
        var answer = PropfindAnswer()
        if let href = response.first(.dav("href"))?.text.trimmingXMLWhitespace {
            answer.path = try? DAVPath.parse(requestTarget: href).path
        }
        for propstat in response.elements where propstat.name == .dav("propstat") {
            guard let status = propstat.first(.dav("status")).flatMap({ statusCode($0.text) }),
                  (200..<300).contains(status),
                  let prop = propstat.first(.dav("prop"))
            else { continue }
            for property in prop.elements {
                let value = property.text.trimmingXMLWhitespace
                switch property.name {
                case .dav("resourcetype"):
                    answer.isFolder = property.first(.dav("collection")) != nil
                case .dav("getcontentlength"):
                    answer.size = Int64(value)
                case .dav("getlastmodified"):
                    answer.modified = HTTPDate.parse(value)
                case .dav("getetag"):
                    answer.etag = value.isEmpty ? nil : WebDAVStore.version(ofETag: value)
                case XMLName("http://apache.org/dav/props/", "executable"):
                    answer.executable = value == "T"
                case .dav("quota-available-bytes"):
                    answer.quotaAvailable = Int64(value)
                case .dav("quota-used-bytes"):
                    answer.quotaUsed = Int64(value)
                case .dav("sync-token"):
                    answer.syncToken = value.isEmpty ? nil : value
                default:
                    continue
                }
            }
        }
        return answer
    }

    /// The code of an HTTP status line, `HTTP/1.1 404 Not Found` -> 404.
    static func statusCode(_ line: String) -> Int? {
        let fields = line.split(separator: " ", maxSplits: 2)
        guard fields.count >= 2 else { return nil }
        return Int(fields[1])
    }

    /// Every `DAV:status` code in a multistatus, in document order (the
    /// members a DELETE, MOVE or COPY could not handle, section 9.6.1).
    static func statuses(_ root: XMLElement) -> [Int] {
        var found: [Int] = []
        func walk(_ element: XMLElement) {
            if element.name == .dav("status"), let code = statusCode(element.text.trimmingXMLWhitespace) {
                found.append(code)
            }
            element.elements.forEach(walk)
        }
        walk(root)
        return found
    }
}

extension WebDAVStore {
    /// PROPFIND with a named-property body; the 207 answer is fed to the
    /// push parser chunk by chunk as it arrives.
    /// - Throws: `.notFound` for 404; the usual mapping for other failures.
    func propfind(_ path: ItemPath, depth: String, properties: [XMLName]) async throws -> [PropfindAnswer] {
        var request = try self.request("PROPFIND", path, collection: depth != "0")
        request.headers.add(name: "Depth", value: depth)
        request.headers.add(name: "Content-Type", value: "application/xml; charset=utf-8")
        request.body = .bytes(ByteBuffer(string: PropfindAnswer.requestBody(properties)))
        let response = try await execute(request, deadline: headDeadline)
        let status = Int(response.status.code)
        guard status == 207 else {
            await HTTPUpstream.discard(response.body)
            if (200..<300).contains(status) {
                throw UpstreamError.io("PROPFIND answered HTTP \(status) instead of 207 Multi-Status")
            }
            throw Self.error(status: status, operation: .read, credentials: credentialsSource)
        }
        return try PropfindAnswer.answers(try await Self.multistatus(response.body, of: "PROPFIND"))
    }

    /// A 207 answer's body, fed to the push parser chunk by chunk as it
    /// arrives, within `PropfindAnswer.limits`.
    static func multistatus(_ body: HTTPClientResponse.Body, of method: String) async throws -> XMLElement {
        var parser = XMLPushParser(limits: PropfindAnswer.limits)
        do {
            for try await chunk in body {
                try parser.feed(chunk.readableBytesView)
            }
        } catch let error as XMLParseError {
            throw UpstreamError.io("unreadable \(method) answer: \(error)")
        } catch {
            throw HTTPUpstream.transportError(error)
        }
        do {
            return try parser.finish()
        } catch {
            throw UpstreamError.io("unreadable \(method) answer: \(error)")
        }
    }
}
