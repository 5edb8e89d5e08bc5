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

/// Every refusal leaves the file exactly as it was and says what is wrong.
@Suite("Vault refusals")
struct VaultRefusalTests {
    /// Offsets in a format-1 scrypt vault (32-byte salt): see `VaultHeader`.
    static let headerCount = 21 + 32 + 12

    /// One byte position of each region class, what to XOR it with, and the refusal it must cause.
    static let tampers: [(name: String, offset: Int, mask: UInt8, expected: Expected)] = [
        ("magic", 0, 0xFF, .notAVault),
        ("magic end", 7, 0xFF, .notAVault),
        ("version high byte", 8, 0xFF, .newerFormat(0xFF01)),
        ("version low byte", 9, 0x03, .newerFormat(2)),
        ("version to 0", 9, 0x01, .damaged),
        ("KDF id", 10, 0xFF, .damaged),
        ("KDF id to raw key", 10, 0x01, .damaged),
        ("log2 N out of range", 11, 0xFF, .damaged),
        ("log2 N still valid", 11, 0x01, .damaged),
        ("r", 15, 0xFF, .damaged),
        ("r still valid", 15, 0x01, .damaged),
        ("p", 16, 0xFF, .damaged),
        ("p still valid", 19, 0x02, .damaged),
        ("salt length", 20, 0xFF, .damaged),
        ("salt length 16", 20, 0x30, .damaged),
        ("salt start", 21, 0x01, .damaged),
        ("salt end", 52, 0x80, .damaged),
        ("nonce start", 53, 0x01, .damaged),
        ("nonce end", 64, 0x01, .damaged),
        ("ciphertext start", headerCount, 0x01, .damaged),
        ("ciphertext middle", -1, 0x01, .damaged),
        ("ciphertext end", -17, 0x01, .damaged),
        ("tag start", -16, 0x01, .damaged),
        ("tag end", -1 - 1_000_000, 0x01, .damaged),
    ]

    enum Expected: Equatable {
        case notAVault, damaged, newerFormat(Int)

        func error(_ path: String) -> VaultError {
            switch self {
            case .notAVault: .notAVault(path: path)
            case .damaged: .wrongKeyOrDamaged(path: path)
            case .newerFormat(let version): .newerFormat(path: path, version: version)
            }
        }
    }

    @Test("wrong passphrase")
    func wrongPassphrase() throws {
        let folder = try TemporaryFolder()
        _ = try makeSampleVault(in: folder)
        let original = try bytes(of: folder.vault)
        let error = vaultError { try Vault.open(at: folder.vault, key: .passphrase("correct horse battery stapler")) }
        #expect(error == .wrongKeyOrDamaged(path: folder.vault.path))
        #expect(error?.description == "\(folder.vault.path): wrong passphrase or damaged vault")
        #expect(vaultError { try Vault.open(at: folder.vault, key: .passphrase("")) } == .weakPassphrase(reason: "it is empty"))
        #expect(try bytes(of: folder.vault) == original)
    }

    @Test("one flipped byte in each region is refused and the file stays as it was", arguments: 0..<tampers.count)
    func tamper(index: Int) throws {
        let tamper = Self.tampers[index]
        let folder = try TemporaryFolder()
        _ = try makeSampleVault(in: folder)
        var contents = try bytes(of: folder.vault)
        let ciphertextCount = contents.count - Self.headerCount - 16
        #expect(ciphertextCount > 100, "three entries make a long ciphertext")
        let offset = switch tamper.offset {
        case -1: Self.headerCount + ciphertextCount / 2
        case -17: contents.count - 17
        case -16: contents.count - 16
        case -1 - 1_000_000: contents.count - 1
        default: tamper.offset
        }
        contents[offset] ^= tamper.mask
        try write(contents, to: folder.vault)

        let error = vaultError { try Vault.open(at: folder.vault, key: .passphrase(passphrase)) }
        #expect(error == tamper.expected.error(folder.vault.path), "\(tamper.name) at \(offset)")
        #expect(try bytes(of: folder.vault) == contents, "a refused open never writes")
    }

    @Test("truncation at any length is refused, never a crash")
    func truncation() throws {
        let folder = try TemporaryFolder()
        _ = try makeSampleVault(in: folder)
        let full = try bytes(of: folder.vault)
        let header = Self.headerCount
        let lengths = [0, 1, 7, 8, 9, 10, 11, 20, 21, 40, header - 1, header, header + 1, header + 15, header + 16, header + 17, full.count - 17, full.count - 16, full.count - 1]
        for length in lengths {
            let truncated = Array(full.prefix(length))
            try write(truncated, to: folder.vault)
            let error = vaultError { try Vault.open(at: folder.vault, key: .passphrase(passphrase)) }
            #expect(error == .wrongKeyOrDamaged(path: folder.vault.path), "truncated to \(length) bytes")
            #expect(try bytes(of: folder.vault) == truncated)
        }
    }

    @Test("truncation of a key-file vault")
    func truncationRawKey() throws {
        let folder = try TemporaryFolder()
        let keyFile = try folder.keyFile()
        _ = try makeSampleVault(in: folder, key: .keyFile(keyFile))
        let full = try bytes(of: folder.vault)
        for length in [0, 5, 10, 20, 21, 32, 33, 48, 49, full.count - 1] {
            try write(Array(full.prefix(length)), to: folder.vault)
            #expect(vaultError { try Vault.open(at: folder.vault, key: .keyFile(keyFile)) } == .wrongKeyOrDamaged(path: folder.vault.path), "truncated to \(length)")
        }
    }

    @Test("a newer format is named, with the fix")
    func newerVersion() throws {
        let folder = try TemporaryFolder()
        _ = try makeSampleVault(in: folder)
        var contents = try bytes(of: folder.vault)
        contents[9] = 2
        try write(contents, to: folder.vault)
        let error = vaultError { try Vault.open(at: folder.vault, key: .passphrase(passphrase)) }
        #expect(error == .newerFormat(path: folder.vault.path, version: 2))
        #expect(error?.description == "\(folder.vault.path): vault written by a newer davgate (format 2); upgrade davgate")
        #expect(try bytes(of: folder.vault) == contents)
    }

    @Test("something that is not a vault")
    func notAVault() throws {
        let folder = try TemporaryFolder()
        let text = Array("[server]\nport = 8443\n".utf8)
        try write(text, to: folder.vault)
        let error = vaultError { try Vault.open(at: folder.vault, key: .passphrase(passphrase)) }
        #expect(error == .notAVault(path: folder.vault.path))
        #expect(error?.description.hasSuffix("not a davgate vault") == true)
        try write([0x7F], to: folder.vault)
        #expect(vaultError { try Vault.open(at: folder.vault, key: .passphrase(passphrase)) } == .notAVault(path: folder.vault.path))
        #expect(try bytes(of: folder.vault) == [0x7F])
    }

    @Test("a vault group or others can read is refused, naming the chmod", arguments: [0o640, 0o604, 0o660, 0o644, 0o700 | 0o004])
    func readableVault(permissions: Int) throws {
        let folder = try TemporaryFolder()
        _ = try makeSampleVault(in: folder)
        let original = try bytes(of: folder.vault)
        chmod(folder.vault.path, mode_t(permissions))
        let error = vaultError { try Vault.open(at: folder.vault, key: .passphrase(passphrase)) }
        #expect(error == .readableByOthers(path: folder.vault.path, mode: permissions))
        #expect(error?.description.contains("chmod 600 \(folder.vault.path)") == true)
        #expect(try bytes(of: folder.vault) == original)
        #expect(Int(mode(of: folder.vault)) == permissions, "the mode is the operator's to fix, not ours")
    }

    @Test("a key file group or others can read is refused, naming the chmod")
    func readableKeyFile() throws {
        let folder = try TemporaryFolder()
        let keyFile = try folder.keyFile()
        _ = try makeSampleVault(in: folder, key: .keyFile(keyFile))
        chmod(keyFile.path, 0o644)
        let error = vaultError { try Vault.open(at: folder.vault, key: .keyFile(keyFile)) }
        #expect(error == .readableByOthers(path: keyFile.path, mode: 0o644))
        #expect(error?.description.contains("chmod 600 \(keyFile.path)") == true)
        #expect(vaultError { try Vault.create(at: folder.url.appendingPathComponent("new.dgv"), key: .keyFile(keyFile)) } == error)
        #expect(!FileManager.default.fileExists(atPath: folder.url.appendingPathComponent("new.dgv").path))
    }

    @Test("a key file of the wrong length is refused", arguments: [0, 16, 31, 33, 64])
    func keyFileLength(count: Int) throws {
        let folder = try TemporaryFolder()
        let keyFile = try folder.keyFile(count: count)
        let error = vaultError { try Vault.create(at: folder.vault, key: .keyFile(keyFile)) }
        guard case .badKeyFile(let path, let reason) = error else {
            Issue.record("expected badKeyFile, got \(String(describing: error))")
            return
        }
        #expect(path == keyFile.path)
        #expect(reason.contains("holds \(count) bytes"))
        #expect(!FileManager.default.fileExists(atPath: folder.vault.path))
    }

    @Test("create never overwrites; open of a missing vault says how to make one")
    func createAndMissing() throws {
        let folder = try TemporaryFolder()
        let missing = vaultError { try Vault.open(at: folder.vault, key: .passphrase(passphrase)) }
        #expect(missing == .notFound(path: folder.vault.path))
        #expect(missing?.description.contains("davgate vault init") == true)
        _ = try makeSampleVault(in: folder)
        let original = try bytes(of: folder.vault)
        #expect(vaultError { try Vault.create(at: folder.vault, key: .passphrase(passphrase), scrypt: cheap) } == .alreadyExists(path: folder.vault.path))
        #expect(try bytes(of: folder.vault) == original)
        #expect(vaultError { try Vault.create(at: folder.url.appendingPathComponent("b.dgv"), key: .passphrase("short")) }
            == .weakPassphrase(reason: "use at least 8 characters"))
    }

    @Test("a passphrase vault refuses a key file and says what it needs")
    func wrongKeyKind() throws {
        let folder = try TemporaryFolder()
        _ = try makeSampleVault(in: folder)
        let keyFile = try folder.keyFile()
        let error = vaultError { try Vault.open(at: folder.vault, key: .keyFile(keyFile)) }
        #expect(error == .wrongKeyKind(path: folder.vault.path, needs: "a passphrase (DAVGATE_VAULT_PASSPHRASE or the prompt), not a key file"))
    }
}
