import DAVProtocol
import DAVXML
import Hummingbird
import Logging
import ProviderCore

extension DAVExchange {
    /// DELETE (RFC 4918 section 9.6): a collection goes with all its members
    /// (Depth must be infinity), after the lock tokens of everything below
    /// were submitted.
    func delete() async throws -> Response {
        let provider = try requireDomain()
        guard !itemPath.isEmpty else { throw DAVError(.forbidden, "a domain's root cannot be deleted") }
        let item = try await requireItem(provider)
        if item.isFolder, let depth = try parseDepth(), depth != .infinity {
            throw DAVError.badRequest("DELETE of a collection needs Depth: infinity")
        }
        let submitted = try await evaluateIfHeader()
        try checkWriteConditions(item)
        try await requireLockTokens(for: item, provider: provider, submitted: submitted, includeDescendants: true)
        if let parent = try await provider.item(at: Array(itemPath.dropLast())) {
            try await requireLockTokens(for: parent, provider: provider, submitted: submitted)
        }
        try await provider.delete(at: itemPath)
        return Self.response(.noContent)
    }
}
