import DAVProtocol
import DAVXML
import HTTPTypes
import Hummingbird
import Logging
import ProviderCore

extension DAVExchange {
    /// LOCK (RFC 4918 section 9.10): a new lock from a lockinfo body, or a
    /// refresh from an empty body with the token in `If`. A lock on an
    /// unmapped URL creates an empty resource and answers 201 (davfs2 and
    /// Windows create files this way).
    func lock() async throws -> Response {
        let provider = try requireDomain()
        let timeout = LockTimeout.seconds(from: headers[.init("Timeout")!], default: settings.lockTimeoutDefault, maximum: settings.lockTimeoutMax)
        guard let body = try await readXMLBody() else {
            return try await refreshLock(provider, timeout: timeout)
        }
        let info: LockRequest
        do {
            info = try LockRequest.parse(body)
        } catch {
            throw DAVError.badRequest("invalid LOCK body: \(error)")
        }
        let depth = try parseDepth() ?? .infinity
        guard depth != .one else { throw DAVError.badRequest("LOCK takes Depth 0 or infinity") }
        let submitted = try await evaluateIfHeader()
        var created = false
        let item: Item
        let lock: Lock
        do {
            let existing = try await provider.item(at: itemPath)
            if existing == nil {
                guard !itemPath.isEmpty, let parent = try await provider.item(at: Array(itemPath.dropLast())), parent.isFolder else {
                    throw DAVError(ProviderError.parentMissing)
                }
            }
            if existing == nil,
               let new = try await provider.createLockedEmptyFile(at: itemPath, conditions: writeConditions(submitted: submitted, judging: nil),
                                                                  depthInfinity: depth == .infinity, exclusive: info.scope == .exclusive,
                                                                  ownerXML: info.owner?.serialized(), principal: user, timeout: timeout) {
                (item, lock, created) = (new.item, new.lock, true)
            } else {
                // There, or made by a LOCK racing this one: lock what is there.
                if let existing { item = existing } else { item = try await requireItem(provider) }
                lock = try await provider.createLock(on: item, depthInfinity: depth == .infinity, exclusive: info.scope == .exclusive,
                                                     ownerXML: info.owner?.serialized(), principal: user, timeout: timeout)
            }
        } catch LockError.conflict(let held) {
            let rootHref = try await lockRootHref(held, provider: provider)
            var error = DAVError.locked(rootHref: rootHref)
            error.condition = .dav("no-conflicting-lock")
            error.message = "a conflicting lock is held on \(rootHref)"
            throw error
        }
        context.logger.info("LOCK \(path.href(collection: item.isFolder)) by \(user): \(lock.token), \(lock.exclusive ? "exclusive" : "shared"), timeout \(timeout)s")
        var fields = HTTPFields()
        fields[.init("Lock-Token")!] = "<\(lock.token)>"
        let info2 = try await activeLockInfo(lock, provider: provider)
        return Self.response(created ? .created : .ok, headers: fields, body: LockXML.lockResponseBody(info2))
    }

    /// Refresh (RFC 4918 section 9.10.2): the token in `If` must name a lock
    /// that covers the request URI and belongs to this user.
    private func refreshLock(_ provider: Provider, timeout: Int) async throws -> Response {
        let item = try await requireItem(provider)
        guard headers[.init("If")!] != nil else {
            throw DAVError.badRequest("LOCK without a body refreshes a lock and needs its token in an If header")
        }
        let submitted = try await evaluateIfHeader()
        let covering = try await provider.locks(covering: item)
        guard let lock = covering.first(where: { submitted.contains($0.token) && $0.principal == user }),
              let refreshed = try await provider.refreshLock(token: lock.token, timeout: timeout)
        else {
            throw DAVError(.preconditionFailed, "no lock of yours with the submitted token covers this resource",
                           condition: .dav("lock-token-matches-request-uri"))
        }
        var fields = HTTPFields()
        fields[.init("Lock-Token")!] = "<\(refreshed.token)>"
        let info = try await activeLockInfo(refreshed, provider: provider)
        return Self.response(.ok, headers: fields, body: LockXML.lockResponseBody(info))
    }

    /// UNLOCK (RFC 4918 section 9.11): the token must name a lock covering
    /// the request URI (409 otherwise) and belong to this user (403).
    func unlock() async throws -> Response {
        let provider = try requireDomain()
        guard let token = LockTokenHeader.parse(headers[.init("Lock-Token")!]) else {
            throw DAVError.badRequest("UNLOCK needs a Lock-Token header")
        }
        let item = try await requireItem(provider)
        guard let lock = try await provider.locks(covering: item).first(where: { $0.token == token }) else {
            throw DAVError(.conflict, "the lock token does not name a lock on this resource",
                           condition: .dav("lock-token-matches-request-uri"))
        }
        guard lock.principal == user else {
            throw DAVError(.forbidden, "the lock belongs to another user")
        }
        try await provider.unlock(token: token)
        context.logger.info("UNLOCK \(path.href(collection: item.isFolder)) by \(user): \(token)")
        return Self.response(.noContent)
    }
}
