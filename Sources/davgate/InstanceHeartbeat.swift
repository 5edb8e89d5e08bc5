import Foundation
import Logging
import NIOConcurrencyHelpers
import ProviderCore
import ServiceLifecycle

/// With a shared index, this instance's heartbeat (`InstanceStatus`): the
/// other instances' status pages list it while it runs, and a stop
/// removes it.
struct InstanceHeartbeat: Service, CustomStringConvertible {
    let index: MetadataIndex
    /// Host name, listening address and process id: unique per process.
    let id: String
    /// Where it listens, once it does (`port` is set then).
    let scheme: String
    let host: String
    private let port: NIOLockedValueBox<Int?>
    let providers: [Provider]
    let logger: Logger

    init(index: MetadataIndex, scheme: String, host: String, providers: [Provider], logger: Logger) {
        self.index = index
        self.scheme = scheme
        self.host = host
        self.port = NIOLockedValueBox(nil)
        self.providers = providers
        self.logger = logger
        id = "\(ProcessInfo.processInfo.hostName)/\(ProcessInfo.processInfo.processIdentifier)/\(UUID().uuidString.prefix(8).lowercased())"
    }

    /// The server listens on `port`.
    func listening(on port: Int) { self.port.withLockedValue { $0 = port } }

    func run() async throws {
        await cancelWhenGracefulShutdown { [self] in
            await index.beat(instance: id, address: { [port, scheme, host] in "\(scheme)://\(host):\(port.withLockedValue { $0 }.map(String.init) ?? "?")" },
                             uploads: { [providers] in providers.reduce(0) { $0 + $1.uploadsRunning } }, logger: logger)
        }
    }

    var description: String { "InstanceHeartbeat" }
}
