import CoreMetrics
import Foundation
import DAVProtocol
import DAVXML
import HTTPTypes
import Hummingbird
import Logging
import ProviderCore

extension DAVExchange {
    /// A write that passed its checks and may receive its body.
    struct PlannedWrite {
        let provider: Provider
        /// What the path holds now, as the index knows it; nil also when it
        /// was not looked up (`planCheckedAtCommit`).
        let existing: Item?
        var conditions: WriteConditions
        let ownCloud: OwnCloudPut
    }

    /// PUT (RFC 9110 section 9.3.4, RFC 4918 section 9.7): checks first
    /// (parent, locks, If, If-Match, If-None-Match), then `100 Continue`,
    /// then the body streams to a temporary file that is fsynced and handed
    /// to the provider. A cut connection or a short body leaves the old
    /// content; the bytes of a large body cut short are staged, unseen, so
    /// the client may send the rest with `Content-Range`
    /// (DAVExchange+pieces), which also takes uploads sent in pieces.
    func put() async throws -> Response {
        let piece: ContentRange?
        do {
            piece = try headers[.contentRange].map { try ContentRange.parse($0) }
        } catch {
            throw DAVError.badRequest("Content-Range must be 'bytes FIRST-LAST/LENGTH' with the file's complete length; nothing was stored")
        }
        let plan = try await Self.checksWaitForCommit(headers, piece: piece) ? planCheckedAtCommit() : planWrite(method: "PUT")
        let provider = plan.provider
        // Finder sends chunked bodies with the real length here.
        let expected = headers[.init("X-Expected-Entity-Length")!].flatMap(Int64.init)
        continueIfExpected()
        if let piece { return try await putPiece(piece, provider: provider, conditions: plan.conditions, ownCloud: plan.ownCloud) }
        let file = provider.newWriteFile()
        let started = ContinuousClock.now
        let body: BodyFileWriter.Written
        do {
            body = try await BodyFileWriter.write(request.body, to: file, inlineLimit: provider.inlineWriteLimit, keepingPartial: true,
                                                  hashing: plan.ownCloud.hashesBody)
        } catch let cut as BodyFileWriter.Cut {
            // The client learns how far it got from a HEAD (Upload-Offset).
            let total = headers[.contentLength].flatMap(Int64.init)
            if let total, expected == nil,
               await provider.stageCutWrite(file, count: cut.received, total: total, path: itemPath, conditions: plan.conditions) {
                throw DAVError(.badRequest, "the request body ended after \(cut.received) of \(total) bytes (\(cut.cause)); the old content stands, and the bytes received are kept for a day: HEAD tells Upload-Offset, send the rest with Content-Range")
            }
            provider.discardWrite(file)
            throw DAVError(.badRequest, "the request body ended early (\(cut.cause)); nothing was stored")
        } catch {
            throw bodyFailed(error, file: file, provider: provider)
        }
        if let expected, expected != body.count {
            provider.discardWrite(file)
            throw DAVError.badRequest("received \(body.count) bytes but X-Expected-Entity-Length announced \(expected); nothing was stored")
        }
        let response = try await commitWrite(file, body, plan)
        // A whole PUT makes the user's unfinished pieces of this path moot.
        await provider.dropStagedUpload(at: itemPath, principal: user)
        logTransfer(context, "PUT", path.href(collection: false), bytes: body.count, since: started)
        ServerMetrics.bytesReceived.increment(by: body.count)
        return response
    }

    /// The checks of a write of a whole file to this path, before its body:
    /// what the index knows (the commit checks the upstream again), the
    /// name, If, If-Match and If-None-Match, and locks, so that a refused
    /// upload is refused before gigabytes arrive.
    func planWrite(method: String) async throws -> PlannedWrite {
        let provider = try writableDomain(method)
        let target = try await provider.writeTarget(itemPath, checkingUpstream: false)
        let existing = target.existing, parent = target.folder
        if existing?.isFolder == true {
            throw DAVError(.methodNotAllowed, "\(method) onto a collection")
        }
        if existing == nil { try provider.admit(itemPath) }
        let submitted = try await evaluateIfHeader()
        var lockCreated = false
        if let existing { lockCreated = try await provider.isLockCreatedPlaceholder(existing) }
        try checkWriteConditions(existing, newForIfNoneMatch: lockCreated)
        // Checked now to refuse before the body, and again by the provider
        // when it commits: a LOCK granted while the body arrives wins.
        let conditions = writeConditions(submitted: submitted, judging: existing)
        try await provider.check(conditions, target: existing, parent: parent)
        return PlannedWrite(provider: provider, existing: existing, conditions: conditions, ownCloud: try OwnCloudPut(headers))
    }

    /// The largest body whose PUT is checked only when it commits.
    static let smallBodyLimit = 64 * 1024

    /// Whether this PUT's checks are better left to its commit alone: a
    /// small body, announced by its length, with no condition to judge and
    /// no `Expect: 100-continue` to answer. The commit repeats every check
    /// of `planWrite` that such a request needs (the folder, a collection
    /// at the path, the name, locks), under the domain's coordination;
    /// checking before the body as well would refuse early only a body
    /// that costs less to receive than the lookups cost, and doubled a
    /// small PUT's index reads (issue 14).
    static func checksWaitForCommit(_ headers: HTTPFields, piece: ContentRange?) -> Bool {
        guard piece == nil, let length = headers[.contentLength].flatMap(Int.init), length <= Self.smallBodyLimit,
              headers[.expect] == nil else { return false }
        return !sendsConditions(headers)
    }

    /// The plan of a write whose checks are all the commit's: the holder
    /// (no tokens, nothing judged) and what needs no lookup.
    func planCheckedAtCommit() throws -> PlannedWrite {
        PlannedWrite(provider: try writableDomain("PUT"), existing: nil, conditions: writeConditions(submitted: [], judging: nil),
                     ownCloud: try OwnCloudPut(headers))
    }

    /// The domain a write of the request's path goes to; 405 for its root,
    /// which no write replaces.
    private func writableDomain(_ method: String) throws -> Provider {
        let provider = try requireDomain()
        guard !itemPath.isEmpty else { throw DAVError(.methodNotAllowed, "\(method) on a domain root") }
        return provider
    }

    /// What a body that could not be received answers, its file discarded:
    /// the provider's own refusal (no space) as it is, anything else (the
    /// connection ended, the framing broke) the client's 400.
    func bodyFailed(_ error: any Error, file: URL, provider: Provider, nothing: String = "nothing was stored") -> any Error {
        provider.discardWrite(file)
        if let error = error as? ProviderError { return error }
        return DAVError(.badRequest, "the request body ended early (\(error)); \(nothing)")
    }

    /// Hands a received body to the provider as the path's new content and
    /// answers for it; the file is the provider's (or discarded) after.
    func commitWrite(_ file: URL, _ body: BodyFileWriter.Written, _ plan: PlannedWrite) async throws -> Response {
        do {
            try plan.ownCloud.check(body)
        } catch {
            plan.provider.discardWrite(file)
            throw error
        }
        let outcome = try await plan.provider.write(WriteRequest(
            path: itemPath, file: file, size: body.count, checksum: body.checksum,
            modified: plan.ownCloud.mtime.map { Date(timeIntervalSince1970: $0) }, conditions: plan.conditions,
            content: body.content))
        return answer(outcome, ownCloud: plan.ownCloud)
    }

    /// The answer to a write: 201 or 204 with the new ETag, or 201 naming
    /// the conflict copy that took the bytes.
    func answer(_ outcome: Provider.WriteOutcome, ownCloud: OwnCloudPut) -> Response {
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
