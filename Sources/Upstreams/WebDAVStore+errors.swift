import AsyncHTTPClient
import DAVProtocol
import NIOCore
import NIOPosix
import NIOSSL
import ProviderCore

extension WebDAVStore {
    /// What a request was for; some statuses mean different things by operation.
    enum Operation: Sendable {
        case read, upload, makeFolder, delete, moveOrCopy, lock
    }

    /// An upstream HTTP status in `UpstreamError` terms (RFC 9110 section 15,
    /// RFC 4918 section 11), which the server maps on to its own client:
    /// refused credentials become 502 naming the vault entry, 507 stays 507.
    /// `credentials` names where the password came from, for the message.
    static func error(status: Int, operation: Operation, credentials: String? = nil) -> UpstreamError {
        let reason = "HTTP \(status) \(StatusLine.reason(status))"
        switch status {
        case 401, 403:
            let check = credentials.map { "check \($0)" } ?? "the domain has no credentials; add a vault entry and name it in the domain's credentials"
            return .forbidden("\(reason) from the upstream: \(check)")
        case 404, 410:
            return .notFound
        case 405 where operation == .makeFolder:
            // MKCOL on an existing resource (RFC 4918 section 9.3.1).
            return .exists
        case 409 where operation == .makeFolder:
            // MKCOL without its parent (section 9.3.1); the contract says .notFound,
            // as mkdir(2) says ENOENT.
            return .notFound
        case 409:
            return .conflict
        case 412 where operation == .moveOrCopy:
            // Overwrite: F and the destination exists (section 10.6).
            return .exists
        case 412:
            return .versionMismatch
        case 423:
            return .locked
        case 507:
            return .noSpace
        case 500...599:
            return .unavailable(reason)
        default:
            return .io(reason)
        }
    }
}
