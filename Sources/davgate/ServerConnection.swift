import ArgumentParser
import AsyncHTTPClient
import Foundation
import GatewaySetup
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
import NIOSSL
import Upstreams

/// How the commands that talk to a running server (status, pin, unpin,
/// evict, watch) reach it: the config's listen address or `--url`, trusting
/// davgate's own certificate, as USER with the password from standard input.
struct ServerOptions: ParsableArguments {
    @OptionGroup var options: ConfigOption
    @Option(help: "The server's base URL; defaults to the config's listen address.") var url: String?
    @Option(help: "The user to ask as.") var user: String = "admin"
    @Flag(help: "Read the password from standard input.") var passwordStdin = false
}

/// One connection's worth of requests to a running davgate.
struct ServerConnection {
    let base: String
    let user: String
    let password: String
    let client: HTTPClient

    var authorization: String { "Basic " + Data("\(user):\(password)".utf8).base64EncodedString() }

    /// Connects, runs `body`, and shuts the client down whatever happens.
    static func with<T>(_ options: ServerOptions, _ body: (ServerConnection) async throws -> T) async throws -> T {
        let config = try loadConfig(options.options.config)
        guard options.passwordStdin, let password = readLine(strippingNewline: true), !password.isEmpty else {
            throw ValidationError("pass --password-stdin and write the password to standard input")
        }
        var tls = TLSConfiguration.makeClientConfiguration()
        if config.server.tls, FileManager.default.fileExists(atPath: config.server.certificate.path) {
            // davgate's own certificate is the one to trust, not the system's roots.
            tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(config.server.certificate.path))
        }
        let connection = ServerConnection(
            base: (options.url ?? defaultURL(config.server)).trimmingCharacters(in: CharacterSet(charactersIn: "/")),
            user: options.user, password: password,
            client: HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(tlsConfiguration: tls)))
        let outcome: Result<T, any Error>
        do {
            outcome = .success(try await body(connection))
        } catch {
            outcome = .failure(error)
        }
        try await connection.client.shutdown()
        return try outcome.get()
    }

    /// The server's collection at `href` (percent-encoded) as the WebDAV
    /// store davgate reads its upstreams with, on this connection's client
    /// (which trusts davgate's certificate): `davgate watch` follows a
    /// feed through the same code as a davgate in front of davgate.
    func store(at href: String) throws -> WebDAVStore {
        guard let url = URL(string: base + href) else { throw ValidationError("not a URL: \(base + href)") }
        return try WebDAVStore(baseURL: url, credentials: (user, password), extraTrustRoot: nil, httpClient: client)
    }

    private static func defaultURL(_ server: ServerSettings) -> String {
        let host = server.host == "0.0.0.0" || server.host == "::" ? "127.0.0.1" : server.host
        return "\(server.tls ? "https" : "http")://\(host.contains(":") ? "[\(host)]" : host):\(server.port)"
    }

    /// Sends a request to `path` (already percent-encoded); returns the status
    /// and body, or throws with what the server said when the status is not
    /// one of `expecting`.
    func send(_ method: String, _ path: String, headers: [(String, String)] = [], body: String? = nil,
              expecting: Set<UInt> = [200]) async throws -> Data {
        var request = HTTPClientRequest(url: base + path)
        request.method = HTTPMethod(rawValue: method)
        request.headers.add(name: "Authorization", value: authorization)
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let body { request.body = .bytes(ByteBuffer(string: body)) }
        let response: HTTPClientResponse
        do {
            response = try await client.execute(request, timeout: .seconds(60))
        } catch {
            throw ValidationError("cannot reach davgate at \(base): \(error); is it running? (davgate serve)")
        }
        let data = Data(buffer: try await response.body.collect(upTo: 64 << 20))
        guard expecting.contains(response.status.code) else {
            throw ValidationError("\(method) \(base)\(path) answered \(response.status.code): \(String(decoding: data, as: UTF8.self))")
        }
        return data
    }
}
