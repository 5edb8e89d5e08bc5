import Foundation
import Testing
@testable import Vault

@Suite("Vault round trip")
struct VaultRoundTripTests {
    @Test("create, set in two groups, save, reopen with the passphrase, rekey to a key file, reopen with it")
    func roundTrip() throws {
        let folder = try TemporaryFolder()
        var vault = try makeSampleVault(in: folder)
        #expect(vault.entries.map(\.group) == ["ops", "team", "team"], "ordered by group, service, account")

        let reopened = try Vault.open(at: folder.vault, key: .passphrase(passphrase))
        #expect(reopened.entries == vault.entries)
        let team = try #require(reopened.entry(service: "cloud.example", account: "team", group: "team"))
        #expect(team.label == "Team cloud")
        #expect(team.secret.stringValue == "team-secret-1")
        #expect(team.created == team.modified)
        #expect(reopened.entry(service: "s3.example", account: "AKIAEXAMPLE", group: "team")?.secret == VaultSecret("s3-secret-2"))
        #expect(reopened.entry(service: "s3.example", account: "AKIAEXAMPLE", group: "team")?.label == nil)

        let keyFile = try folder.keyFile()
        try vault.rekey(to: .keyFile(keyFile), scrypt: cheap)
        try vault.save()
        let byKeyFile = try Vault.open(at: folder.vault, key: .keyFile(keyFile))
        #expect(byKeyFile.entries == reopened.entries)
        #expect(vaultError { try Vault.open(at: folder.vault, key: .passphrase(passphrase)) }
            == .wrongKeyKind(path: folder.vault.path, needs: "a key file (--key-file), not a passphrase"))

        try vault.rekey(to: .passphrase("a new passphrase"), scrypt: cheap)
        try vault.save()
        #expect(try Vault.open(at: folder.vault, key: .passphrase("a new passphrase")).entries == reopened.entries)
        #expect(vaultError { try Vault.open(at: folder.vault, key: .passphrase(passphrase)) } == .wrongKeyOrDamaged(path: folder.vault.path))
    }

    @Test("a vault created with a key file opens with it")
    func keyFileVault() throws {
        let folder = try TemporaryFolder()
        let keyFile = try folder.keyFile()
        let vault = try makeSampleVault(in: folder, key: .keyFile(keyFile))
        #expect(try Vault.open(at: folder.vault, key: .keyFile(keyFile)).entries == vault.entries)
        let other = try folder.keyFile("other.key")
        #expect(vaultError { try Vault.open(at: folder.vault, key: .keyFile(other)) } == .wrongKeyOrDamaged(path: folder.vault.path))
        #expect(vaultError { try Vault.open(at: folder.vault, key: .passphrase(passphrase)) } != nil)
    }

    @Test("a domain reads only its own group, even for the same service and account")
    func groupIsolation() throws {
        let folder = try TemporaryFolder()
        var vault = try makeSampleVault(in: folder)
        try vault.set(service: "cloud.example", account: "team", group: "ops", secret: VaultSecret("ops-copy"))
        #expect(vault.entry(service: "cloud.example", account: "ops", group: "team") == nil)
        #expect(vault.entry(service: "cloud.example", account: "ops", group: "ops")?.secret.stringValue == "ops-secret-3")
        #expect(vault.entry(service: "cloud.example", account: "team", group: "team")?.secret.stringValue == "team-secret-1")
        #expect(vault.entry(service: "cloud.example", account: "team", group: "ops")?.secret.stringValue == "ops-copy")
        #expect(vault.entry(service: "s3.example", account: "AKIAEXAMPLE", group: "ops") == nil)
        #expect(vault.entry(service: "s3.example", account: "AKIAEXAMPLE", group: "") == nil)
        #expect(vault.entries(inGroup: "team").count == 2)
        #expect(vault.entries(inGroup: "ops").map(\.account) == ["ops", "team"])
    }

    @Test("set replaces the secret and keeps created and the label; remove drops one entry")
    func updateAndRemove() throws {
        let folder = try TemporaryFolder()
        var vault = try makeSampleVault(in: folder)
        let before = try #require(vault.entry(service: "cloud.example", account: "team", group: "team"))
        let isNew = try vault.set(service: "cloud.example", account: "team", group: "team", secret: VaultSecret("rotated"))
        #expect(!isNew)
        let after = try #require(vault.entry(service: "cloud.example", account: "team", group: "team"))
        #expect(after.secret.stringValue == "rotated")
        #expect(after.label == "Team cloud")
        #expect(after.created == before.created)
        #expect(after.modified >= before.modified)
        let removed = vault.remove(service: "cloud.example", account: "team", group: "team")
        let removedAgain = vault.remove(service: "cloud.example", account: "team", group: "team")
        #expect(removed)
        #expect(!removedAgain)
        try vault.save()
        let reopened = try Vault.open(at: folder.vault, key: .passphrase(passphrase))
        #expect(reopened.entries.count == 2)
        #expect(reopened.entry(service: "cloud.example", account: "team", group: "team") == nil)
    }

    @Test("binary secrets survive the round trip")
    func binarySecret() throws {
        let folder = try TemporaryFolder()
        var vault = try Vault.create(at: folder.vault, key: .passphrase(passphrase), scrypt: cheap)
        let raw: [UInt8] = [0, 255, 10, 13, 0xC3, 0x28]
        try vault.set(service: "bin", account: "a", group: "g", secret: VaultSecret(bytes: raw))
        try vault.save()
        let secret = try #require(try Vault.open(at: folder.vault, key: .passphrase(passphrase)).entry(service: "bin", account: "a", group: "g")?.secret)
        #expect(secret.withUnsafeBytes { Array($0) } == raw)
        #expect(secret.stringValue == nil, "not UTF-8")
    }

    @Test("fields are checked", arguments: ["", "tab\there", "new\nline", String(repeating: "x", count: 1025)])
    func invalidFields(value: String) throws {
        let folder = try TemporaryFolder()
        var vault = try Vault.create(at: folder.vault, key: .passphrase(passphrase), scrypt: cheap)
        let secret = VaultSecret("s")
        #expect(throws: VaultError.self) { try vault.set(service: value, account: "a", group: "g", secret: secret) }
        #expect(throws: VaultError.self) { try vault.set(service: "s", account: value, group: "g", secret: secret) }
        #expect(throws: VaultError.self) { try vault.set(service: "s", account: "a", group: value, secret: secret) }
        #expect(throws: VaultError.self) { try vault.set(service: "s", account: "a", group: "g", label: value, secret: secret) }
        #expect(vault.entries.isEmpty)
    }

    @Test("two writers: the second save is refused instead of losing the first one's change")
    func concurrentWriters() throws {
        let folder = try TemporaryFolder()
        _ = try makeSampleVault(in: folder)
        var first = try Vault.open(at: folder.vault, key: .passphrase(passphrase))
        var second = try Vault.open(at: folder.vault, key: .passphrase(passphrase))
        try first.set(service: "a", account: "a", group: "g", secret: VaultSecret("1"))
        try first.save()
        try first.set(service: "b", account: "b", group: "g", secret: VaultSecret("2"))
        try first.save()
        try second.set(service: "c", account: "c", group: "g", secret: VaultSecret("3"))
        #expect(vaultError { try second.save() } == .changedOnDisk(path: folder.vault.path))
        #expect(try Vault.open(at: folder.vault, key: .passphrase(passphrase)).entries.count == 5)
    }
}
