import Foundation
import GatewaySetup
import ProviderCore
import Testing

/// The domain keys of issue 3: credentials, access group, extra CA, users.
@Suite("GatewayConfig domains")
struct DomainSettingsTests {
    @Test("credentials, access group, upstream CA, users and vault are read")
    func keys() throws {
        let folder = try TemporaryFolder()
        try FileManager.default.createDirectory(at: folder.path("certs"), withIntermediateDirectories: true)
        try Data("pem".utf8).write(to: folder.path("certs/cloud-ca.pem"))
        let config = try GatewayConfig.load(from: try folder.config("""
            [server]
            vault = "../secrets/vault.dgv"

            [[domain]]
            name = "team"
            upstream = "https://cloud.example/remote.php/dav/files/team/"
            credentials = { service = "cloud.example", account = "team" }
            access_group = "team-group"
            upstream_ca = "../certs/cloud-ca.pem"
            users = { alice = "rw", bob = "ro" }

            [[domain]]
            name = "files"
            upstream = "file:../var/upstream"
            """))
        #expect(config.server.vault == folder.path("secrets/vault.dgv"))
        let team = config.domains[0]
        #expect(team.upstream == .webdav(URL(string: "https://cloud.example/remote.php/dav/files/team/")!))
        #expect(team.credentials == VaultReference(service: "cloud.example", account: "team"))
        #expect(team.accessGroup == "team-group")
        #expect(team.upstreamCA == folder.path("certs/cloud-ca.pem"))
        #expect(team.users == ["alice": .readWrite, "bob": .readOnly])
        let files = config.domains[1]
        #expect(files.credentials == nil)
        #expect(files.accessGroup == "files", "the access group defaults to the domain's name")
        #expect(files.users == nil, "no users key: everyone may read and write")
    }

    @Test("the vault defaults to vault.dgv in the state folder")
    func vaultDefault() throws {
        let folder = try TemporaryFolder()
        let config = try GatewayConfig.load(from: try folder.config("""
            [server]
            state = "../state"
            [[domain]]
            name = "files"
            upstream = "file:../state/upstream"
            """))
        #expect(config.server.vault == folder.path("state/vault.dgv"))
        #expect(config.server.usersFile == folder.path("state/users.json"))
    }

    @Test("users_file names a users file outside the state folder (one for instances on a shared index)")
    func usersFile() throws {
        let folder = try TemporaryFolder()
        let config = try GatewayConfig.load(from: try folder.config("""
            [server]
            state = "../state"
            users_file = "../shared/users.json"
            [[domain]]
            name = "files"
            upstream = "file:../state/upstream"
            """))
        #expect(config.server.usersFile == folder.path("shared/users.json"))
        #expect(config.server.state == folder.path("state"))
    }

    @Test("bad domain keys are refused with file, key and reason", arguments: [
        ("credentials = \"team\"", "credentials", "inline table"),
        ("credentials = { service = \"s\" }", "credentials", "service"),
        ("credentials = { service = \"s\", account = \"a\", secret = \"x\" }", "secret", "unknown key"),
        ("users = { alice = \"admin\" }", "users", "\"rw\" or \"ro\""),
        ("upstream_ca = \"../missing.pem\"", "upstream_ca", "does not exist"),
        ("access_group = \"\"", "access_group", "non-empty"),
    ])
    func refusals(line: String, key: String, reason: String) throws {
        let folder = try TemporaryFolder()
        let file = try folder.config("""
            [[domain]]
            name = "files"
            upstream = "file:../var/upstream"
            \(line)
            """)
        #expect {
            _ = try GatewayConfig.load(from: file)
        } throws: { error in
            let message = "\(error)"
            return message.contains(file.path) && message.contains(key) && message.contains(reason)
        }
    }

    @Test("issue 4, 5 and 6 keys: revalidate, folder_etags, keep_local, cache_budget, min_free_disk, write_mode, mirror_locks; wrong values are refused naming the key")
    func lazyFetchKeys() throws {
        let folder = try TemporaryFolder()
        let config = try GatewayConfig.load(from: try folder.config("""
            [[domain]]
            name = "cloud"
            upstream = "https://cloud.example/dav/"
            revalidate = "always"
            folder_etags = true
            keep_local = ["._*", ".DS_Store"]
            cache_budget = "1.5 GiB"
            min_free_disk = 1000000
            write_mode = "through"
            upload_delay = 0.5

            [[domain]]
            name = "files"
            upstream = "file:../var/upstream"
            """))
        #expect(config.domains[0].revalidate == .always)
        #expect(config.domains[0].folderETags)
        #expect(config.domains[0].keepLocal == ["._*", ".DS_Store"])
        #expect(config.domains[0].cacheBudget == CacheBudget(maxBytes: 1_610_612_736, minFreeBytes: 1_000_000))
        #expect(config.domains[0].writeMode == .through && config.domains[0].uploads.quietDelay == 0.5)
        #expect(config.domains[1].writeMode == .back && config.domains[1].uploads.quietDelay == 2, "write-back after 2 s of quiet is the default")
        #expect(config.domains[1].uploads.parallelism == 4, "four uploads at once by default")
        #expect(config.domains[1].revalidate == .listing && !config.domains[1].folderETags && config.domains[1].keepLocal.isEmpty,
                "defaults: trust listings, no folder ETags, nothing kept local")
        for (key, value) in [("revalidate", "\"sometimes\""), ("folder_etags", "\"yes\""), ("keep_local", "\"._*\""), ("keep_local", "[1]"),
                             ("cache_budget", "\"lots\""), ("cache_budget", "-1"), ("min_free_disk", "\"2 parsecs\""),
                             ("write_mode", "\"sideways\""), ("upload_delay", "-1"), ("upload_parallelism", "0")] {
            let text = "[[domain]]\nname = \"x\"\nupstream = \"https://cloud.example/dav/\"\n\(key) = \(value)\n"
            #expect {
                _ = try GatewayConfig.load(from: try folder.config(text))
            } throws: { error in
                "\(error)".contains(key)
            }
        }
        // Locks can be mirrored only to a WebDAV upstream.
        #expect(try GatewayConfig.load(from: try folder.config(
            "[[domain]]\nname = \"x\"\nupstream = \"https://cloud.example/dav/\"\nmirror_locks = true\n")).domains[0].mirrorLocks)
        #expect(!config.domains[1].mirrorLocks, "not mirrored by default")
        #expect {
            _ = try GatewayConfig.load(from: try folder.config("[[domain]]\nname = \"x\"\nupstream = \"file:../var/up\"\nmirror_locks = true\n"))
        } throws: { error in
            "\(error)".contains("mirror_locks") && "\(error)".contains("WebDAV upstream")
        }
    }

    @Test("trash and versions keys: defaults, sizes read, and a versions budget without versions refused")
    func trashAndVersions() throws {
        let folder = try TemporaryFolder()
        let config = try GatewayConfig.load(from: try folder.config("""
            [[domain]]
            name = "kept"
            upstream = "file:../var/upstream"
            trash_budget = "2 GiB"
            versions_keep = 3
            versions_budget = "50 MiB"

            [[domain]]
            name = "plain"
            upstream = "file:../var/other"
            """))
        #expect(config.domains[0].trash?.budget == 2 << 30)
        #expect(config.domains[0].versions == VersionPolicy(keep: 3, budget: 50 << 20))
        #expect(config.domains[1].versions == VersionPolicy(keep: 10, budget: nil), "ten versions a file, no budget, by default")
        #expect(throws: ConfigError.self) {
            try GatewayConfig.load(from: try folder.config("""
                [[domain]]
                name = "none"
                upstream = "file:../var/upstream"
                versions_keep = 0
                versions_budget = "1 GiB"
                """))
        }
    }
}
