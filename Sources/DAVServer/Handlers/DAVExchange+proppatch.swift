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
        for instruction in update.instructions {
            switch instruction {
            case .set(let element):
                names.append(element.name)
                if LiveProperty.byName[element.name] != nil { protected.append(element.name) }
                changes.append(.set(DeadProperty(namespace: element.name.namespace, name: element.name.local, xml: element.serialized())))
            case .remove(let name):
                names.append(name)
                if LiveProperty.byName[name] != nil { protected.append(name) }
                changes.append(.remove(namespace: name.namespace, name: name.local))
            }
        }
        let href = self.href(itemPath, isFolder: item.isFolder)
        let body: String
        if protected.isEmpty {
            try await provider.changeProperties(of: item, changes, conditions: WriteConditions(principal: user, tokens: submitted))
            body = Multistatus.response(href: href, propstats: [PropStat(status: 200, properties: names.map(PropertyXML.empty))])
        } else {
            let others = names.filter { !protected.contains($0) }
            var propstats = [PropStat(status: 403, properties: protected.map(PropertyXML.empty), error: .dav("cannot-modify-protected-property"))]
            if !others.isEmpty { propstats.append(PropStat(status: 424, properties: others.map(PropertyXML.empty))) }
            body = Multistatus.response(href: href, propstats: propstats)
            context.logger.info("PROPPATCH \(href) refused: protected properties \(protected.map(\.description))")
        }
        return Self.response(Self.multiStatus, body: Multistatus.header + body + Multistatus.footer)
    }
}
