import Foundation
import Testing
@testable import Vault

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A fresh private folder per test, removed afterwards.
struct TemporaryFolder: ~Copyable {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("davgate-vault-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    }

    deinit { try? FileManager.default.removeItem(at: url) }

    var vault: URL { url.appendingPathComponent("vault.dgv") }

    /// Writes `count` random bytes as a key file with `mode`.
    func keyFile(_ name: String = "vault.key", count: Int = 32, mode: mode_t = 0o600) throws -> URL {
        let file = url.appendingPathComponent(name)
        try Data((0..<count).map { _ in UInt8.random(in: 0...255) }).write(to: file)
        chmod(file.path, mode)
        return file
    }

    /// The names in the folder, sorted.
    func names() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: url.path).sorted()
    }
}

/// scrypt parameters that cost about a millisecond: the format tests are about bytes, not cost
/// (the cost of the real default is checked once, in `ScryptCostTests`).
let cheap = ScryptParameters(log2N: 10, r: 8, p: 1)

let passphrase = "correct horse battery staple"

func bytes(of file: URL) throws -> [UInt8] {
    Array(try Data(contentsOf: file))
}

func write(_ bytes: [UInt8], to file: URL) throws {
    try Data(bytes).write(to: file)
    chmod(file.path, 0o600)
}

func mode(of file: URL) -> mode_t {
    var info = stat()
    stat(file.path, &info)
    return info.st_mode & 0o777
}

/// The `VaultError` that `body` throws, or nil (any other error is recorded as a failure).
func vaultError<T>(_ body: () throws -> T) -> VaultError? {
    do {
        _ = try body()
        return nil
    } catch let error as VaultError {
        return error
    } catch {
        Issue.record("not a VaultError: \(error)")
        return nil
    }
}

/// A saved vault with two entries in group "team" and one in "ops".
func makeSampleVault(in folder: borrowing TemporaryFolder, key: VaultKeySource = .passphrase(passphrase)) throws -> Vault {
    var vault = try Vault.create(at: folder.vault, key: key, scrypt: cheap)
    try vault.set(service: "cloud.example", account: "team", group: "team", label: "Team cloud", secret: VaultSecret("team-secret-1"))
    try vault.set(service: "s3.example", account: "AKIAEXAMPLE", group: "team", secret: VaultSecret("s3-secret-2"))
    try vault.set(service: "cloud.example", account: "ops", group: "ops", secret: VaultSecret("ops-secret-3"))
    try vault.save()
    return vault
}
