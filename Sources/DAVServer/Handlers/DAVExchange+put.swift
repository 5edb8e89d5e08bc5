import CoreMetrics
import Foundation
import DAVProtocol
import DAVXML
import HTTPTypes
import Hummingbird
import Logging
import ProviderCore

extension DAVExchange {
    /// PUT (RFC 9110 section 9.3.4, RFC 4918 section 9.7): checks first
    /// (parent, locks, If, If-Match, If-None-Match), then `100 Continue`,
    /// then the body streams to a temporary file that is fsynced and handed
    /// to the provider. A cut connection or a short body leaves the old
    /// content and no partial file anywhere.
    func put() async throws -> Response {
        let provider = try requireDomain()
        guard !itemPath.isEmpty else { throw DAVError(.methodNotAllowed, "PUT on a domain root") }
        if headers[.contentRange] != nil {
            throw DAVError.badRequest("partial PUT (Content-Range) is not supported; send the whole content")
        }
        // What the index knows; the commit checks the upstream.
        let target = try await provider.writeTarget(itemPath, checkingUpstream: false)
        let existing = target.existing, parent = target.folder
        if existing?.isFolder == true {
            throw DAVError(.methodNotAllowed, "PUT on a collection")
        }
        // Before the body: a name the upstream cannot hold is refused now,
        // not after gigabytes were received.
        if existing == nil { try provider.admit(itemPath) }
        let submitted = try await evaluateIfHeader()
        var lockCreated = false
        if let existing { lockCreated = try await provider.isLockCreatedPlaceholder(existing) }
        try checkWriteConditions(existing, newForIfNoneMatch: lockCreated)
        // Checked now to refuse before the body, and again by the provider
        // when it commits: a LOCK granted while the body arrives wins.
        let conditions = writeConditions(submitted: submitted, judging: existing)
        try await provider.check(conditions, target: existing, parent: parent)
        // Finder sends chunked bodies with the real length here.
        let expected = headers[.init("X-Expected-Entity-Length")!].flatMap(Int64.init)
        let ownCloud = try OwnCloudPut(headers)
        continueIfExpected()
        let file = provider.newWriteFile()
        let started = ContinuousClock.now
        let body: BodyFileWriter.Written
        do {
            body = try await BodyFileWriter.write(request.body, to: file, inlineLimit: provider.inlineWriteLimit)
        } catch {
            provider.discardWrite(file)
            if let error = error as? ProviderError { throw error }
            throw DAVError(.badRequest, "the request body ended early (\(error)); nothing was stored")
        }
        let written = body.count
        if let expected, expected != written {
            provider.discardWrite(file)
            throw DAVError.badRequest("received \(written) bytes but X-Expected-Entity-Length announced \(expected); nothing was stored")
        }
        do {
            try ownCloud.check(body)
        } catch {
            provider.discardWrite(file)
            throw error
        }
        let outcome = try await provider.write(WriteRequest(
            path: itemPath, file: file, size: written, checksum: body.checksum,
            modified: ownCloud.mtime.map { Date(timeIntervalSince1970: $0) }, conditions: conditions, content: body.content))
        logTransfer(context, "PUT", path.href(collection: false), bytes: written, since: started)
        ServerMetrics.bytesReceived.increment(by: written)
        var fields = HTTPFields()
        ownCloud.answer(outcome.item, into: &fields)
        if let copy = outcome.conflictCopy {
            // The upstream changed meanwhile: ours was kept beside it. Say
            // where, rather than pretend it replaced what is at the path.
            fields[.location] = href(copy, isFolder: false)
            fields[.init("X-Davgate-Conflict")!] = href(copy, isFolder: false)
            return Self.response(.created, headers: fields)
        }
        fields[.eTag] = outcome.item.etag
        return Self.response(outcome.created ? .created : .noContent, headers: fields)
    }
}
