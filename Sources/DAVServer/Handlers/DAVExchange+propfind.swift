import DAVProtocol
import DAVXML
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

import ProviderCore

extension DAVExchange {
    /// PROPFIND (RFC 4918 section 9.1). Everything comes from the index, never
    /// from content. A Depth 0 answer (or a file's) goes whole, with its
    /// length; a deeper one streams: the target first, then members page
    /// by page, so memory does not grow with the size of a folder.
    func propfind() async throws -> Response {
        let depth = try parseDepth() ?? .infinity
        if depth == .infinity && !settings.propfindInfinity {
            throw DAVError(.forbidden, "PROPFIND with Depth: infinity is disabled on this server; use Depth: 1",
                           condition: .dav("propfind-finite-depth"))
        }
        let requestBody = try await readXMLBody()
        let query: PropfindRequest
        do {
            query = try PropfindRequest.parse(requestBody)
        } catch {
            throw DAVError.badRequest("invalid PROPFIND body: \(error)")
        }
        guard let provider else { return try await serverRootListing(depth: depth, query: query) }
        let target = try await requireItem(provider)
        let quota = query.names(LiveProperty.quotaAvailableBytes.name, LiveProperty.quotaUsedBytes.name)
            ? try? await provider.quota() : nil
        let hasLocks = try await provider.hasLiveLocks()
        // The target's own listing comes before the 207's head: when the
        // upstream refuses or is down, the client gets that status (502,
        // 503), not a multistatus cut short.
        if depth != .zero && target.isFolder {
            guard try await provider.refreshIfStale(target) else { throw DAVError(.notFound, "no such resource: gone upstream") }
        }
        var first = XMLBytes(capacity: 4096)
        first.append(Multistatus.header)
        try await renderPage([(target, itemPath)], provider: provider, query: query, quota: quota, hasLocks: hasLocks, into: &first)
        var fields = HTTPFields()
        fields[.contentType] = "application/xml; charset=utf-8"
        guard depth != .zero && target.isFolder else {
            // One response: whole, with its length, sent with the head in
            // one write (a streamed body flushed the head on its own and
            // went chunked).
            first.append(Multistatus.footer)
            return Response(status: Self.multiStatus, headers: fields, body: ResponseBody(byteBuffer: ByteBuffer(xml: first)))
        }
        let head = ByteBuffer(xml: first)
        let exchange = self
        let body = ResponseBody { writer in
            // One buffer, kept, sent in pieces of about `streamPiece`: a
            // page rendered whole (500 members, 450 KB) took a fresh mmap'd
            // buffer twice per page, and faulting their pages in was a
            // tenth of a PROPFIND of 10,000 members.
            var text = XMLBytes(capacity: Self.streamPiece + 16 * 1024)
            head.withUnsafeReadableBytes { text.append($0) }
            var folders: [(Item, ItemPath)] = [(target, exchange.itemPath)]
            while !folders.isEmpty {
                let (folder, folderPath) = folders.removeFirst()
                if folder.id != target.id {
                    guard try await provider.refreshIfStale(folder) else { continue }
                }
                var after: String?
                while true {
                    let page = try await provider.children(of: folder, after: after, limit: 500)
                    guard let last = page.last else { break }
                    after = last.name
                    let members = page.map { ($0, folderPath + [$0.name]) }
                    try await exchange.renderPage(members, provider: provider, query: query, quota: quota, hasLocks: hasLocks,
                                                  into: &text) { text in
                        guard text.count >= Self.streamPiece else { return }
                        try await writer.write(ByteBuffer(xml: text))
                        text.removeAll()
                    }
                    if depth == .infinity {
                        folders += members.filter { $0.0.isFolder }
                    }
                }
            }
            text.append(Multistatus.footer)
            try await writer.write(ByteBuffer(xml: text))
            try await writer.finish(nil)
        }
        return Response(status: Self.multiStatus, headers: fields, body: body)
    }

    /// How much of a streamed multistatus is sent at once: under 64 KiB, so
    /// that each piece's buffer comes from malloc's heap and not a new mmap.
    static let streamPiece = 48 * 1024

    /// Appends `<D:response>` elements for a page of items to `out`, with
    /// their dead properties and locks fetched in as few queries as
    /// possible; `flush` may send and empty `out` after each member.
    func renderPage(_ items: [(Item, ItemPath)], provider: Provider, query: PropfindRequest, quota: UpstreamQuota?, hasLocks: Bool,
                    into out: inout XMLBytes, flush: (inout XMLBytes) async throws -> Void = { _ in }) async throws {
        let wantsState = query.names(LiveProperty.state.name, LiveProperty.bytesCached.name)
        let needsDead: Bool
        switch query {
        case .prop(let names): needsDead = names.contains { LiveProperty.byName[$0] == nil }
        default: needsDead = true
        }
        let dead = needsDead ? try await provider.deadProperties(of: items.map(\.0)) : [:]
        var context = PropertyContext(quota: quota)
        if query.names(LiveProperty.syncToken.name) {
            context.syncToken = try await provider.currentSyncToken().description
        }
        if wantsState {
            for item in items.map(\.0) where !item.isFolder {
                let state = provider.state(of: item)
                context.contents[item.id] = (state.name.rawValue, state.bytesLocal(size: item.size))
            }
        }
        if query.names(LiveProperty.contentPolicy.name) {
            context.policies = try await provider.contentPolicies(of: items.map(\.0))
        }
        if hasLocks && query.names(LiveProperty.lockdiscovery.name) {
            for (item, _) in items {
                context.locks[item.id] = try await activeLocks(covering: item, provider: provider)
            }
        }
        // Every member written into one string (about 900 bytes each in
        // allprop): no string per property and no array per member.
        // Members of one folder share its href: it is encoded once, each
        // member adding its own name.
        var folder: (path: ArraySlice<String>, href: String)?
        for (item, path) in items {
            var href: String
            if let name = path.last, item.id != 0 {
                let parent = path.dropLast()
                if folder?.path != parent { folder = (parent, self.href(Array(parent), isFolder: true)) }
                href = folder!.href
                DAVPath.appendSegment(name, collection: item.isFolder, to: &href)
            } else {
                href = self.href(of: item, at: path)
            }
            renderResponse(item, path: path, href: href, query: query, dead: dead[item.id] ?? [], context: context, into: &out)
            try await flush(&out)
        }
    }

    func renderResponse(_ item: Item, path: ItemPath, query: PropfindRequest, dead: [DeadProperty], context: PropertyContext) -> String {
        var out = XMLBytes()
        renderResponse(item, path: path, href: href(of: item, at: path), query: query, dead: dead, context: context, into: &out)
        return out.string
    }

    /// The href a multistatus names `item` by (the server root's is the mount's).
    private func href(of item: Item, at path: ItemPath) -> String {
        item.id == 0 ? mount + "/" : href(path, isFolder: item.isFolder)
    }

    func renderResponse(_ item: Item, path: ItemPath, href: String, query: PropfindRequest, dead: [DeadProperty],
                        context: PropertyContext, into out: inout XMLBytes) {
        let displayName = path.last ?? (item.id == 0 ? "" : domainName)
        Multistatus.openResponse(href: href, into: &out)
        switch query {
        case .propname:
            Multistatus.openPropstat(into: &out)
            for live in LiveProperty.allCases where live.applies(to: item) { out.append(live.tags.empty) }
            for property in dead { out.append(PropertyXML.empty(XMLName(property.namespace, property.name))) }
            Multistatus.closePropstat(status: 200, into: &out)
        case .allprop(let include):
            Multistatus.openPropstat(into: &out)
            if include.isEmpty {
                for live in LiveProperty.allprop { _ = live.render(item, displayName: displayName, context: context, into: &out) }
            } else {
                for live in LiveProperty.allCases where live.inAllprop || include.contains(live.name) {
                    _ = live.render(item, displayName: displayName, context: context, into: &out)
                }
            }
            for property in dead { out.append(property.xml) }
            Multistatus.closePropstat(status: 200, into: &out)
        case .prop(let names):
            // The found properties go straight into `out`, their propstat
            // taken back if none is; the missing ones (rare) gather aside.
            let mark = out.count
            Multistatus.openPropstat(into: &out)
            let opened = out.count
            var missing = ""
            for name in names {
                if let live = LiveProperty.byName[name] {
                    if !live.render(item, displayName: displayName, context: context, into: &out) {
                        missing += live.tags.empty
                    }
                } else if let property = dead.first(where: { $0.namespace == name.namespace && $0.name == name.local }) {
                    out.append(property.xml)
                } else {
                    missing += PropertyXML.empty(name)
                }
            }
            if out.count == opened {
                out.truncate(to: mark)
            } else {
                Multistatus.closePropstat(status: 200, into: &out)
            }
            if !missing.isEmpty {
                Multistatus.openPropstat(into: &out)
                out.append(missing)
                Multistatus.closePropstat(status: 404, into: &out)
            }
        }
        out.append(Multistatus.closeResponse)
    }

    /// The locks that apply to an item, as lockdiscovery renders them.
    func activeLocks(covering item: Item, provider: Provider) async throws -> [ActiveLockInfo] {
        var result: [ActiveLockInfo] = []
        for lock in try await provider.locks(covering: item) {
            result.append(try await activeLockInfo(lock, provider: provider))
        }
        return result
    }

    func activeLockInfo(_ lock: Lock, provider: Provider) async throws -> ActiveLockInfo {
        ActiveLockInfo(token: lock.token, scope: lock.exclusive ? .exclusive : .shared, depthInfinity: lock.depthInfinity,
                       ownerXML: lock.ownerXML, timeoutSeconds: lock.remaining(), rootHref: try await lockRootHref(lock, provider: provider))
    }

    /// PROPFIND on `/`: the domains, as collections.
    private func serverRootListing(depth: Depth, query: PropfindRequest) async throws -> Response {
        let now = Date()
        let root = Item(id: 0, domain: "", parentID: nil, name: "", kind: .folder, size: 0, modified: now, created: now,
                        contentVersion: 1, upstreamVersion: nil, cachedVersion: nil, executable: false, listedAt: nil)
        var body = Multistatus.header + renderResponse(root, path: [], query: query, dead: [], context: PropertyContext())
        if depth != .zero {
            for name in visibleDomains {
                let domainRoot = try await settings.domains[name]!.root()
                let exchange = DAVExchange(request: request, context: context, settings: settings, user: user,
                                           path: DAVPath(segments: [name]), trailingSlash: true, provider: settings.domains[name],
                                           permission: settings.permission(of: user, in: name) ?? .readOnly)
                body += exchange.renderResponse(domainRoot, path: [], query: query, dead: [], context: PropertyContext())
            }
        }
        body += Multistatus.footer
        return Self.response(Self.multiStatus, body: body)
    }

    /// Depth (RFC 4918 section 10.2); nil when absent, 400 when unknown.
    func parseDepth() throws -> Depth? {
        do {
            return try Depth.parse(headers[.init("Depth")!])
        } catch {
            throw DAVError.badRequest("invalid Depth header; use 0, 1 or infinity")
        }
    }
}

extension PropfindRequest {
    /// Whether the response will include any of these properties.
    func names(_ candidates: XMLName...) -> Bool {
        switch self {
        case .propname: false
        case .allprop(let include): candidates.contains { include.contains($0) || LiveProperty.byName[$0]?.inAllprop == true }
        case .prop(let names): candidates.contains { names.contains($0) }
        }
    }
}
