import Foundation
import Testing
@testable import Vault

/// Secrets stay inside the ciphertext and out of every printable form.
@Suite("Vault secrecy")
struct VaultSecrecyTests {
    static let secret = "hunter2-Correct-Horse-Battery-Staple-42"

    /// The forms a careless writer might leave a secret in.
    static func forms(of secret: String) -> [String: [UInt8]] {
        let utf8 = Array(secret.utf8)
        var forms: [String: [UInt8]] = [
            "UTF-8": utf8,
            "UTF-16LE": secret.utf16.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] },
            "UTF-16BE": secret.utf16.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] },
            "hex": Array(utf8.map { String(format: "%02x", $0) }.joined().utf8),
        ]
        // Base64 of the secret at each of the three alignments it could have inside a longer buffer;
        // the middle of each encoding does not depend on the neighbouring bytes.
        for shift in 0..<3 {
            let encoded = Data(Array(repeating: UInt8(0), count: shift) + utf8).base64EncodedString()
            forms["base64+\(shift)"] = Array(encoded.utf8.dropFirst(4).dropLast(4))
        }
        return forms
    }

    @Test("the secret is in no form in the vault file's bytes")
    func notInFile() throws {
        let folder = try TemporaryFolder()
        var vault = try Vault.create(at: folder.vault, key: .passphrase(passphrase), scrypt: cheap)
        try vault.set(service: "cloud.example", account: "team", group: "team", secret: VaultSecret(Self.secret))
        try vault.save()
        let contents = try bytes(of: folder.vault)
        for (name, form) in Self.forms(of: Self.secret) {
            #expect(!contents.contains(form), "the secret's \(name) form is in the vault file")
        }
        for (name, form) in Self.forms(of: passphrase) {
            #expect(!contents.contains(form), "the passphrase's \(name) form is in the vault file")
        }
        // The search itself works: the clear-text service name is inside the ciphertext too, so it is absent.
        #expect(!contents.contains(Array("cloud.example".utf8)))
        #expect(contents.contains(Array("DGVAULT".utf8)))
    }

    @Test("descriptions, debug descriptions, dumps and errors never show the secret")
    func notInDescriptions() throws {
        let folder = try TemporaryFolder()
        var vault = try Vault.create(at: folder.vault, key: .passphrase(passphrase), scrypt: cheap)
        try vault.set(service: "svc", account: "acct", group: "grp", label: "Label", secret: VaultSecret(Self.secret))
        let entry = try #require(vault.entry(service: "svc", account: "acct", group: "grp"))
        var dumped = ""
        dump(entry, to: &dumped)
        var dumpedVault = ""
        dump(vault, to: &dumpedVault)
        let texts = [
            String(describing: entry), String(reflecting: entry), "\(entry)", "\(vault.entries)",
            String(describing: entry.secret), String(reflecting: entry.secret), dumped, dumpedVault,
            String(describing: vault),
        ]
        for text in texts {
            #expect(!text.contains(Self.secret), "secret printed in: \(text.prefix(200))")
            #expect(!text.contains(passphrase))
        }
        #expect(String(describing: entry) == "VaultEntry(service: \"svc\", account: \"acct\", group: \"grp\", label: \"Label\", secret: <redacted>)")
        #expect(String(describing: entry.secret) == "<redacted>")
        #expect(!dumpedVault.contains("SymmetricKey") && !dumpedVault.contains("salt"), "dump never reaches the key: \(dumpedVault)")
        #expect(String(describing: vault) == "Vault(\(folder.vault.path), 1 entries)")

        try vault.save()
        let errors: [VaultError?] = [
            vaultError { try Vault.open(at: folder.vault, key: .passphrase(Self.secret)) },
            vaultError { try Vault.create(at: folder.vault, key: .passphrase(Self.secret)) },
            vaultError { try Vault.create(at: folder.url.appendingPathComponent("x"), key: .passphrase("short")) },
        ]
        for error in errors {
            let text = try #require(error).description
            #expect(!text.contains(Self.secret))
            #expect(!text.contains("short"))
            #expect(!String(reflecting: error).contains(Self.secret))
        }
    }

    @Test("saves are atomic: mode 0600 and no temporary file left behind")
    func atomicWrite() throws {
        let folder = try TemporaryFolder()
        var vault = try Vault.create(at: folder.vault, key: .passphrase(passphrase), scrypt: cheap)
        #expect(try folder.names() == ["vault.dgv"])
        #expect(mode(of: folder.vault) == 0o600)
        for index in 0..<5 {
            try vault.set(service: "s\(index)", account: "a", group: "g", secret: VaultSecret("x"))
            try vault.save()
        }
        #expect(try folder.names() == ["vault.dgv"])
        #expect(mode(of: folder.vault) == 0o600)
        #expect(try Vault.open(at: folder.vault, key: .passphrase(passphrase)).entries.count == 5)
    }

    @Test("each save uses a fresh nonce")
    func freshNonce() throws {
        let folder = try TemporaryFolder()
        var vault = try Vault.create(at: folder.vault, key: .passphrase(passphrase), scrypt: cheap)
        let first = try bytes(of: folder.vault)
        try vault.save()
        let second = try bytes(of: folder.vault)
        #expect(first.count == second.count)
        #expect(first[53..<65] != second[53..<65], "the nonce changed")
        #expect(first[0..<53] == second[0..<53], "KDF, parameters and salt stay")
    }
}

extension Array where Element == UInt8 {
    /// Whether `needle` occurs as a contiguous run.
    func contains(_ needle: [UInt8]) -> Bool {
        guard !needle.isEmpty, needle.count <= count else { return needle.isEmpty }
        return (0...(count - needle.count)).contains { self[$0..<($0 + needle.count)].elementsEqual(needle) }
    }
}
