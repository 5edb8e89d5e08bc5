import NIOConcurrencyHelpers
import NIOHTTP1
import ProviderCore

extension WebDAVStore {
    /// Another davgate keeps a trash of its own and reserves its folder, so
    /// a domain on it deletes plainly and that trash restores. It names
    /// itself in every answer's `Server` header; asked once, with OPTIONS.
    public func keepsOwnTrash() async throws -> Bool {
        if let known = serverIsDavgate.withLockedValue({ $0 }) { return known }
        let (_, headers) = try await send(try request("OPTIONS", []), operation: .read)
        let isDavgate = headers.first(name: "Server")?.lowercased().hasPrefix("davgate") ?? false
        serverIsDavgate.withLockedValue { $0 = isDavgate }
        return isDavgate
    }
}
