import DAVProtocol
import DAVXML
import Hummingbird
import Logging
import ProviderCore

extension DAVExchange {
    /// PROPPATCH (RFC 4918 section 9.2): all instructions apply, in order, in
    /// one transaction, or none do. Live properties are protected: touching
    /// one fails it with 403 and every other instruction with 424.
    func proppatch() async throws -> Response {
        let provider = try requireDomain()
        let item = try await requireItem(provider)
        let submitted = try await evaluateIfHeader()
        try await requireLockTokens(for: item, provider: provider, submitted: submitted)
        guard let root = try await readXMLBody() else {
            throw DAVError.badRequest("PROPPATCH needs a propertyupdate body")
        }
        let update: PropertyUpdate
        do {
            update = try PropertyUpdate.parse(root)
        } catch {
            throw DAVError.badRequest("invalid PROPPATCH body: \(error)")
        }
        var changes: [PropertyChange] = []
        var names: [XMLName] = []
        var protected: [XMLName] = []
        var invalid: [(name: XMLName, reason: String)] = []
        for instruction in update.instructions {
            switch instruction {
            case .set(let element):
                names.append(element.name)
                if element.name == LiveProperty.contentPolicy.name || element.name == Self.pinned {
                    switch Self.contentPolicy(element) {
                    case .success(let policy): changes.append(.contentPolicy(policy))
                    case .failure(let reason): invalid.append((element.name, reason.message))
                    }
                    continue
                }
                if LiveProperty.byName[element.name] != nil { protected.append(element.name) }
                changes.append(.set(DeadProperty(namespace: element.name.namespace, name: element.name.local, xml: element.serialized())))
            case .remove(let name):
                names.append(name)
                if name == LiveProperty.contentPolicy.name || name == Self.pinned {
                    changes.append(.contentPolicy(nil))
                    continue
                }
                if LiveProperty.byName[name] != nil { protected.append(name) }
                changes.append(.remove(namespace: name.namespace, name: name.local))
            }
        }
        let href = self.href(itemPath, isFolder: item.isFolder)
        let body: String
        if protected.isEmpty && invalid.isEmpty {
            try await provider.changeProperties(of: item, changes, conditions: WriteConditions(principal: user, tokens: submitted))
            body = Multistatus.response(href: href, propstats: [PropStat(status: 200, properties: names.map(PropertyXML.empty))])
        } else {
            // RFC 4918 section 9.2.1: 403 for a protected property, 409 for a
            // value the property cannot take; every other instruction 424.
            let refused = protected + invalid.map(\.name)
            let others = names.filter { !refused.contains($0) }
            var propstats: [PropStat] = []
            if !protected.isEmpty {
                propstats.append(PropStat(status: 403, properties: protected.map(PropertyXML.empty), error: .dav("cannot-modify-protected-property")))
            }
            for (name, reason) in invalid {
                propstats.append(PropStat(status: 409, properties: [PropertyXML.empty(name)], description: reason))
            }
            if !others.isEmpty { propstats.append(PropStat(status: 424, properties: others.map(PropertyXML.empty))) }
            body = Multistatus.response(href: href, propstats: propstats)
            context.logger.info("PROPPATCH \(href) refused: \((protected.map { "protected \($0)" } + invalid.map { "\($0.name): \($0.reason)" }).joined(separator: "; "))")
        }
        return Self.response(Self.multiStatus, body: Multistatus.header + body + Multistatus.footer)
    }

    /// davgate's earlier `g:pinned`, kept as another spelling of the content
    /// policy `eager` so that scripts which pin go on working.
    static let pinned = XMLName(DAVNamespace.davgate, "pinned")

    /// The policy a `g:content-policy` (or `g:pinned`) element sets, or why
    /// its value is refused.
    static func contentPolicy(_ element: XMLElement) -> Result<ContentPolicy, PolicyValueError> {
        if element.name == pinned { return .success(.eager) }
        let value = element.trimmedText
        guard let policy = ContentPolicy(rawValue: value) else {
            return .failure(PolicyValueError(message: "content-policy must be one of \(ContentPolicy.spelled), not \"\(value)\""))
        }
        return .success(policy)
    }
}

/// A `g:content-policy` value PROPPATCH refuses with 409.
struct PolicyValueError: Error {
    let message: String
}
