import DAVProtocol
import DAVXML
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOHTTP1
import ProviderCore
import Users

/// The one responder: authenticates, normalises the path once, finds the
/// domain, and hands the request to the method's handler. Every failure
/// becomes a precise status with a DAV error body and one log line.
struct DAVResponder: HTTPResponder {
    typealias Context = DAVRequestContext
    let settings: DAVServerSettings
    let secure: Bool
    let throttle = LoginThrottle()

    static let allowedMethods = "OPTIONS, GET, HEAD, PUT, PATCH, DELETE, PROPFIND, PROPPATCH, MKCOL, COPY, MOVE, LOCK, UNLOCK, REPORT"
    /// What a read-only user may do (issue 3: every write method is 403).
    static let readOnlyMethods = "OPTIONS, GET, HEAD, PROPFIND, REPORT"
    static let writeMethods: Set<String> = ["PUT", "PATCH", "DELETE", "PROPPATCH", "MKCOL", "COPY", "MOVE", "LOCK", "UNLOCK"]
    /// The longest request target answered (414 beyond, RFC 9110 section
    /// 15.5.15): room for a 4096-byte file system path fully percent-encoded.
    /// A target too long for the decoder's head limit gets 431 from
    /// `RequestHeadGuard` before it gets here.
    static let maxTargetBytes = 16 * 1024

    /// Runs the request on its connection's event loop (`LoopTaskExecutor`):
    /// what it awaits from other threads comes back there, where its
    /// response is written.
    func respond(to request: Request, context: Context) async throws -> Response {
        try await withTaskExecutorPreference(LoopTaskExecutor.of(context.channel.eventLoop)) {
            try await respondOnLoop(to: request, context: context)
        }
    }

    private func respondOnLoop(to request: Request, context: Context) async throws -> Response {
        ServerActivity.requestBegins()
        let method = request.method.rawValue
        let target = request.head.path ?? "/"
        let start = ContinuousClock.now
        var user = ""
        let response: Response
        do {
            response = try await route(request, context: context, user: &user)
            context.logger.debug("\(method) \(target) -> \(response.status.code)")
        } catch let error as DAVError {
            response = failure(error, method: method, target: target, context: context)
        } catch let error as ProviderError {
            response = failure(DAVError(error), method: method, target: target, context: context)
        } catch let error as UpstreamError {
            response = failure(DAVError(ProviderError.upstream(error)), method: method, target: target, context: context)
        } catch let error as HTTPParserError {
            // The body's framing broke (a bad chunk size, the connection
            // ending inside the body): the client's fault, not ours.
            response = failure(DAVError.badRequest("the request body could not be read (\(error)); nothing was changed"),
                               method: method, target: target, context: context)
        } catch {
            response = failure(DAVError(.internalServerError, "internal error: \(error)"), method: method, target: target, context: context)
        }
        ServerMetrics.request(method: method, status: response.status.code)
        guard settings.live.accessLog else { return response }
        return AccessLog(method: method, target: target, start: start, context: context).attach(to: response, user: user)
    }

    private func failure(_ error: DAVError, method: String, target: String, context: Context) -> Response {
        let level: Logger.Level = error.status.code >= 500 ? .error : error.routine ? .debug : .info
        context.logger.log(level: level, "\(method) \(target) -> \(error.status.code): \(error.message)",
                           metadata: ["client": "\(context.remoteAddress)"])
        var headers = error.headers
        headers[.contentType] = "application/xml; charset=utf-8"
        if error.status == .unauthorized {
            headers[.wwwAuthenticate] = "Basic realm=\"\(settings.realm)\", charset=\"UTF-8\""
        }
        var buffer = ByteBuffer()
        buffer.writeString(error.renderedBody())
        headers[.contentLength] = String(buffer.readableBytes)
        return Response(status: error.status, headers: headers, body: .init(byteBuffer: buffer))
    }

    /// - Parameter user: set to the authenticated user as soon as there is
    ///   one, for the access log (also when the request then fails).
    private func route(_ request: Request, context: Context, user authenticated: inout String) async throws -> Response {
        let target = request.head.path ?? "/"
        guard target.utf8.count <= Self.maxTargetBytes else {
            throw DAVError(.init(code: 414, reasonPhrase: "URI Too Long"),
                           "the request target is \(target.utf8.count) bytes, over the limit of \(Self.maxTargetBytes)")
        }
        let parsed: (path: DAVPath, trailingSlash: Bool)
        do {
            parsed = try DAVPath.parse(requestTarget: target)
        } catch {
            throw DAVError.badRequest("invalid request path (\(error)): paths may not contain '..', '.', encoded slashes or NUL")
        }
        // OPTIONS reveals nothing but capabilities; gvfs probes the server
        // root with it before it has credentials. With credentials, its
        // Allow header tells a read-only user what they may do.
        let user: String
        if request.method == .options {
            user = request.headers[.authorization] == nil ? "" : ((try? await authenticate(request, context: context)) ?? "")
        } else {
            user = try await authenticate(request, context: context)
        }
        authenticated = user
        var davPath = parsed.path, mount = ""
        if let nextcloud = NextcloudPath(parsed.path) {
            guard nextcloud.user == user || (user.isEmpty && request.method == .options) else {
                throw DAVError(.forbidden, "\(parsed.path) is the tree of the user \(nextcloud.user.debugDescription); signed in as \(user.debugDescription), use /remote.php/dav/files/\(user)/")
            }
            switch nextcloud {
            case .uploads(_, let rest):
                return try await ChunkedUploadExchange(request: request, context: context, settings: settings, user: user,
                                                       target: rest).respond()
            case .files(_, let rest):
                davPath = rest
                mount = NextcloudPath.filesMount(of: nextcloud.user)
            }
        }
        if davPath.segments.first == ServiceExchange.folder {
            return try await ServiceExchange(request: request, context: context, settings: settings, user: user, path: davPath).respond()
        }
        var provider: Provider?
        var permission = DomainPermission.readWrite
        if let domain = davPath.segments.first {
            // A domain the user may not see does not exist for them.
            guard let p = settings.domains[domain], let granted = user.isEmpty ? .readWrite : settings.permission(of: user, in: domain) else {
                throw DAVError(.notFound, "no domain named \(domain.debugDescription) on this server")
            }
            provider = p
            permission = granted
        }
        if permission == .readOnly && Self.writeMethods.contains(request.method.rawValue) {
            var error = DAVError(.forbidden, "\(user) may only read in \(davPath.segments.first ?? "")")
            error.headers[.allow] = Self.readOnlyMethods
            throw error
        }
        // The domain's trash folder upstream: hidden from reads (404 from
        // the index, which never holds it), refused to writes with the reason.
        if davPath.segments.count > 1, davPath.segments[1] == TrashLayout.reservedName, Self.writeMethods.contains(request.method.rawValue) {
            throw DAVError.nameRefused(.reserved(name: TrashLayout.reservedName), inDestination: false)
        }
        let exchange = DAVExchange(request: request, context: context, settings: settings, user: user,
                                   path: davPath, trailingSlash: parsed.trailingSlash, provider: provider,
                                   permission: permission, mount: mount)
        return try await exchange.mounted { try await dispatch(exchange, method: request.method) }
    }

    private func dispatch(_ exchange: DAVExchange, method: HTTPRequest.Method) async throws -> Response {
        switch method.rawValue {
        case "OPTIONS": return exchange.options()
        case "PROPFIND": return try await exchange.propfind()
        case "PROPPATCH": return try await exchange.proppatch()
        case "MKCOL": return try await exchange.mkcol()
        case "GET": return try await exchange.get(includeBody: true)
        case "HEAD": return try await exchange.head()
        case "PUT": return try await exchange.put()
        case "PATCH": return try await exchange.patch()
        case "DELETE": return try await exchange.delete()
        case "COPY": return try await exchange.copyOrMove(isMove: false)
        case "MOVE": return try await exchange.copyOrMove(isMove: true)
        case "LOCK": return try await exchange.lock()
        case "UNLOCK": return try await exchange.unlock()
        case "REPORT": return try await exchange.report()
        default:
            var error = DAVError(.methodNotAllowed, "method \(method.rawValue) is not supported")
            error.headers[.allow] = Self.allowedMethods
            throw error
        }
    }

    /// Basic authentication; failures are slowed by the throttle and logged
    /// once with the client's address (never with the password).
    private func authenticate(_ request: Request, context: Context) async throws -> String {
        if !secure && !settings.allowBasicOverHTTP {
            throw DAVError(.forbidden, "Basic authentication over plain HTTP is disabled; connect with https, or set allow_basic_over_http = true behind a TLS proxy")
        }
        guard let credentials = BasicCredentials(header: request.headers[.authorization]) else {
            var challenge = DAVError(.unauthorized, "authentication required")
            challenge.routine = true
            throw challenge
        }
        let address = context.remoteAddress
        guard await settings.users.verify(credentials.user, password: credentials.password) else {
            let delay = throttle.failed(user: credentials.user, address: address)
            try? await Task.sleep(for: delay)
            let seconds = Double(delay.components.seconds) + Double(delay.components.attoseconds) / 1e18
            throw DAVError(.unauthorized, "login failed for \(credentials.user.debugDescription) (answer delayed \(seconds) seconds against guessing)")
        }
        throttle.succeeded(user: credentials.user, address: address)
        return credentials.user
    }
}

extension DAVError {
    /// The `DAV:error` body (RFC 4918 section 16): the condition when there
    /// is one, then the message in davgate's namespace.
    func renderedBody() -> String {
        var body = "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<D:error xmlns:D=\"DAV:\" xmlns:g=\"\(DAVNamespace.davgate)\">"
        if let condition {
            // The two namespaces this body declares: RFC 4918's conditions, and davgate's own.
            let tag = (condition.namespace == DAVNamespace.davgate ? "g:" : "D:") + condition.local
            if let conditionBody {
                body += "<\(tag)>\(conditionBody)</\(tag)>"
            } else {
                body += "<\(tag)/>"
            }
        }
        body += "<g:message>\(XMLEscaping.text(message))</g:message></D:error>\n"
        return body
    }
}

/// Namespaces davgate answers in besides DAV:.
enum DAVNamespace {
    static let davgate = Provider.namespace
    static let apache = "http://apache.org/dav/props/"
    static let ownCloud = "http://owncloud.org/ns"
}
