import DavgateTestSupport
import Foundation
import Testing

/// A davgate whose domain `chained` is `upstream`'s domain `files`, over
/// TLS trusting its certificate, with upstream's admin password from a
/// vault of its own: a davgate in front of a davgate.
struct ChainedFront {
    let front: DavgateProcess
    private let vaultFolder: URL

    /// - Parameter extraDomain: more lines for the `chained` domain.
    init(upstream: DavgateProcess, extraDomain: String = "") async throws {
        let (vault, key) = try await makeVault()
        vaultFolder = vault.deletingLastPathComponent()
        let stored = try await runDavgate(["vault", "set", "davgate", "admin", "--group", "chained", "--vault", vault.path, "--key-file", key.path],
                                          stdin: upstream.adminPassword + "\n")
        try #require(stored.status == 0, "\(stored.output)")
        front = try await DavgateProcess(extraServer: "vault = \"\(vault.path)\"", extraDomain: """

            [[domain]]
            name = "chained"
            upstream = "\(upstream.domainURL("files").absoluteString)"
            upstream_ca = "\(upstream.certificate.path)"
            credentials = { service = "davgate", account = "admin" }
            \(extraDomain)
            """, arguments: ["--key-file", key.path])
    }

    func cleanUp() {
        front.cleanUp()
        try? FileManager.default.removeItem(at: vaultFolder)
    }
}
