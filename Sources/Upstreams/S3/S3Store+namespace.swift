import AsyncHTTPClient
import Crypto
import DAVXML
import Foundation
import NIOCore
import NIOHTTP1
import ProviderCore

extension S3Store {
    public func makeFolder(_ path: ItemPath) async throws -> UpstreamEntry {
        guard let name = path.last else { throw UpstreamError.exists }
        if path.count > 1, !(try await holdsKeys(below: Array(path.dropLast()))) { throw UpstreamError.notFound }
        if try await stat(path) != nil { throw UpstreamError.exists }
        try await writeMarker(path)
        return Self.folderEntry(name)
    }

    /// Removes a file, or a folder with every key below it (DeleteObjects,
    /// 1,000 keys a request, page by page as the listing arrives).
    public func delete(_ path: ItemPath) async throws {
        guard !path.isEmpty else { throw UpstreamError.forbidden("the domain's root cannot be deleted") }
        foldersSeen.forgetAll()
        let key = try key(path)
        if try await head(key) != nil {
            try await send(.DELETE, key: key, operation: .delete)
        } else {
            let removed = try await deleteKeys(below: folderPrefix(path))
            if removed == 0 { throw UpstreamError.notFound }
        }
        try await keepFolder(Array(path.dropLast()))
    }

    /// Moves a file with CopyObject and DeleteObject; a folder by copying
    /// every key below it first and deleting the originals only once all
    /// are copied, so a crash in the middle leaves both copies of some
    /// files (the next move or delete tidies up), never none.
    public func move(_ source: ItemPath, to destination: ItemPath) async throws -> UpstreamEntry {
        foldersSeen.forgetAll()
        let entry = try await copy(source, to: destination, recursive: true)
        let sourceKey = try key(source)
        if entry.isFolder {
            _ = try await deleteKeys(below: folderPrefix(source))
        } else {
            try await send(.DELETE, key: sourceKey, operation: .delete)
        }
        try await keepFolder(Array(source.dropLast()))
        return entry
    }

    /// Copies a file with CopyObject, a folder key by key (`recursive`) or
    /// as a new empty folder. The destination must be free and its parent there.
    public func copy(_ source: ItemPath, to destination: ItemPath, recursive: Bool) async throws -> UpstreamEntry {
        guard !source.isEmpty, let name = destination.last else { throw UpstreamError.conflict }
        guard let original = try await stat(source) else { throw UpstreamError.notFound }
        if try await stat(destination) != nil { throw UpstreamError.exists }
        if destination.count > 1, !(try await holdsKeys(below: Array(destination.dropLast()))) { throw UpstreamError.conflict }
        guard original.isFolder else {
            try await copyObject(try key(source), to: try key(destination))
            return try await written(destination)
        }
        guard recursive else { return try await makeFolder(destination) }
        let from = try folderPrefix(source), to = try folderPrefix(destination)
        var copied = 0
        try await forEachPage(prefix: from, delimited: false) { page in
            try await withThrowingTaskGroup(of: Void.self) { group in
                var pending = page.objects.makeIterator()
                func start() -> Bool {
                    guard let object = pending.next() else { return false }
                    group.addTask { try await copyObject(object.key, to: to + object.key.dropFirst(from.count)) }
                    return true
                }
                for _ in 0..<multipart.parallel where start() {}
                while try await group.next() != nil { _ = start() }
            }
            copied += page.objects.count
        }
        // An implied folder (keys below, no marker) copies as the keys; one
        // holding nothing at all gets its marker.
        if copied == 0 { try await writeMarker(destination) }
        return Self.folderEntry(name)
    }

    /// CopyObject, keeping the metadata (the file's time among it). Its
    /// answer can be a 200 whose body is an error.
    func copyObject(_ source: String, to destination: String) async throws {
        let copySource = "/" + S3Signer.encode(bucket) + "/"
            + source.split(separator: "/", omittingEmptySubsequences: false).map { S3Signer.encode(String($0)) }.joined(separator: "/")
        let answer = try await document(.PUT, key: destination, headers: [("x-amz-copy-source", copySource)], operation: .copy)
        if let failure = S3ErrorDocument.parse(answer) {
            throw error(status: 500, code: failure.code, message: failure.message, operation: .copy)
        }
    }

    /// Deletes every key below `prefix`, a page at a time.
    /// - Returns: how many keys there were.
    func deleteKeys(below prefix: String) async throws -> Int {
        var removed = 0
        try await forEachPage(prefix: prefix, delimited: false) { page in
            guard !page.objects.isEmpty else { return }
            var body = "<Delete xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><Quiet>true</Quiet>"
            for object in page.objects { body += "<Object><Key>\(XMLEscaping.text(object.key))</Key></Object>" }
            body += "</Delete>"
            // DeleteObjects insists on Content-MD5.
            let md5 = Data(Insecure.MD5.hash(data: Data(body.utf8))).base64EncodedString()
            let answer = try await document(.POST, key: nil, query: [("delete", nil)], headers: [("content-md5", md5)],
                                            body: .bytes(ByteBuffer(string: body)), operation: .delete)
            if let root = try? S3XML.parse(answer), let failed = root.child("Error") {
                let code = failed.child("Code")?.text ?? "an error"
                throw error(status: code == "AccessDenied" ? 403 : 500, code: code, message: failed.child("Message")?.text,
                            operation: .delete)
            }
            removed += page.objects.count
        }
        return removed
    }

    /// Writes a folder's marker (a zero-byte object).
    func writeMarker(_ folder: ItemPath) async throws {
        try await send(.PUT, key: markerKey(folder), headers: [("content-type", "application/x-directory")], operation: .makeFolder)
    }

    /// After a deletion or a move out of `folder`: a folder that held its
    /// last key gets a marker, so it stays, as on a file system.
    func keepFolder(_ folder: ItemPath) async throws {
        guard !folder.isEmpty, !(try await holdsKeys(below: folder)) else { return }
        try await writeMarker(folder)
    }
}
