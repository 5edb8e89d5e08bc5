import Logging

extension Provider {
    /// What a domain lets go of with time, at the start and then hourly
    /// while the server runs: the trash's expired entries (retention and
    /// budget) and staged uploads nobody finished.
    public func runHourlyExpiry() async {
        while !Task.isCancelled {
            await expireStagedUploads()
            if trashPolicy != nil {
                do {
                    try await expireTrash()
                } catch {
                    logger.warning("trash expiry failed; trying again in an hour", metadata: ["error": "\(error)"])
                }
            }
            try? await Task.sleep(for: .seconds(3600))
        }
    }
}
