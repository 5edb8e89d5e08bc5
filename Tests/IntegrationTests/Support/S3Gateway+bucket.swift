import DavgateTestSupport
import Foundation
import Testing

/// What a client scenario on the domain `s3` left behind, checked where it
/// lands: in the bucket, through the S3 server itself, and through davgate.
extension S3Gateway {
    /// The path (below the domain's root) of the marker that keeps `folder`:
    /// `folder/`, or `folder/.davgate-folder` where the server cannot hold a
    /// key ending in `/`.
    func marker(_ folder: String) -> String {
        markers == "slash" ? folder + "/" : folder + "/.davgate-folder"
    }

    /// The folder a marker path keeps, nil for a file's path.
    func folder(ofMarker path: String) -> String? {
        if markers == "slash" { return path.hasSuffix("/") ? String(path.dropLast()) : nil }
        return path.hasSuffix("/.davgate-folder") ? String(path.dropLast("/.davgate-folder".count)) : nil
    }

    /// Expects the whole bucket to hold exactly `expected` (paths below the
    /// domain's root, each with its bytes; folder markers from ``marker(_:)``
    /// with empty bytes), no key more or less, keys compared byte for byte
    /// (NFC), every object's size in the listing and its bytes as the S3
    /// server hands them out; no multipart upload left in progress. Then
    /// the same through davgate: a PROPFIND walk of the domain lists exactly
    /// the folders and files those keys make (no marker shown as a file),
    /// and a GET of each file answers its bytes.
    func expectBucket(holds expected: [String: Data], sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let want = expected.map { (key: prefix + $0.key.precomposedStringWithCanonicalMapping, data: $0.value) }
            .sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
        // davgate's own folder (the trash of what the scenario deleted) is
        // checked by the trash's tests, not here.
        let listing = try await server.listing().filter { !$0.key.hasPrefix(prefix + ".davgate/") }
        let listed = Dictionary(listing.map { (Array($0.key.utf8), $0.object) }, uniquingKeysWith: { first, _ in first })
        let wanted = Set(want.map { Array($0.key.utf8) })
        let missing = want.map(\.key).filter { listed[Array($0.utf8)] == nil }
        let unexpected = listing.map(\.key).filter { !wanted.contains(Array($0.utf8)) }
        #expect(missing.isEmpty && unexpected.isEmpty && listing.count == want.count,
                "the bucket's keys: missing \(spelled(missing)), unexpected \(spelled(unexpected)); listed \(spelled(listing.map(\.key)))",
                sourceLocation: sourceLocation)
        for (key, data) in want {
            guard let object = listed[Array(key.utf8)] else { continue }
            #expect(object.size == data.count, "\(spelled(key)): \(object.size) bytes listed, \(data.count) expected", sourceLocation: sourceLocation)
            guard !data.isEmpty else { continue }
            let stored = try await server.object(key)
            #expect(stored == data, "\(spelled(key)): the S3 server holds \(stored.count) bytes\(firstDifference(stored, data)), expected \(data.count)",
                    sourceLocation: sourceLocation)
        }
        let uploads = try await server.multipartUploads()
        #expect(uploads.isEmpty, "multipart uploads left in progress: \(uploads)", sourceLocation: sourceLocation)

        // davgate's view of the same keys.
        var folders = Set<[UInt8]>()
        var files: [(path: String, data: Data)] = []
        for (key, data) in want {
            let path = String(key.dropFirst(prefix.count))
            let folder = folder(ofMarker: path)
            if let folder { folders.insert(Array(folder.utf8)) } else { files.append((path, data)) }
            var parent = ((folder ?? path) as NSString).deletingLastPathComponent
            while !parent.isEmpty {
                folders.insert(Array(parent.utf8))
                parent = (parent as NSString).deletingLastPathComponent
            }
        }
        let seen = try await client.walk("/s3/")
        let seenFolders = Set(seen.filter(\.isFolder).map { Array($0.path.utf8) })
        let seenFiles = Set(seen.filter { !$0.isFolder }.map { Array($0.path.utf8) })
        #expect(seenFolders == folders && seenFiles == Set(files.map { Array($0.path.utf8) }),
                """
                davgate lists folders \(spelled(seen.filter(\.isFolder).map(\.path))) \
                and files \(spelled(seen.filter { !$0.isFolder }.map(\.path))); \
                the keys make folders \(spelled(folders.map { String(decoding: $0, as: UTF8.self) })) \
                and files \(spelled(files.map(\.path)))
                """, sourceLocation: sourceLocation)
        for (path, data) in files {
            let reply = try await client.send("GET", "/s3/" + davPath(path))
            #expect(reply.status == 200 && reply.body == data,
                    "GET \(spelled(path)) through davgate: \(reply.status), \(reply.body.count) bytes\(firstDifference(reply.body, data)), expected \(data.count)",
                    sourceLocation: sourceLocation)
        }
    }
}

extension DAVClient {
    /// Every member below the collection `href` (percent-encoded, with its
    /// trailing slash), by PROPFIND Depth 1 a folder at a time: paths
    /// relative to `href`, percent-decoded, without trailing slashes.
    func walk(_ href: String) async throws -> [(path: String, isFolder: Bool)] {
        var found: [(path: String, isFolder: Bool)] = []
        var pending = [(href: href, path: "")]
        while let folder = pending.popLast() {
            let reply = try await send("PROPFIND", folder.href, headers: [("Depth", "1")])
            let listing = try #require(reply.status == 207 ? Multistatus(reply) : nil, "PROPFIND \(folder.href): \(reply.status) \(reply.text)")
            for response in listing.responses {
                let relative = try #require(response.href.hasPrefix(href) ? response.href.dropFirst(href.count).removingPercentEncoding : nil,
                                            "an href outside \(href): \(response.href)")
                let path = relative.hasSuffix("/") ? String(relative.dropLast()) : relative
                guard Array(path.utf8) != Array(folder.path.utf8) else { continue }
                found.append((path, response.isCollection))
                if response.isCollection { pending.append((response.href, path)) }
            }
        }
        return found
    }
}

/// A path of names, each segment percent-encoded as davgate's hrefs are.
func davPath(_ path: String) -> String {
    path.split(separator: "/", omittingEmptySubsequences: false).map { hrefSegment(String($0)) }.joined(separator: "/")
}

/// A key or name with every scalar beyond ASCII spelled out, so that an NFD
/// name (`u` and U+0308) and its NFC twin (U+00FC) read differently.
func spelled(_ name: String) -> String {
    "\"" + name.unicodeScalars.map { $0.isASCII ? String($0) : "\\u{\(String($0.value, radix: 16, uppercase: true))}" }.joined() + "\""
}

/// Names spelled so, sorted by their bytes, in brackets.
func spelled(_ names: [String]) -> String {
    "[" + names.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }.map(spelled).joined(separator: ", ") + "]"
}

/// ", first different at byte N" when `a` and `b` differ within their
/// common length, else nothing (a length mismatch tells the rest).
private func firstDifference(_ a: Data, _ b: Data) -> String {
    guard let index = zip(a, b).enumerated().first(where: { $0.element.0 != $0.element.1 })?.offset else { return "" }
    return ", first different at byte \(index)"
}
