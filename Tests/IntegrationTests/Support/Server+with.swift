import DavgateTestSupport
import Foundation

/// Runs `body` against a fresh davgate and a client, always cleaning up.
func withGateway<T>(tls: Bool = true, allowBasicOverHTTP: Bool = true, extraServer: String = "", extraDomain: String = "",
                    _ body: (DavgateProcess, DAVClient) async throws -> T) async throws -> T {
    let server = try await DavgateProcess(tls: tls, allowBasicOverHTTP: allowBasicOverHTTP, extraServer: extraServer, extraDomain: extraDomain)
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

/// Runs `body` with an extra client (another user or password), always shutting it down.
func withClient<T>(_ server: DavgateProcess, user: String = "admin", password: String? = nil,
                   _ body: (DAVClient) async throws -> T) async throws -> T {
    let client = try DAVClient(server, user: user, password: password)
    do {
        let result = try await body(client)
        try await client.shutdown()
        return result
    } catch {
        try? await client.shutdown()
        throw error
    }
}
