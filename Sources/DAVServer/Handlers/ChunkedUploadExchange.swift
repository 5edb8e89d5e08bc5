import CoreMetrics
import DAVProtocol
import DAVXML
import Foundation
import HTTPTypes
import Hummingbird
import ProviderCore

/// Nextcloud's chunked upload, as its clients and rclone's `nextcloud`
/// vendor send large files: `MKCOL /remote.php/dav/uploads/USER/ID`, one
/// `PUT .../ID/CHUNK` per chunk (each fsynced before it is answered, so a
/// cut connection costs that chunk only), then `MOVE .../ID/.file` with the
/// file's `Destination`, which joins the chunks and writes the file through
/// the ordinary write path (locks, conditions, `Overwrite`, `X-OC-Mtime`,
/// `OC-Checksum`, `OC-Total-Length` checked). `PROPFIND` lists the chunks a
/// client already sent; `DELETE` drops the upload. Folders left behind
/// expire (`ChunkFolders`).
struct ChunkedUploadExchange {
    static let allowed = "OPTIONS, MKCOL, PUT, PROPFIND, MOVE, DELETE"

    let request: Request
    let context: DAVRequestContext
    let settings: DAVServerSettings
    let user: String
    /// The segments after `/remote.php/dav/uploads/USER/`: the upload id,
    /// then a chunk's name or `.file`.
    let target: [String]

    /// Nextcloud's `OC-Total-Length`: the whole file's length.
    private var announcedTotal: Int64? { request.headers[.init("OC-Total-Length")!].flatMap(Int64.init) }

    private var here: DAVPath { DAVPath(segments: NextcloudPath.prefix + ["uploads", user] + target) }

    func respond() async throws -> Response {
        guard let store = settings.chunkUploads else {
            throw DAVError(.notFound, "this server keeps no chunked uploads; send the file with one PUT")
        }
        if request.method == .options { return ServiceView.options(allowing: Self.allowed) }
        try? await blocking { store.sweepIfDue() }
        // Disk on the gateway is for those who may write somewhere.
        if ["MKCOL", "PUT"].contains(request.method.rawValue),
           !settings.domains.keys.contains(where: { settings.permission(of: user, in: $0) == .readWrite }) {
            throw DAVError(.forbidden, "\(user) may write in no domain, so has no uploads")
        }
        guard let id = target.first else {
            guard request.method.rawValue == "PROPFIND" else { throw notAllowed("the uploads folder itself") }
            return ServiceView.multistatus(ServiceView.collection(here, displayName: "uploads"))
        }
        guard target.count <= 2 else { throw DAVError(.notFound, "upload folders hold chunks only") }
        let folder = store.folder(user: user, id: id)
        let member = target.count == 2 ? target[1] : nil
        switch (request.method.rawValue, member) {
        case ("MKCOL", nil):
            guard try await blocking({ try store.create(folder) }) else { throw DAVError(.methodNotAllowed, "the upload \(id) exists; DELETE it to start again") }
            if let total = announcedTotal { try store.announce(total: total, in: folder) }
            return DAVExchange.response(.created)
        case ("PUT", let name?):
            return try await putChunk(name, store: store, folder: folder)
        case ("PROPFIND", _):
            return try list(store, folder: folder, member: member)
        case ("DELETE", let name):
            guard store.exists(folder) else { throw DAVError(.notFound, "no upload \(id)") }
            if let name {
                guard ChunkFolders.isChunkName(name), unlink(folder.appendingPathComponent(name).path) == 0 else {
                    throw DAVError(.notFound, "no chunk \(name) in the upload \(id)")
                }
            } else {
                try await blocking { store.remove(folder) }
            }
            return DAVExchange.response(.noContent)
        case ("MOVE", ".file"?):
            return try await assemble(store: store, folder: folder)
        default:
            throw notAllowed(member == nil ? "an upload folder" : "a chunk")
        }
    }

    private func notAllowed(_ what: String) -> DAVError {
        var error = DAVError(.methodNotAllowed, "\(request.method.rawValue) is not allowed on \(what); chunked uploads take MKCOL, PUT of chunks, MOVE of .file, PROPFIND and DELETE")
        error.headers[.allow] = Self.allowed
        return error
    }

    private func putChunk(_ name: String, store: ChunkFolders, folder: URL) async throws -> Response {
        guard ChunkFolders.isChunkName(name) else {
            throw DAVError.badRequest("a chunk's name is its number (00001) or its byte offsets (FIRST-LAST), not \(name.debugDescription)")
        }
        guard store.exists(folder) else { throw DAVError(.conflict, "no upload \(target[0]); MKCOL it first") }
        DAVExchange.sendContinue(request, context)
        let file = folder.appendingPathComponent(".part-\(UUID().uuidString)")
        let started = ContinuousClock.now
        let body: BodyFileWriter.Written
        do {
            body = try await BodyFileWriter.write(request.body, to: file, hashing: false)
        } catch {
            if let error = error as? ProviderError { throw error }
            throw DAVError(.badRequest, "the chunk ended early (\(error)); send it again")
        }
        if let announced = request.headers[.contentLength].flatMap(Int64.init), announced != body.count {
            unlink(file.path)
            throw DAVError.badRequest("received \(body.count) bytes of a \(announced)-byte chunk; send it again")
        }
        let replaced: Bool
        do {
            replaced = try await blocking { try store.install(file, as: name, in: folder) }
        } catch {
            unlink(file.path)
            throw error
        }
        if let total = announcedTotal { try? store.announce(total: total, in: folder) }
        logTransfer(context, "PUT", here.href(collection: false), bytes: body.count, since: started)
        ServerMetrics.bytesReceived.increment(by: body.count)
        return DAVExchange.response(replaced ? .noContent : .created)
    }

    private func list(_ store: ChunkFolders, folder: URL, member: String?) throws -> Response {
        guard store.exists(folder) else { throw DAVError(.notFound, "no upload \(target[0])") }
        let chunks = store.chunks(in: folder)
        func response(_ chunk: (name: String, size: Int64)) -> String {
            let href = DAVPath(segments: NextcloudPath.prefix + ["uploads", user, target[0], chunk.name]).href(collection: false)
            return Multistatus.response(href: href, propstats: [PropStat(status: 200, properties: [
                PropertyXML.element(.dav("resourcetype"), valueXML: ""),
                PropertyXML.text(.dav("getcontentlength"), String(chunk.size)),
            ])])
        }
        if let member {
            guard let chunk = chunks.first(where: { $0.name == member }) else { throw DAVError(.notFound, "no chunk \(member)") }
            return ServiceView.multistatus(response(chunk))
        }
        let depth = request.headers[.init("Depth")!] ?? "1"
        var body = ServiceView.collection(here, displayName: target[0])
        if depth != "0" { body += chunks.map(response).joined() }
        return ServiceView.multistatus(body)
    }

    /// `MOVE .file`: the destination's checks as a PUT's, then the folder
    /// claimed (`ChunkFolders.claim`), its chunks joined into one file and
    /// written; the folder goes once the write is acknowledged, and comes
    /// back when nothing was stored.
    private func assemble(store: ChunkFolders, folder: URL) async throws -> Response {
        guard store.exists(folder) else { throw DAVError(.notFound, "no upload \(target[0]); it finished, was deleted, or expired") }
        let destination = try ServiceView.destination(of: request, usage: "the file's URL")
        if case .files(let owner, _)? = NextcloudPath(destination), owner != user {
            throw DAVError(.forbidden, "the Destination is in the files of \(owner.debugDescription)")
        }
        let path = NextcloudPath.unmounted(destination, user: user)
        let mount = path == destination ? "" : NextcloudPath.filesMount(of: user)
        let (domain, provider, permission) = try ServiceView.domain(path.segments, settings: settings, user: user,
                                                                    usage: "/remote.php/dav/files/\(user)/DOMAIN/PATH")
        guard permission == .readWrite else { throw DAVError(.forbidden, "\(user) may only read in \(domain)") }
        if path.segments.count > 1, path.segments[1] == TrashLayout.reservedName {
            throw DAVError.nameRefused(.reserved(name: TrashLayout.reservedName), inDestination: true)
        }
        let exchange = DAVExchange(request: request, context: context, settings: settings, user: user, path: path,
                                   trailingSlash: false, provider: provider, permission: permission, mount: mount)
        var plan = try await exchange.mounted { try await exchange.planWrite(method: "MOVE") }
        let overwrite: Bool
        do {
            overwrite = try Overwrite.parse(request.headers[.init("Overwrite")!])
        } catch {
            throw DAVError.badRequest("invalid Overwrite header; use T or F")
        }
        if !overwrite {
            if plan.existing != nil { throw DAVError(.preconditionFailed, "the destination exists and Overwrite is F") }
            // Still nothing there when the write commits.
            plan.conditions.judgedAgainst = .absent
        }
        guard let claimed = store.claim(folder) else {
            throw DAVError(.notFound, "no upload \(target[0]); another MOVE is joining it, or it finished")
        }
        let started = ContinuousClock.now
        let file = provider.newWriteFile()
        let chunks = store.chunks(in: claimed).count
        let response: Response
        var bytes: Int64 = 0
        do {
            let joined = try await blocking { try store.assemble(claimed, into: file) }
            bytes = joined.count
            // Announced now, or when the upload began: a missing last chunk shows.
            if let total = announcedTotal ?? store.announcedTotal(in: claimed), total != joined.count {
                throw DAVError.badRequest("the chunks hold \(joined.count) bytes but OC-Total-Length says \(total); nothing was stored")
            }
            response = try await exchange.mounted {
                try await exchange.commitWrite(file, BodyFileWriter.Written(count: joined.count, sha1: joined.sha1), plan)
            }
        } catch {
            provider.discardWrite(file)
            try? await blocking { store.release(claimed, to: folder) }
            if let error = error as? ChunkFolders.NotWhole {
                throw DAVError.badRequest("the chunks do not make one file: \(error); nothing was stored")
            }
            throw error
        }
        try? await blocking { store.remove(claimed) }
        logTransfer(context, "MOVE", exchange.href(exchange.itemPath, isFolder: false) + " from \(chunks) chunks",
                    bytes: bytes, since: started)
        return response
    }
}
