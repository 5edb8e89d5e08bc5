import Foundation

/// Runs `body` against a fresh davgate and a client, always cleaning up.
func withGateway<T>(tls: Bool = true, extraServer: String = "", extraDomain: String = "",
                    _ body: (DavgateProcess, DAVClient) async throws -> T) async throws -> T {
    let server = try await DavgateProcess(tls: tls, extraServer: extraServer, extraDomain: extraDomain)
    let client = try DAVClient(server)
    do {
        let result = try await body(server, client)
        try await client.shutdown()
        server.cleanUp()
        return result
    } catch {
        print(server.stderr)
        try? await client.shutdown()
        server.cleanUp()
        throw error
    }
}
