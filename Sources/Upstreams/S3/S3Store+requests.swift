import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import ProviderCore

extension S3Store {
    /// What a request carries, made afresh for each attempt so a retry
    /// sends the whole body again.
    enum Body: Sendable {
        case none
        /// A small document (DeleteObjects, CompleteMultipartUpload), signed by its hash.
        case bytes(ByteBuffer)
        /// Part of a local file, streamed and sent with an unsigned payload.
        case file(ReadOnlyFile, Range<Int64>, UploadProgress?)
    }

    /// The key of an item: the prefix, then the names joined by `/`.
    func key(_ path: ItemPath) throws -> String {
        for name in path {
            // The provider refuses such names first; this is the last line of defence.
            guard !name.isEmpty, name != ".", name != "..", !name.contains("/"), !name.contains("\0") else {
                throw UpstreamError.io("invalid name \(name.debugDescription)")
            }
        }
        return prefix + path.joined(separator: "/")
    }

    /// The key prefix of a folder's members: `prefix/a/b/`, or the prefix itself for the root.
    func folderPrefix(_ folder: ItemPath) throws -> String {
        folder.isEmpty ? prefix : try key(folder) + "/"
    }

    /// The key of a folder's marker.
    func markerKey(_ folder: ItemPath) throws -> String {
        try folderPrefix(folder) + (folderMarkers == .hidden ? Self.hiddenMarker : "")
    }

    /// The request path for a key (nil: the bucket itself), each segment
    /// encoded once as SigV4 signs it.
    func requestPath(_ key: String?) -> String {
        let encodedKey = key.map { $0.split(separator: "/", omittingEmptySubsequences: false).map { S3Signer.encode(String($0)) }.joined(separator: "/") }
        switch (pathStyle, encodedKey) {
        case (true, let encodedKey?): return "/\(S3Signer.encode(bucket))/\(encodedKey)"
        case (true, nil): return "/\(S3Signer.encode(bucket))"
        case (false, let encodedKey?): return "/\(encodedKey)"
        case (false, nil): return "/"
        }
    }

    /// Signs and sends one request, retrying `SlowDown`, 500, 502, 503 and
    /// 504 with exponential back-off and jitter (S3 asks for exactly that),
    /// and returns the first other answer with its body still to be read.
    func execute(_ method: HTTPMethod, key: String?, query: [(name: String, value: String?)] = [],
                 headers: [(name: String, value: String)] = [], body: Body = .none,
                 deadline: NIODeadline? = nil) async throws -> HTTPClientResponse {
        var delay = retry.firstDelay
        for attempt in 1...retry.attempts {
            let request = signedRequest(method, key: key, query: query, headers: headers, body: body)
            let response: HTTPClientResponse
            do {
                response = try await client.execute(request, deadline: deadline ?? headDeadline)
            } catch {
                throw HTTPUpstream.transportError(error)
            }
            let status = Int(response.status.code)
            guard Self.retryable(status), attempt < retry.attempts else { return response }
            await HTTPUpstream.discard(response.body)
            try await Task.sleep(for: delay * Double.random(in: 0.5...1.0))
            delay = min(delay * 2, retry.maxDelay)
        }
        preconditionFailure("the last attempt returns")
    }

    static func retryable(_ status: Int) -> Bool {
        status == 500 || status == 502 || status == 503 || status == 504
    }

    /// Sends a request whose answer matters by its status and headers; the
    /// body is read and dropped (on a 2xx) or read as S3's error document.
    @discardableResult
    func send(_ method: HTTPMethod, key: String?, query: [(name: String, value: String?)] = [],
              headers: [(name: String, value: String)] = [], body: Body = .none, operation: Operation,
              deadline: NIODeadline? = nil) async throws -> HTTPHeaders {
        let response = try await execute(method, key: key, query: query, headers: headers, body: body, deadline: deadline)
        try await check(response, operation: operation)
        await HTTPUpstream.discard(response.body)
        return response.headers
    }

    /// Throws the mapped error for a status outside 2xx, reading S3's error document.
    func check(_ response: HTTPClientResponse, operation: Operation) async throws {
        let status = Int(response.status.code)
        guard !(200..<300).contains(status) else { return }
        let document = await S3ErrorDocument.read(response.body)
        throw error(status: status, code: document?.code, message: document?.message, operation: operation)
    }

    /// Sends a request and reads its whole (small, XML) answer.
    func document(_ method: HTTPMethod, key: String?, query: [(name: String, value: String?)] = [],
                  headers: [(name: String, value: String)] = [], body: Body = .none,
                  operation: Operation) async throws -> ByteBuffer {
        let response = try await execute(method, key: key, query: query, headers: headers, body: body)
        try await check(response, operation: operation)
        do {
            return try await response.body.collect(upTo: S3Listing.maxPageBytes)
        } catch {
            throw HTTPUpstream.transportError(error)
        }
    }

    /// When the head of an answer must have arrived.
    var headDeadline: NIODeadline {
        .now() + TimeAmount(timeouts.connect) + TimeAmount(timeouts.read)
    }

    func signedRequest(_ method: HTTPMethod, key: String?, query: [(name: String, value: String?)],
                       headers: [(name: String, value: String)], body: Body) -> HTTPClientRequest {
        var signable = S3Signer.Request(method: method.rawValue, path: requestPath(key), query: query,
                                        headers: [("host", host)] + headers, payloadHash: S3Signer.emptyPayload)
        var length: Int64 = 0
        switch body {
        case .none: break
        case .bytes(let buffer):
            signable.payloadHash = S3Signer.payloadHash(Data(buffer.readableBytesView))
            length = Int64(buffer.readableBytes)
        case .file(_, let range, _):
            signable.payloadHash = S3Signer.unsignedPayload
            length = Int64(range.count)
        }
        let queryString = signable.queryString
        var request = HTTPClientRequest(url: origin + signable.path + (queryString.isEmpty ? "" : "?" + queryString))
        request.method = method
        for (name, value) in signable.headers { request.headers.add(name: name, value: value) }
        for (name, value) in signer.sign(signable, at: Date()) { request.headers.add(name: name, value: value) }
        request.headers.add(name: "User-Agent", value: "davgate")
        if let tlsConfiguration, origin.hasPrefix("https:") { request.tlsConfiguration = tlsConfiguration }
        switch body {
        case .none:
            if method == .PUT || method == .POST { request.headers.add(name: "Content-Length", value: "0") }
        case .bytes(let buffer):
            request.body = .bytes(buffer)
        case .file(let file, let range, let progress):
            request.body = .stream(FileChunks(file: file, range: range, progress: progress), length: .known(length))
        }
        return request
    }
}
