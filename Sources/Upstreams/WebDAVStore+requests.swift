import AsyncHTTPClient
import DAVProtocol
import DAVXML
import Foundation
import NIOCore
import NIOHTTP1
import ProviderCore

extension WebDAVStore {
    /// The absolute URL of an item: the base path plus each name
    /// percent-encoded (RFC 3986 section 2.1), so a name can never add a
    /// segment or a query.
    /// - Parameter collection: adds the trailing slash a collection's URL has.
    func url(_ path: ItemPath, collection: Bool = false) throws -> String {
        for name in path {
            // The server normalises paths; this is the last line of defence
            // (".." is not percent-encoded and would climb out of the base).
            guard !name.isEmpty, name != ".", name != "..", !name.contains("/"), !name.contains("\0") else {
                throw UpstreamError.io("invalid name \(name.debugDescription)")
            }
        }
        return origin + DAVPath(segments: basePath + path).href(collection: collection || path.isEmpty)
    }

    /// A request with the credentials and the extra trust root attached.
    func request(_ method: String, _ path: ItemPath, collection: Bool = false) throws -> HTTPClientRequest {
        var request = HTTPClientRequest(url: try url(path, collection: collection))
        request.method = HTTPMethod(rawValue: method)
        if let authorization { request.headers.add(name: "Authorization", value: authorization.header) }
        request.headers.add(name: "User-Agent", value: "davgate")
        if let tlsConfiguration, origin.hasPrefix("https:") { request.tlsConfiguration = tlsConfiguration }
        return request
    }

    /// When the head of an answer without a large request body must have
    /// arrived. The idle read timeout covers the bytes after it; this also
    /// bounds a shared client that has no read timeout of its own.
    var headDeadline: NIODeadline {
        .now() + TimeAmount(timeouts.connect) + TimeAmount(timeouts.read)
    }

    /// Sends a request and returns the response with its body still to be
    /// read; transport failures come out as `UpstreamError`.
    func execute(_ request: HTTPClientRequest, deadline: NIODeadline) async throws -> HTTPClientResponse {
        do {
            return try await client.execute(request, deadline: deadline)
        } catch {
            throw HTTPUpstream.transportError(error)
        }
    }

    /// Sends a request whose answer matters only by its status (MKCOL,
    /// DELETE, MOVE, COPY, PUT); the body is read and dropped so the
    /// connection goes back to the pool.
    /// - Returns: the 2xx status.
    /// - Throws: the mapped error for any other status, including a 207 that
    ///   reports members the server could not handle.
    @discardableResult
    func send(_ request: HTTPClientRequest, operation: Operation,
              deadline: NIODeadline? = nil) async throws -> (status: Int, headers: HTTPHeaders) {
        let response = try await execute(request, deadline: deadline ?? headDeadline)
        let status = Int(response.status.code)
        if status == 207 {
            // Multi-status on DELETE, COPY or MOVE lists only the failures (RFC 4918 section 9.6.1).
            let failed = await Self.multistatusFailure(response.body)
            throw failed.map { Self.error(status: $0, operation: operation, credentials: credentialsSource) }
                ?? UpstreamError.io("\(request.method.rawValue) answered 207 Multi-Status")
        }
        await HTTPUpstream.discard(response.body)
        guard (200..<300).contains(status) else {
            if (300..<400).contains(status) {
                let location = response.headers.first(name: "Location") ?? "elsewhere"
                throw UpstreamError.io("HTTP \(status): the upstream redirects to \(location); configure that URL")
            }
            if status == 414, let refused = learnNameLimit(from: request, operation: operation) { throw refused }
            throw Self.error(status: status, operation: operation, credentials: credentialsSource)
        }
        return (status, response.headers)
    }

    /// The first failing status in a multistatus body, if it can be read.
    static func multistatusFailure(_ body: HTTPClientResponse.Body) async -> Int? {
        guard let buffer = try? await body.collect(upTo: 1 << 20),
              let root = try? XMLDocumentParser.parse(Array(buffer.readableBytesView), limits: PropfindAnswer.limits)
        else { return nil }
        return PropfindAnswer.statuses(root).first { $0 >= 400 }
    }
}
