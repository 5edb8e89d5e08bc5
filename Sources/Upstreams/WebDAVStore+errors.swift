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

    /// A failure below HTTP in `UpstreamError` terms: timeouts, TLS, and
    /// anything that kept a connection from being made or kept.
    /// Cancellation stays cancellation.
    static func transportError(_ error: any Error) -> any Error {
        switch error {
        case is UpstreamError, is CancellationError:
            return error
        case let error as HTTPClientError:
            switch error {
            case .readTimeout, .writeTimeout, .connectTimeout, .deadlineExceeded, .tlsHandshakeTimeout,
                 .getConnectionFromPoolTimeout:
                return UpstreamError.timeout
            case .cancelled, .requestStreamCancelled:
                return CancellationError()
            case .remoteConnectionClosed:
                return UpstreamError.unavailable("the upstream closed the connection")
            default:
                return UpstreamError.unavailable("\(error)")
            }
        case is NIOSSLError, is BoringSSLError, is NIOSSLExtraError:
            return UpstreamError.forbidden("TLS: \(error)")
        case let error as ChannelError:
            if case .connectTimeout = error { return UpstreamError.timeout }
            // A pooled connection the upstream had closed: this write never left.
            if case .ioOnClosedChannel = error { return UpstreamError.unreachable("\(error)") }
            return UpstreamError.unavailable("\(error)")
        case let error as IOError where [ECONNREFUSED, EHOSTUNREACH, ENETUNREACH].contains(error.errnoCode):
            return UpstreamError.unreachable(error.description)
        case let error as IOError:
            return UpstreamError.unavailable(error.description)
        case let error as NIOConnectionError:
            // Refused, or no address answered: the request never left.
            return UpstreamError.unreachable("\(error)")
        default:
            return UpstreamError.unavailable("\(error)")
        }
    }
}
