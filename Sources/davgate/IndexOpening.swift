import ArgumentParser
import Foundation
import GatewaySetup
import Logging
import ProviderCore
import Vault

/// The vault's access group of the shared index's password: no domain's
/// store is handed entries of it (a domain's name cannot hold a colon, and
/// `access_group` refuses the `davgate:` prefix).
let indexAccessGroup = IndexSettings.accessGroup

/// Opens the index the configuration names: `index.sqlite` in the state
/// folder, or the shared PostgreSQL database of `[index]`, its password
/// from the vault (`vault` is asked only then), with this instance's
/// `holdings.sqlite` in the state folder.
/// - Parameter readingOnly: change nothing, as `davgate status --offline`
///   beside a running server.
func openIndex(_ config: GatewayConfig, readingOnly: Bool = false, vault: () throws -> Vault?, logger: Logger) async throws -> MetadataIndex {
    guard let shared = config.index else {
        let file = config.server.state.appendingPathComponent("index.sqlite")
        guard readingOnly else { return try MetadataIndex(file: file) }
        guard FileManager.default.fileExists(atPath: file.path) else {
            throw ValidationError("no index at \(file.path): davgate has not served from the state folder of \(config.file.path) yet")
        }
        return try MetadataIndex(readingOnly: file)
    }
    var location = shared.location
    if let reference = shared.credentials {
        guard let vault = try vault() else {
            throw ValidationError("\(config.file.path): [index] names a vault entry for its password; this command does not open the vault (run it with the server's vault options, or serve and use /.davgate/status)")
        }
        guard let entry = vault.entry(service: reference.service, account: reference.account, group: indexAccessGroup),
              let secret = entry.secret.stringValue else {
            throw ValidationError("""
                \(config.file.path): [index]: no vault entry service "\(reference.service)" account "\(reference.account)" \
                in access group "\(indexAccessGroup)"; add it with: davgate vault set \(reference.service) \(reference.account) \
                --group \(indexAccessGroup) (the password on standard input)
                """)
        }
        location.password = secret
    }
    // Which versions this instance's cache holds: its own, beside the cache.
    let holdings = config.server.state.appendingPathComponent("holdings.sqlite")
    do {
        return readingOnly
            ? try await MetadataIndex(readingOnly: location, holdings: holdings, logger: logger)
            : try await MetadataIndex(postgres: location, holdings: holdings, logger: logger)
    } catch let error as ProviderError {
        throw ValidationError("\(config.file.path): [index] \(location): \(error.description); is the server running and the URL right?")
    }
}
