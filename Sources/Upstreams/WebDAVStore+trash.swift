import NIOConcurrencyHelpers
import NIOHTTP1
import ProviderCore

extension WebDAVStore {
    /// Another davgate's domain reserves `.davgate/` and keeps its own trash
    /// and versions, so a domain on it leaves keeping to it. It says so in
    /// its OPTIONS answer's `DAV` header (which proxies leave alone, unlike
    /// `Server`); asked once.
    public func isDavgate() async throws -> Bool {
        if let known = serverIsDavgate.withLockedValue({ $0 }) { return known }
        let (_, headers) = try await send(try request("OPTIONS", []), operation: .read)
        let isDavgate = headers[canonicalForm: "DAV"].contains { $0 == TrashLayout.capability }
        serverIsDavgate.withLockedValue { $0 = isDavgate }
        return isDavgate
    }
}
