import DAVProtocol
import DAVXML
import HTTPTypes

import ProviderCore

/// A request that ends in an error status, with the RFC 4918 section 16
/// precondition or postcondition code when one applies, and a message that
/// says what happened and what to do. The responder renders it as a DAV
/// error body and logs it once.
struct DAVError: Error {
    var status: HTTPResponse.Status
    var condition: XMLName?
    var message: String
    /// Extra elements inside the condition (e.g. the href of a lock root).
    var conditionBody: String?
    var headers: HTTPFields = [:]
    /// Expected in normal operation (the credential-less first request of
    /// every client): logged at debug, not info.
    var routine = false

    init(_ status: HTTPResponse.Status, _ message: String, condition: XMLName? = nil, conditionBody: String? = nil) {
        self.status = status
        self.message = message
        self.condition = condition
        self.conditionBody = conditionBody
    }

    static func badRequest(_ message: String) -> DAVError { DAVError(.badRequest, message) }

    /// 423 naming the lock that was not submitted (RFC 4918 section 16,
    /// `lock-token-submitted`).
    static func locked(rootHref: String) -> DAVError {
        DAVError(.init(code: 423, reasonPhrase: "Locked"), "the resource is locked; submit the lock token in an If header",
                 condition: .dav("lock-token-submitted"), conditionBody: "<D:href>\(XMLEscaping.text(rootHref))</D:href>")
    }

    static let preconditionFailed = DAVError(.preconditionFailed, "a precondition (If, If-Match, If-None-Match or If-Unmodified-Since) is not met")

    /// A name the upstream cannot hold: 414 when the request URI names it
    /// too long, 400 for a control character or when it came in a
    /// Destination header (the URI itself was fine), 403 for the name of
    /// davgate's trash. The condition, in
    /// davgate's namespace, says which limit.
    static func nameRefused(_ violation: NameViolation, inDestination: Bool) -> DAVError {
        let status: HTTPResponse.Status
        switch violation {
        case .controlCharacter: status = .badRequest
        case .nameTooLong, .pathTooLong: status = inDestination ? .badRequest : .uriTooLong
        case .reserved: status = .forbidden
        }
        return DAVError(status, violation.description, condition: XMLName(DAVNamespace.davgate, violation.condition))
    }

    /// Maps provider failures to the status a WebDAV client expects.
    /// - Parameter mount: the prefix of the URL tree the request came in
    ///   by (Nextcloud's files tree), so that a lock's root is named where
    ///   the client can find it.
    init(_ error: ProviderError, mount: String = "") {
        switch error {
        case .notFound: self.init(.notFound, "no such resource")
        case .parentMissing: self.init(.conflict, "the parent collection does not exist; create it first (MKCOL)")
        case .exists: self.init(.preconditionFailed, "the destination exists and Overwrite is F")
        case .wrongKind: self.init(.methodNotAllowed, "not allowed on this kind of resource")
        case .overlapping: self.init(.forbidden, "source and destination overlap")
        case .local(let m): self.init(.internalServerError, "local storage failed: \(m)")
        case .indexUnavailable:
            self.init(.serviceUnavailable, "\(error.description); try again shortly")
            headers[.retryAfter] = "5"
        case .nameRefused(let violation):
            self = DAVError.nameRefused(violation, inDestination: false)
        case .locked(let domain, let root, let isFolder):
            self = DAVError.locked(rootHref: mount + DAVPath(segments: [domain] + root).href(collection: isFolder))
        case .conditionChanged, .stagedUploadStale:
            self.init(.preconditionFailed, error.description)
        case .rangeNotSatisfiable(let size):
            self.init(.rangeNotSatisfiable, error.description)
            headers[.contentRange] = "bytes */\(size)"
        case .stagedUploadMissing:
            self.init(.rangeNotSatisfiable, error.description)
            headers[.init("Upload-Offset")!] = "0"
        case .patchNeedsCondition:
            self.init(.init(code: 428, reasonPhrase: "Precondition Required"), error.description)
            headers[.init("Upload-Offset")!] = "0"
        case .piecesNeedOneInstance:
            self.init(.notImplemented, error.description)
        case .dirtyBudgetExceeded, .localNoSpace:
            self.init(.init(code: 507, reasonPhrase: "Insufficient Storage"), error.description)
        case .upstream(let u):
            switch u {
            case .noSpace: self.init(.init(code: 507, reasonPhrase: "Insufficient Storage"), u.description)
            case .unavailable, .unreachable:
                self.init(.serviceUnavailable, "\(u.description); try again later")
                headers[.retryAfter] = "30"
            case .timeout: self.init(.gatewayTimeout, u.description)
            case .notFound: self.init(.notFound, u.description)
            case .exists, .versionMismatch: self.init(.preconditionFailed, u.description)
            case .conflict: self.init(.conflict, u.description)
            case .locked: self.init(.init(code: 423, reasonPhrase: "Locked"), "\(u.description); try again once they are done")
            case .forbidden, .io: self.init(.badGateway, u.description)
            }
        }
    }
}
