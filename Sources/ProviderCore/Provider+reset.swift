import Foundation

extension Provider {
    /// Forgets everything local about a domain, the File Provider's log-out
    /// (`davgate domain reset`): its items go, and with them their
    /// placeholders, dead properties, locks and journal, then its cache
    /// folder; the upstream is not touched. It works on the state folder
    /// with no provider at hand, as the server is meant to be stopped.
    /// - Returns: How many items were forgotten.
    public static func reset(domain: String, index: MetadataIndex, cacheFolder: URL) async throws -> Int {
        let items = try await index.store.resetDomain(domain)
        // Nothing to remove when the domain never cached a byte.
        try? FileManager.default.removeItem(at: cacheFolder)
        return items
    }
}
