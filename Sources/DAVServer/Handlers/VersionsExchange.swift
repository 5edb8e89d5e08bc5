import DAVProtocol
import DAVXML
import Foundation
import HTTPTypes
import Hummingbird
import ProviderCore

#if canImport(Glibc)
import Glibc
#endif

/// A file's earlier contents over WebDAV: `PROPFIND
/// /.davgate/versions/DOMAIN/PATH` lists them (newest first) as members
/// `.../PATH/ID`, with sizes and the time each was superseded; `GET` of a
/// member reads it; `COPY` of one onto the file (or any path in the
/// domain) restores it as a PUT would, so what it replaces becomes a
/// version in turn; `DELETE` of one removes it. The file's conflict copies
/// are members too, marked `g:conflict-copy` with their own href: the other
/// side of a conflict is found with the file's history.
struct VersionsExchange {
    static let page = "versions"
    static let allowed = "OPTIONS, PROPFIND, GET, HEAD, COPY, DELETE"

    let request: Request
    let context: DAVRequestContext
    let settings: DAVServerSettings
    let user: String
    /// The segments after `/.davgate/versions/`: the domain, the file's path, maybe a version.
    let target: [String]

    func respond() async throws -> Response {
        let (domain, provider, permission) = try ServiceView.domain(target, settings: settings, user: user, usage: "/.davgate/versions/DOMAIN/PATH")
        // A domain that keeps no versions still lists a file's conflict copies.
        let (path, version) = try await split(Array(target.dropFirst()), provider)
        guard !path.isEmpty else { throw DAVError(.notFound, "name a file: /.davgate/versions/\(domain)/PATH") }
        let method = request.method.rawValue
        if ["COPY", "DELETE"].contains(method), permission != .readWrite {
            throw DAVError(.forbidden, "\(user) may only read in \(domain)")
        }
        switch (method, version) {
        case ("OPTIONS", _):
            return ServiceView.options(allowing: Self.allowed)
        case ("PROPFIND", _):
            return try await list(provider, domain: domain, path: path, only: version)
        case ("GET", let version?), ("HEAD", let version?):
            return try await read(provider, path: path, version: version)
        case ("COPY", let version?):
            return try await restore(provider, domain: domain, path: path, version: version)
        case ("DELETE", let version?):
            // A conflict copy is a file of the domain: its locks and
            // conditions count. A stored version is no resource of it.
            let conditions = version.isConflictCopy
                ? try await ServiceView.writeConditions(request, context: context, settings: settings, user: user,
                                                        at: Array(path.dropLast()) + [version.id], in: domain, provider: provider)
                : .unconditional
            try await provider.deleteVersion(of: path, id: version.id, conditions: conditions)
            return DAVExchange.response(.noContent)
        case ("GET", nil), ("HEAD", nil), ("COPY", nil), ("DELETE", nil):
            throw DAVError(.notFound, "no such version of /\(domain)/\(path.dropLast().joined(separator: "/")); list them with PROPFIND /.davgate/versions/\(domain)/PATH")
        default:
            var error = DAVError(.methodNotAllowed, "the versions of a file answer PROPFIND; a version answers GET, COPY and DELETE")
            error.headers[.allow] = Self.allowed
            throw error
        }
    }

    /// `PATH/ID` names a version when the file at PATH has one with that
    /// id (a stored version's digits, a conflict copy's name); otherwise
    /// the whole is the file's path (a file named by digits).
    private func split(_ segments: [String], _ provider: Provider) async throws -> (ItemPath, FileVersion?) {
        guard segments.count > 1, let last = segments.last, FileVersion.mayBeID(last) else { return (segments, nil) }
        let path = Array(segments.dropLast())
        if let version = try await provider.versions(of: path).first(where: { $0.id == last }) { return (path, version) }
        return (segments, nil)
    }

    private func list(_ provider: Provider, domain: String, path: ItemPath, only: FileVersion?) async throws -> Response {
        let folder = DAVPath(segments: [ServiceExchange.folder, Self.page, domain] + path)
        let depth = (try? Depth.parse(request.headers[.init("Depth")!])) ?? nil
        if let only { return ServiceView.multistatus(VersionListing.response(only, in: folder)) }
        var body = ServiceView.collection(folder, displayName: "Versions of \(path.last ?? "")")
        if depth != .zero {
            for version in try await provider.versions(of: path) { body += VersionListing.response(version, in: folder) }
        }
        return ServiceView.multistatus(body)
    }

    /// The version is fetched whole into a temporary file, then streamed
    /// from it (unlinked at once; the open descriptor keeps it).
    private func read(_ provider: Provider, path: ItemPath, version: FileVersion) async throws -> Response {
        var fields = HTTPFields()
        fields[.contentType] = "application/octet-stream"
        fields[.lastModified] = HTTPDate.rfc1123(version.savedAt)
        fields[.cacheControl] = "no-store"
        if request.method == .head {
            fields[.contentLength] = String(version.size)
            return Response(status: .ok, headers: fields, body: .init())
        }
        let file = try await provider.versionContents(of: path, id: version.id)
        defer { provider.discardWrite(file) }
        let open = try OpenFile(path: file.path)
        fields[.contentLength] = String(open.size)
        guard open.size > 0 else { return Response(status: .ok, headers: fields, body: .init()) }
        return Response(status: .ok, headers: fields, body: try open.body(range: Int64(0)...(open.size - 1), connection: context.channel.eventLoop))
    }

    /// Destination: the file itself or another path in the domain.
    private func restore(_ provider: Provider, domain: String, path: ItemPath, version: FileVersion) async throws -> Response {
        let destination = try ServiceView.destination(of: request, usage: "/\(domain)/\(path.joined(separator: "/")) or another path in /\(domain)/")
        guard destination.segments.first == domain, destination.segments.count > 1 else {
            throw DAVError(.forbidden, "Destination \(destination) is outside the domain \(domain); restore within it")
        }
        let target = Array(destination.segments.dropFirst())
        let overwrite: Bool
        do {
            overwrite = try Overwrite.parse(request.headers[.init("Overwrite")!])
        } catch {
            throw DAVError.badRequest("invalid Overwrite header; use T or F")
        }
        if !overwrite, try await provider.item(at: target) != nil {
            throw DAVError(.preconditionFailed, "the destination exists and Overwrite is F")
        }
        var conditions = try await ServiceView.writeConditions(request, context: context, settings: settings, user: user,
                                                               at: target, in: domain, provider: provider)
        // Still nothing there when the restore commits.
        if !overwrite { conditions.judgedAgainst = .absent }
        let outcome: Provider.WriteOutcome
        do {
            outcome = try await provider.restoreVersion(of: path, id: version.id, to: target, conditions: conditions)
        } catch let error as ProviderError {
            if case .nameRefused(let violation) = error { throw DAVError.nameRefused(violation, inDestination: true) }
            throw DAVError(error)
        }
        return DAVExchange.response(outcome.created ? .created : .noContent)
    }
}
