import DavgateTestSupport
import Foundation
import Testing

/// `davgate vault ...` end to end, through the built binary; skipped when it is not built.
@Suite("davgate vault CLI")
struct VaultCLITests {
    /// The built `davgate`: `DAVGATE_EXECUTABLE`, else beside the test bundle (as the integration
    /// tests find it), else `.build/debug/davgate` of the package.
    static let executable: URL? = {
        if let path = ProcessInfo.processInfo.environment["DAVGATE_EXECUTABLE"] { return URL(fileURLWithPath: path) }
        let beside = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("davgate")
        if FileManager.default.isExecutableFile(atPath: beside.path) { return beside }
        let package = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let debug = package.appendingPathComponent(".build/debug/davgate")
        return FileManager.default.isExecutableFile(atPath: debug.path) ? debug : nil
    }()

    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// Runs the CLI with no passphrase of the machine's in its environment.
    static func run(_ arguments: [String], stdin: String = "", environment: [String: String] = [:]) async throws -> Result {
        var env = ProcessInfo.processInfo.environment
        env["DAVGATE_VAULT_PASSPHRASE"] = nil
        env["DAVGATE_VAULT_NEW_PASSPHRASE"] = nil
        env.merge(environment) { $1 }
        let ended = try await ChildProcess.output(executable!.path, arguments, input: Data(stdin.utf8), environment: env, check: false)
        return Result(status: ended.status, stdout: ended.text, stderr: ended.errorText)
    }

    @Test("init, set, get, list, export-public, remove, rekey and the refusals", .enabled(if: executable != nil, "davgate is not built"))
    func endToEnd() async throws {
        let folder = try TemporaryFolder()
        let vault = ["--vault", folder.vault.path]
        let key = ["DAVGATE_VAULT_PASSPHRASE": passphrase]
        let secret = "s3cr3t-token-value"

        let noKey = try await Self.run(["vault", "init"] + vault)
        #expect(noKey.status != 0)
        #expect(noKey.stderr.contains("DAVGATE_VAULT_PASSPHRASE"), "says how to provide a key: \(noKey.stderr)")
        #expect(!FileManager.default.fileExists(atPath: folder.vault.path))

        #expect(try await Self.run(["vault", "init"] + vault, environment: key).status == 0)
        #expect(mode(of: folder.vault) == 0o600)
        let again = try await Self.run(["vault", "init"] + vault, environment: key)
        #expect(again.status != 0 && again.stderr.contains("refusing to overwrite"))

        let set = try await Self.run(["vault", "set", "cloud.example", "team", "--group", "team", "--label", "Team"] + vault, stdin: secret + "\n", environment: key)
        #expect(set.status == 0, "\(set.stderr)")
        #expect(try await Self.run(["vault", "set", "cloud.example", "ops", "--group", "ops"] + vault, stdin: "other", environment: key).status == 0)

        let get = try await Self.run(["vault", "get", "cloud.example", "team", "--group", "team"] + vault, environment: key)
        #expect(get.status == 0)
        #expect(get.stdout.contains("label:    Team"))
        #expect(!get.stdout.contains(secret), "no secret without --reveal")
        let reveal = try await Self.run(["vault", "get", "cloud.example", "team", "--group", "team", "--reveal"] + vault, environment: key)
        #expect(reveal.stdout.contains("secret:   \(secret)\n"), "the trailing newline of stdin is not part of the secret")
        let otherGroup = try await Self.run(["vault", "get", "cloud.example", "team", "--group", "ops"] + vault, environment: key)
        #expect(otherGroup.status != 0)

        let list = try await Self.run(["vault", "list"] + vault, environment: key)
        #expect(list.stdout.split(separator: "\n").count == 2)
        #expect(!list.stdout.contains(secret) && !list.stdout.contains("other"))
        let export = try await Self.run(["vault", "export-public"] + vault, environment: key)
        #expect(export.status == 0)
        #expect(export.stdout.contains("\"service\" : \"cloud.example\""))
        #expect(!export.stdout.contains(secret))

        let before = try bytes(of: folder.vault)
        let wrong = try await Self.run(["vault", "list"] + vault, environment: ["DAVGATE_VAULT_PASSPHRASE": "not the passphrase"])
        #expect(wrong.status != 0)
        #expect(wrong.stderr.contains("wrong passphrase or damaged vault"))
        #expect(try bytes(of: folder.vault) == before)

        #expect(try await Self.run(["vault", "remove", "cloud.example", "ops", "--group", "ops"] + vault, environment: key).status == 0)
        let keyFile = try folder.keyFile()
        #expect(try await Self.run(["vault", "rekey", "--new-key-file", keyFile.path] + vault, environment: key).status == 0)
        let byKey = try await Self.run(["vault", "list", "--key-file", keyFile.path] + vault)
        #expect(byKey.status == 0)
        #expect(byKey.stdout.split(separator: "\n").count == 1)

        for result in [noKey, again, set, get, list, export, wrong, byKey] {
            #expect(!result.stderr.contains(secret) && !result.stderr.contains(passphrase))
        }
    }
}
