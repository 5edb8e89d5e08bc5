import CoreMetrics
import DAVProtocol
import Foundation
import HTTPTypes
import Hummingbird
import ProviderCore

/// Uploads in pieces: `Content-Range` PUTs (Apache's and lighttpd's partial
/// PUT), the offset a resuming client asks for, and SabreDAV's `PATCH`.
/// The provider stages the pieces (`Provider+stagedUploads`).
extension DAVExchange {
    static let uploadOffset = HTTPField.Name("Upload-Offset")!
    static let uploadLength = HTTPField.Name("Upload-Length")!

    /// One piece of a PUT with `Content-Range: bytes A-B/N`, its checks
    /// already passed. 202 with `Upload-Offset` (the bytes present from the
    /// start without a gap) while the file is not whole; the answer of a
    /// PUT once the piece completes it. A body cut short keeps what arrived.
    func putPiece(_ piece: ContentRange, provider: Provider, conditions: WriteConditions,
                  ownCloud: OwnCloudPut) async throws -> Response {
        let file = provider.newWriteFile()
        let started = ContinuousClock.now
        let body: BodyFileWriter.Written
        do {
            body = try await BodyFileWriter.write(request.body, to: file, keepingPartial: true, hashing: false)
        } catch let cut as BodyFileWriter.Cut {
            guard cut.received <= piece.count else {
                provider.discardWrite(file)
                throw DAVError.badRequest("the body ran past the \(piece.count) bytes of its Content-Range; nothing was stored")
            }
            // What arrived is a piece of its own; it may even complete the upload.
            let outcome = try await provider.writePiece(file, count: cut.received, at: piece.first, total: piece.total,
                                                        path: itemPath, conditions: conditions)
            if case .written(let written) = outcome { return answer(written, ownCloud: ownCloud) }
            throw DAVError(.badRequest, "the request body ended after \(cut.received) of \(piece.count) bytes (\(cut.cause)); those were kept, HEAD tells the offset to resume from")
        } catch {
            throw bodyFailed(error, file: file, provider: provider)
        }
        guard body.count == piece.count else {
            provider.discardWrite(file)
            throw DAVError.badRequest("Content-Range announces \(piece.count) bytes but the body held \(body.count); nothing was stored")
        }
        let outcome = try await provider.writePiece(file, count: body.count, at: piece.first, total: piece.total,
                                                    path: itemPath, conditions: conditions)
        logTransfer(context, "PUT", path.href(collection: false) + " bytes \(piece.first)-\(piece.last)/\(piece.total)",
                    bytes: body.count, since: started)
        ServerMetrics.bytesReceived.increment(by: body.count)
        switch outcome {
        case .staged(let staged):
            var fields = HTTPFields()
            fields[Self.uploadOffset] = String(staged.offset)
            fields[Self.uploadLength] = String(staged.total)
            return Self.response(.accepted, headers: fields)
        case .written(let written):
            return answer(written, ownCloud: ownCloud)
        }
    }

    /// HEAD, telling a client with an unfinished upload of this path where
    /// to resume (`Upload-Offset`, `Upload-Length`): on the answer for the
    /// old content, or on the 404 of a file not there yet.
    func head() async throws -> Response {
        let staged = provider.flatMap { itemPath.isEmpty ? nil : $0.stagedUpload(at: itemPath, principal: user) }
        guard let staged else { return try await get(includeBody: false) }
        func tell(_ fields: inout HTTPFields) {
            fields[Self.uploadOffset] = String(staged.offset)
            fields[Self.uploadLength] = String(staged.total)
        }
        do {
            var response = try await get(includeBody: false)
            tell(&response.headers)
            return response
        } catch var error as DAVError {
            tell(&error.headers)
            throw error
        }
    }

    /// SabreDAV's partial update (`PATCH` with `Content-Type:
    /// application/x-sabredav-partialupdate` and `X-Update-Range`): the body
    /// is written into the existing file, which is committed whole at once;
    /// 204 with the new ETag.
    func patch() async throws -> Response {
        let provider = try requireDomain()
        guard headers[.contentType]?.lowercased().hasPrefix(UpdateRange.contentType) == true else {
            throw DAVError(.unsupportedMediaType, "PATCH takes Content-Type: \(UpdateRange.contentType) with an X-Update-Range header")
        }
        guard let raw = headers[.init("X-Update-Range")!] else {
            throw DAVError.badRequest("PATCH needs X-Update-Range: bytes=FIRST-LAST, bytes=FIRST-, bytes=-COUNT or append")
        }
        let range: UpdateRange
        do {
            range = try UpdateRange.parse(raw)
        } catch {
            throw DAVError.badRequest("invalid X-Update-Range \(raw.debugDescription); use bytes=FIRST-LAST, bytes=FIRST-, bytes=-COUNT or append")
        }
        // A file to patch, first: a request that fails without its
        // preconditions ignores them (RFC 9110 section 13.2.1), so 404
        // comes before If-Match, If and locks. Then a PUT's checks.
        let nothing = DAVError(.notFound, "no file at \(path.href(collection: false)) to patch; PUT it first")
        guard try await provider.writeTarget(itemPath, checkingUpstream: false).existing != nil else { throw nothing }
        let plan = try await planWrite(method: "PATCH")
        guard plan.existing != nil else { throw nothing }
        continueIfExpected()
        let file = provider.newWriteFile()
        let body: BodyFileWriter.Written
        do {
            body = try await BodyFileWriter.write(request.body, to: file, hashing: false)
        } catch {
            throw bodyFailed(error, file: file, provider: provider, nothing: "nothing was changed")
        }
        let position: Provider.PatchPosition
        switch range {
        case .span(let first, let last):
            guard body.count == last - first + 1 else {
                provider.discardWrite(file)
                throw DAVError.badRequest("X-Update-Range names \(last - first + 1) bytes but the body held \(body.count); nothing was changed")
            }
            position = .at(first)
        case .from(let first): position = .at(first)
        case .suffix(let count): position = .fromEnd(count)
        case .append: position = .append
        }
        guard body.count > 0 else {
            provider.discardWrite(file)
            throw DAVError.badRequest("PATCH with an empty body changes nothing")
        }
        let started = ContinuousClock.now
        let outcome = try await provider.patch(file, count: body.count, at: position, path: itemPath, conditions: plan.conditions)
        logTransfer(context, "PATCH", path.href(collection: false), bytes: body.count, since: started)
        ServerMetrics.bytesReceived.increment(by: body.count)
        return answer(outcome, ownCloud: plan.ownCloud)
    }
}
