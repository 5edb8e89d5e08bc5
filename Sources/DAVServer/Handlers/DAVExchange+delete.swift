import DAVProtocol
import DAVXML
import Hummingbird
import Logging
import ProviderCore

extension DAVExchange {
    /// DELETE (RFC 4918 section 9.6): a collection goes with all its members
    /// (Depth must be infinity), when the lock tokens of everything below
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
        // The provider checks the locks (the item's, below it, its parent's)
        // where the DELETE commits, so a LOCK granted meanwhile stops it.
        try await provider.delete(at: itemPath, conditions: writeConditions(submitted: submitted, judging: item), by: user)
        return Self.response(.noContent)
    }
}
