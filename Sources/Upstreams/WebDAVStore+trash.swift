import NIOConcurrencyHelpers
import NIOHTTP1
import ProviderCore

extension WebDAVStore {
    /// Another davgate whose domain keeps a trash reserves its folder, so a
    /// domain on it deletes plainly and that trash restores. It says so in
    /// its OPTIONS answer's `DAV` header (which proxies leave alone, unlike
    /// `Server`); asked once.
    public func keepsOwnTrash() async throws -> Bool {
        if let known = upstreamKeepsTrash.withLockedValue({ $0 }) { return known }
        let (_, headers) = try await send(try request("OPTIONS", []), operation: .read)
        let keeps = headers[canonicalForm: "DAV"].contains { $0 == TrashLayout.capability }
        upstreamKeepsTrash.withLockedValue { $0 = keeps }
        return keeps
    }
}
