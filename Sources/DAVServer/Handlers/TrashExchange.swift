import DAVProtocol
import DAVXML
import Foundation
import HTTPTypes
import Hummingbird
import ProviderCore

/// A domain's trash over WebDAV, in Nextcloud's trash-bin shape so tools
/// written for it work: `PROPFIND /.davgate/trash/DOMAIN/` lists the
/// entries with `nc:trashbin-filename`, `-original-location` and
/// `-deletion-time`; `MOVE` of an entry to `.../DOMAIN/restore/ENTRY`
/// restores it where it was (to `/DOMAIN/PATH`, there); `DELETE` of an
/// entry purges it, of the trash itself empties it.
struct TrashExchange {
    static let page = "trash"
    static let allowed = "OPTIONS, PROPFIND, MOVE, DELETE"

    let request: Request
    let context: DAVRequestContext
    let settings: DAVServerSettings
    let user: String
    /// The segments after `/.davgate/trash/`: the domain, then the entry.
    let target: [String]

    func respond() async throws -> Response {
        let (domain, provider, permission) = try ServiceView.domain(target, settings: settings, user: user, usage: "/.davgate/trash/DOMAIN/")
        guard provider.trashPolicy != nil else {
            throw DAVError(.notFound, "the domain \(domain) keeps no trash (trash = false)")
        }
        let entry = target.count > 1 ? target[1] : nil
        guard target.count <= 2 else { throw DAVError(.notFound, "no such trash entry; list /.davgate/trash/\(domain)/") }
        switch request.method.rawValue {
        case "OPTIONS":
            return ServiceView.options(allowing: Self.allowed)
        case "PROPFIND":
            return try await list(provider, domain: domain, entry: entry)
        case "MOVE", "DELETE":
            guard permission == .readWrite else { throw DAVError(.forbidden, "\(user) may only read in \(domain)") }
            if request.method.rawValue == "DELETE" {
                let purged = try await purge(provider, entry: entry)
                return DAVExchange.response(.noContent, headers: purged)
            }
            guard let entry else { throw DAVError(.forbidden, "only an entry of the trash can be moved (restored)") }
            return try await restore(provider, domain: domain, entry: entry)
        default:
            var error = DAVError(.methodNotAllowed, "the trash answers \(Self.allowed)")
            error.headers[.allow] = Self.allowed
            throw error
        }
    }

    private func list(_ provider: Provider, domain: String, entry name: String?) async throws -> Response {
        let depth = (try? Depth.parse(request.headers[.init("Depth")!])) ?? nil
        let folder = DAVPath(segments: [ServiceExchange.folder, Self.page, domain])
        if let name {
            guard let entry = try await provider.trashEntry(named: name) else {
                throw DAVError(.notFound, "no entry \(name.debugDescription) in the trash of \(domain)")
            }
            return ServiceView.multistatus(TrashListing.response(entry, in: folder))
        }
        var body = ServiceView.collection(folder, displayName: "Trash of \(domain)")
        if depth != .zero {
            for entry in try await provider.trashEntries() { body += TrashListing.response(entry, in: folder) }
        }
        return ServiceView.multistatus(body)
    }

    /// Destination `/.davgate/trash/DOMAIN/restore/ENTRY` puts it back where
    /// it was; `/DOMAIN/PATH` puts it there. Never over anything.
    private func restore(_ provider: Provider, domain: String, entry: String) async throws -> Response {
        let destination = try ServiceView.destination(of: request, usage: "/.davgate/trash/\(domain)/restore/\(entry) or a path in /\(domain)/")
        let target: ItemPath?
        if destination.segments == [ServiceExchange.folder, Self.page, domain, "restore", entry] {
            target = nil
        } else if destination.segments.first == domain, destination.segments.count > 1 {
            target = Array(destination.segments.dropFirst())
        } else {
            throw DAVError(.forbidden, "Destination \(destination) is neither /.davgate/trash/\(domain)/restore/\(entry) nor a path in /\(domain)/")
        }
        guard let original = try await provider.trashEntry(named: entry)?.originalPath else {
            throw DAVError(.notFound, "no entry \(entry.debugDescription) in the trash of \(domain)")
        }
        let conditions = try await ServiceView.writeConditions(request, context: context, settings: settings, user: user,
                                                               at: target ?? original, in: domain, provider: provider)
        do {
            _ = try await provider.restoreFromTrash(entry, to: target, conditions: conditions)
        } catch ProviderError.notFound {
            throw DAVError(.notFound, "no entry \(entry.debugDescription) in the trash of \(domain)")
        } catch ProviderError.exists {
            throw DAVError(.preconditionFailed, "something is at the restore's destination now; restore to another path (Destination: /\(domain)/PATH)")
        } catch ProviderError.nameRefused(let violation) {
            throw DAVError.nameRefused(violation, inDestination: true)
        }
        return DAVExchange.response(.created)
    }

    /// One entry, or the whole trash; the count purged in `X-Purged`.
    private func purge(_ provider: Provider, entry: String?) async throws -> HTTPFields {
        let purged: [String]
        do {
            purged = try await provider.purgeTrash(entry.map { [$0] })
        } catch ProviderError.notFound {
            throw DAVError(.notFound, "no entry \((entry ?? "").debugDescription) in the trash")
        }
        var fields = HTTPFields()
        fields[.init("X-Purged")!] = String(purged.count)
        return fields
    }
}
