import AsyncHTTPClient
import DAVXML
import Foundation
import NIOCore
import NIOHTTP1
import ProviderCore

extension S3Store {
    /// A multipart upload: started, its parts sent `multipart.parallel` at a
    /// time, each streamed from its range of the local file, then completed
    /// in one request that carries the condition. Any failure (or
    /// cancellation) aborts the upload, so no orphan parts stay stored, and
    /// billed, on the server.
    /// - Returns: the new object's ETag.
    func uploadInParts(_ source: ReadOnlyFile, length: Int64, key: String, headers: [(name: String, value: String)],
                       condition: [(name: String, value: String)], progress: UploadProgress?) async throws -> String {
        let started = try await document(.POST, key: key, query: [("uploads", nil)], headers: headers, operation: .upload)
        guard let root = try? S3XML.parse(started), let uploadID = root.child("UploadId")?.text, !uploadID.isEmpty else {
            throw UpstreamError.io("CreateMultipartUpload answered without an UploadId")
        }
        do {
            let parts = try await sendParts(source, length: length, key: key, uploadID: uploadID, progress: progress)
            var body = "<CompleteMultipartUpload xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
            for (number, etag) in parts.enumerated() {
                body += "<Part><PartNumber>\(number + 1)</PartNumber><ETag>\(XMLEscaping.text(etag))</ETag></Part>"
            }
            body += "</CompleteMultipartUpload>"
            let answer = try await document(.POST, key: key, query: [("uploadId", uploadID)], headers: condition,
                                            body: .bytes(ByteBuffer(string: body)), operation: .upload)
            // A completion can fail after its 200 has been sent: the error is then the body.
            if let failure = S3ErrorDocument.parse(answer) {
                throw error(status: failure.code == "PreconditionFailed" ? 412 : 500, code: failure.code,
                            message: failure.message, operation: .upload)
            }
            guard let completed = try? S3XML.parse(answer), let etag = completed.child("ETag")?.text, !etag.isEmpty else {
                throw UpstreamError.io("CompleteMultipartUpload answered without an ETag")
            }
            return Self.version(ofETag: etag)
        } catch {
            await abort(uploadID, key: key)
            throw error
        }
    }

    /// Sends every part, at most `multipart.parallel` at once.
    /// - Returns: the parts' ETags in order.
    func sendParts(_ source: ReadOnlyFile, length: Int64, key: String, uploadID: String,
                   progress: UploadProgress?) async throws -> [String] {
        // S3 allows 10,000 parts: a larger file gets larger parts, in whole MiB.
        let needed = (length + 9_999) / 10_000
        let partSize = max(multipart.partSize, (needed + (1 << 20) - 1) / (1 << 20) * (1 << 20))
        let count = Int((length + partSize - 1) / partSize)
        var etags = [String](repeating: "", count: count)
        try await withThrowingTaskGroup(of: (Int, String).self) { group in
            var next = 0
            func start() {
                let number = next
                next += 1
                let range = Int64(number) * partSize..<min(Int64(number + 1) * partSize, length)
                group.addTask {
                    let answer = try await send(.PUT, key: key, query: [("partNumber", String(number + 1)), ("uploadId", uploadID)],
                                                body: .file(source, range, progress), operation: .upload, deadline: .distantFuture)
                    guard let etag = answer.first(name: "ETag") else { throw UpstreamError.io("UploadPart answered without an ETag") }
                    return (number, etag)
                }
            }
            while next < min(count, multipart.parallel) { start() }
            while let (number, etag) = try await group.next() {
                etags[number] = etag
                if next < count { start() }
            }
        }
        return etags
    }

    /// Aborts a multipart upload, even when the task that ran it was
    /// cancelled (a cancelled request would leave the parts stored).
    func abort(_ uploadID: String, key: String) async {
        let store = self
        await Task.detached {
            _ = try? await store.send(.DELETE, key: key, query: [("uploadId", uploadID)], operation: .delete)
        }.value
    }
}

/// S3's small XML documents (a multipart upload's start and completion).
enum S3XML {
    static func parse(_ buffer: ByteBuffer) throws -> XMLElement {
        try XMLDocumentParser.parse(Array(buffer.readableBytesView), limits: S3Listing.limits)
    }
}
