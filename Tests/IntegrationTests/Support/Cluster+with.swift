import DavgateTestSupport
import Foundation

/// A client of each instance of a cluster, straight to its port (plain
/// HTTP, as only the tests reach it), and one through HAProxy (TLS).
struct ClusterClients: Sendable {
    /// a, b and c, in the order of ``DavgateCluster/names``.
    let direct: [DAVClient]
    let proxy: DAVClient
    var a: DAVClient { direct[0] }
    var b: DAVClient { direct[1] }
    var c: DAVClient { direct[2] }

    func shutdown() async {
        for client in direct + [proxy] { try? await client.shutdown() }
    }
}

/// Runs `body` against a fresh cluster (``DavgateCluster``) and its clients,
/// always cleaning up; the instances' logs are printed when `body` throws.
func withCluster<T>(_ body: (DavgateCluster, ClusterClients) async throws -> T) async throws -> T {
    let cluster = try await DavgateCluster()
    let clients: ClusterClients
    do {
        clients = ClusterClients(direct: try (0..<DavgateCluster.names.count).map { try DAVClient(cluster.instance($0)) },
                                 proxy: try DAVClient(cluster))
    } catch {
        await cluster.cleanUp()
        throw error
    }
    do {
        let result = try await body(cluster, clients)
        await clients.shutdown()
        await cluster.cleanUp()
        return result
    } catch {
        print(cluster.diagnostics)
        await clients.shutdown()
        await cluster.cleanUp()
        throw error
    }
}
