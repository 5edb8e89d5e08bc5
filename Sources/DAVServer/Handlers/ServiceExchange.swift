import DAVProtocol
import DAVXML
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import ProviderCore

/// davgate's own pages under `/.davgate/` (no domain can be named so: domain
/// names never start with a dot): `metrics` in Prometheus' text format,
/// `status` for people and `status.json` for `davgate status` and scripts.
/// Only for signed-in users; a user sees only the domains they may use.
struct ServiceExchange {
    static let folder = ".davgate"

    let request: Request
    let context: DAVRequestContext
    let settings: DAVServerSettings
    let user: String
    let path: DAVPath

    func respond() async throws -> Response {
        let page = path.segments.dropFirst()
        if page.first == "evict" {
            return try await evict(Array(page.dropFirst()))
        }
        if page.first == VersionsExchange.page {
            return try await VersionsExchange(request: request, context: context, settings: settings, user: user, target: Array(page.dropFirst())).respond()
        }
        if page.first == TrashExchange.page {
            return try await TrashExchange(request: request, context: context, settings: settings, user: user, target: Array(page.dropFirst())).respond()
        }
        guard request.method == .get || request.method == .head else {
            var error = DAVError(.methodNotAllowed, "\(path.href(collection: false)) only answers GET and HEAD")
            error.headers[.allow] = "GET, HEAD"
            throw error
        }
        var response: Response
        switch page.count == 1 ? page.first! : "" {
        case "metrics":
            guard let metrics = settings.metricsText else {
                throw DAVError(.notFound, "metrics are not collected by this server")
            }
            response = DAVExchange.response(.ok, body: metrics(), contentType: "text/plain; version=0.0.4; charset=utf-8")
        case "status.json":
            let json = String(decoding: try ServerStatus.encoder().encode(try await status()), as: UTF8.self) + "\n"
            response = DAVExchange.response(.ok, body: json, contentType: "application/json")
        case "status":
            response = DAVExchange.response(.ok, body: StatusPage.html(try await status()), contentType: "text/html; charset=utf-8")
        default:
            throw DAVError(.notFound, "no page \(path.href(collection: false)); try /.davgate/status, /.davgate/status.json or /.davgate/metrics")
        }
        response.headers[.cacheControl] = "no-store"
        if request.method == .head { response.body = .init() }
        return response
    }

    /// `POST /.davgate/evict/DOMAIN/PATH`: the content of a file, or of every
    /// file below a folder, back to placeholders now (`davgate evict`).
    /// Eager, locked and currently read files are left alone, and counted.
    private func evict(_ target: [String]) async throws -> Response {
        guard request.method == .post else {
            var error = DAVError(.methodNotAllowed, "evicting takes a POST")
            error.headers[.allow] = "POST"
            throw error
        }
        guard let domain = target.first, let provider = settings.domains[domain],
              let permission = settings.permission(of: user, in: domain) else {
            throw DAVError(.notFound, "no domain named \((target.first ?? "").debugDescription); use /.davgate/evict/DOMAIN/PATH")
        }
        guard permission == .readWrite else { throw DAVError(.forbidden, "\(user) may only read in \(domain)") }
        let report = try await provider.evict(at: Array(target.dropFirst()))
        let json = String(decoding: try ServerStatus.encoder().encode(report), as: UTF8.self) + "\n"
        return DAVExchange.response(.ok, body: json, contentType: "application/json")
    }

    /// The server and the domains this user may see.
    func status() async throws -> ServerStatus {
        var domains: [DomainStatus] = []
        for name in settings.domains.keys.sorted() where settings.permission(of: user, in: name) != nil {
            domains.append(try await settings.domains[name]!.status())
        }
        let instances = try await settings.instances?().map { instance in
            var instance = instance
            instance.answering = instance.id == settings.instanceID
            return instance
        }
        return ServerStatus(startedAt: settings.startedAt, uptimeSeconds: Int(Date().timeIntervalSince(settings.startedAt)), domains: domains,
                            instances: instances)
    }
}

/// What `/.davgate/status.json` answers (and `davgate status` reads back).
public struct ServerStatus: Codable, Sendable {
    public var startedAt: Date
    public var uptimeSeconds: Int
    public var domains: [DomainStatus]
    /// With a shared index, every instance on it; absent otherwise.
    public var instances: [InstanceStatus]?

    /// The coders of the JSON form: ISO 8601 dates, snake_case keys.
    public static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.keyEncodingStrategy = .convertToSnakeCase
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        return encoder
    }

    public static func decoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return decoder
    }
}
