import DavgateTestSupport
import Foundation
import Testing

/// davgate with a domain `s3` whose upstream is a real S3 server's bucket,
/// its secret key in the vault, optionally through a fault-injecting proxy.
struct S3Gateway {
    let server: any S3TestServer
    /// In front of `server` when asked for; davgate then talks to it.
    let proxy: S3FaultProxy?
    let gateway: DavgateProcess
    let client: DAVClient
    /// The key prefix the domain `s3` is rooted at: empty, or ending in `/`.
    let prefix: String
    /// The domain's folder markers: `name/` where the server keeps them,
    /// `name/.davgate-folder` on rclone serve s3.
    var markers: String { server.kind.keepsFolderMarkers ? "slash" : "hidden" }
}

/// Starts an S3 server of `kind` (and a fault proxy before it when
/// `faults`), a vault holding its secret and davgate with the domain `s3`
/// on the bucket (`prefix` below it); runs `body`; always cleans up.
/// `secret` replaces the real secret in the vault (a wrong one, to test refusals).
func withS3Gateway(_ kind: S3ServerKind, faults: Bool = false, prefix: String = "", secret: String? = nil,
                   bucket: String? = nil, extraDomain: String = "", _ body: (S3Gateway) async throws -> Void) async throws {
    let server = try await kind.start()
    defer { server.cleanUp() }
    let proxy = faults ? try await S3FaultProxy(in: server) : nil
    defer { proxy?.cleanUp() }
    let (vault, key) = try await makeVault()
    defer { try? FileManager.default.removeItem(at: vault.deletingLastPathComponent()) }
    let stored = try await runDavgate(["vault", "set", "s3", server.accessKeyID, "--group", "s3", "--vault", vault.path, "--key-file", key.path],
                                stdin: (secret ?? server.secretAccessKey) + "\n")
    try #require(stored.status == 0, "\(stored.output)")
    let gateway = try await DavgateProcess(
        extraServer: "vault = \"\(vault.path)\"",
        extraDomain: """

            [[domain]]
            name = "s3"
            upstream = "s3://\(bucket ?? server.bucket)/\(prefix)"
            endpoint = "\((proxy?.endpoint ?? server.endpoint).absoluteString)"
            path_style = true
            folder_markers = "\(server.kind.keepsFolderMarkers ? "slash" : "hidden")"
            upload_delay = 0.2
            credentials = { service = "s3", account = "\(server.accessKeyID)" }
            \(extraDomain)
            """,
        arguments: ["--key-file", key.path])
    defer { gateway.cleanUp() }
    let client = try DAVClient(gateway)
    do {
        let root = prefix.isEmpty || prefix.hasSuffix("/") ? prefix : prefix + "/"
        try await body(S3Gateway(server: server, proxy: proxy, gateway: gateway, client: client, prefix: root))
        try await client.shutdown()
    } catch {
        print(gateway.stderr)
        try? await client.shutdown()
        throw error
    }
}
