import AsyncHTTPClient
import DavgateTestSupport
import Foundation
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
import NIOSSL

/// A thin real HTTP client for the tests: AsyncHTTPClient trusting exactly
/// the certificate davgate made (or the cluster's proxy presents), with
/// Basic auth.
struct DAVClient: Sendable {
    let http: HTTPClient
    let base: String
    let user: String
    let password: String

    struct Reply: Sendable {
        var status: Int
        var headers: HTTPHeaders
        var body: Data
        var text: String { String(decoding: body, as: UTF8.self) }
        func header(_ name: String) -> String? { headers.first(name: name) }
    }

    init(_ server: some GatewayEndpoint, user: String = "admin", password: String? = nil) throws {
        var tls = TLSConfiguration.makeClientConfiguration()
        if server.tls {
            tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(server.certificate.path))
        }
        self.init(server, tls: tls, user: user, password: password)
    }

    /// A client with its own idea of whom to trust (a certificate renewed
    /// while the server runs).
    init(_ server: some GatewayEndpoint, tls: TLSConfiguration, user: String = "admin", password: String? = nil) {
        var configuration = HTTPClient.Configuration(tlsConfiguration: tls)
        configuration.redirectConfiguration = .disallow
        http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        base = server.baseURL
        self.user = user
        self.password = password ?? server.adminPassword
    }

    /// A client of Apache itself, as someone working on the upstream directly.
    /// Its idle connections are closed before Apache's own keep-alive
    /// timeout (5 s) closes them: a request sent on one just as Apache
    /// closed it failed with "I/O on closed channel" (LockMirrorTests, after
    /// a write-through PUT held the client idle for 5 s on a loaded machine).
    init(apache: ApacheServer) {
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool = .init(idleTimeout: .seconds(2))
        http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        base = "http://127.0.0.1:\(apache.port)"
        user = ApacheServer.user
        password = ApacheServer.password
    }

    func shutdown() async throws { try await http.shutdown() }

    @discardableResult
    func send(_ method: String, _ path: String, headers: [(String, String)] = [], body: String? = nil, bodyData: Data? = nil, auth: Bool = true) async throws -> Reply {
        var request = HTTPClientRequest(url: base + path)
        request.method = HTTPMethod(rawValue: method)
        if auth {
            request.headers.add(name: "Authorization", value: "Basic " + Data("\(user):\(password)".utf8).base64EncodedString())
        }
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let body { request.body = .bytes(ByteBuffer(string: body)) }
        if let bodyData { request.body = .bytes(ByteBuffer(data: bodyData)) }
        let response = try await http.execute(request, timeout: .seconds(60))
        let collected = try await response.body.collect(upTo: 256 << 20)
        return Reply(status: Int(response.status.code), headers: response.headers, body: Data(buffer: collected))
    }
}
