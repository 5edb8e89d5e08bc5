import DAVProtocol
import Foundation
import HTTPTypes
import ProviderCore

extension DAVExchange {
    /// Evaluates the `If` header (RFC 4918 section 10.4) against the current
    /// state of every resource it names. Returns the lock tokens the client
    /// submitted; throws 412 when the header is false, 400 when malformed.
    func evaluateIfHeader() async throws -> Set<String> {
        guard let raw = headers[.init("If")!] else { return [] }
        var header: IfHeader
        do {
            header = try IfHeader.parse(raw)
        } catch {
            throw DAVError.badRequest("malformed If header: \(raw)")
        }
        // Tagged in Nextcloud's tree, the resources are named with its prefix.
        for index in header.lists.indices { header.lists[index].resource = header.lists[index].resource.map(unmounted) }
        var states: [DAVPath: ResourceState] = [:]
        for resource in Set(header.lists.map { $0.resource ?? path }) {
            states[resource] = try await state(of: resource)
        }
        let satisfied = header.evaluate(requestPath: path) { states[$0] ?? ResourceState(etag: nil, lockTokens: []) }
        guard satisfied else {
            throw DAVError.preconditionFailed
        }
        return header.submittedTokens(for: path, requestPath: path)
    }

    /// The ETag and covering lock tokens of a resource named in an If header.
    /// Nothing at the path yet, it has no ETag, and the locks covering it
    /// are its folder's of depth infinity: a new member joins them (RFC 4918
    /// section 6.1), so a holder's `If: (<token>)` on a PUT of a new file
    /// there matches.
    private func state(of resource: DAVPath) async throws -> ResourceState {
        let nothing = ResourceState(etag: nil, lockTokens: [])
        guard let domain = resource.segments.first, let provider = settings.domains[domain] else { return nothing }
        let path = Array(resource.segments.dropFirst())
        if let item = try await provider.item(at: path) {
            let locks = try await provider.locks(covering: item)
            return ResourceState(etag: item.etag, lockTokens: Set(locks.map(\.token)))
        }
        guard !path.isEmpty, let folder = try await provider.item(at: Array(path.dropLast())), folder.isFolder else { return nothing }
        let locks = try await provider.locks(covering: folder).filter(\.depthInfinity)
        return ResourceState(etag: nil, lockTokens: Set(locks.map(\.token)))
    }

    /// RFC 4918 section 7: a write to a locked resource must submit a token
    /// of each lock covering it, and only the lock's owner may use a token.
    /// The provider's check, which a write repeats when it commits.
    func requireLockTokens(for item: Item, provider: Provider, submitted: Set<String>, includeDescendants: Bool = false) async throws {
        // Locks only: the request's ETag conditions were judged by `evaluateIfHeader`.
        try await provider.check(WriteConditions(principal: user, tokens: submitted), target: item, parent: nil,
                                 descendants: includeDescendants)
    }

    /// What this request holds (its user, the tokens it submitted) and, when
    /// it sent conditions (If-Match, If-None-Match, If-Unmodified-Since, If),
    /// the content they were judged against: `judging` as it is now.
    func writeConditions(submitted: Set<String>, judging item: Item?) -> WriteConditions {
        let conditional = Self.sendsConditions(headers)
        return WriteConditions(principal: user, tokens: submitted, judgedAgainst: conditional ? WriteConditions.judged(item) : nil)
    }

    /// Whether a request sent conditions to judge: If-Match, If-None-Match,
    /// If-Unmodified-Since or If.
    static func sendsConditions(_ headers: HTTPFields) -> Bool {
        [HTTPField.Name.ifMatch, .ifNoneMatch, .ifUnmodifiedSince, .init("If")!].contains { headers[$0] != nil }
    }

    /// RFC 9110 section 13: If-Match, If-None-Match and If-Unmodified-Since
    /// for state-changing methods. `item` is nil when nothing is there yet;
    /// `newForIfNoneMatch` makes `If-None-Match: *` treat it as absent (the
    /// empty resource a LOCK created, which davfs2 then PUTs with it).
    func checkWriteConditions(_ item: Item?, newForIfNoneMatch: Bool = false) throws {
        let etag = item?.etag
        if let ifMatch = EntityTagCondition.parse(headers[.ifMatch]) {
            let ok: Bool
            switch ifMatch {
            case .any: ok = item != nil
            case .tags: ok = ifMatch.matchesStrong(etag)
            }
            guard ok else { throw DAVError.preconditionFailed }
        }
        if let ifNoneMatch = EntityTagCondition.parse(headers[.ifNoneMatch]) {
            let matches: Bool
            switch ifNoneMatch {
            case .any: matches = item != nil && !newForIfNoneMatch
            case .tags: matches = ifNoneMatch.matchesWeak(etag)
            }
            guard !matches else { throw DAVError.preconditionFailed }
        }
        if let item, let since = headers[.ifUnmodifiedSince].flatMap(HTTPDate.parse),
           item.modified.timeIntervalSince1970.rounded(.down) > since.timeIntervalSince1970 {
            throw DAVError.preconditionFailed
        }
    }
}
