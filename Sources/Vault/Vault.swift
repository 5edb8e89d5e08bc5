import Crypto
import DurableFiles
import Foundation

/// davgate's keychain: one encrypted file of credentials, readable per access group.
///
/// The File Provider keeps the user's credentials in a shared keychain with an access group, so
/// that the app and its extension can both reach the server. The vault is the same idea as a
/// file: entries (service, account, group, label, secret, dates) sealed with AES-256-GCM under a
/// key from a passphrase (scrypt) or a key file; the header is authenticated too. A domain reads
/// only the entries of its own access group.
///
/// A `Vault` is an unlocked, in-memory copy. Change it with ``set(service:account:group:label:secret:)``
/// and ``remove(service:account:group:)``, then ``save()``; nothing touches the file before that,
/// and a refused ``open(at:key:)`` never writes. The on-disk format is documented in `docs/vault.md`
/// and in ``VaultHeader``.
public struct Vault: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The vault file.
    public let file: URL
    /// Every entry, ordered by group, service, account.
    public private(set) var entries: [VaultEntry]

    private var kdf: VaultHeader.KDF
    private var key: SymmetricKey
    /// The file as last read or written, to notice another writer before overwriting its change.
    private var stamp: FileStamp?

    private init(file: URL, entries: [VaultEntry], kdf: VaultHeader.KDF, key: SymmetricKey, stamp: FileStamp?) {
        self.file = file
        self.entries = entries
        self.kdf = kdf
        self.key = key
        self.stamp = stamp
    }

    /// Creates an empty vault at `file` (mode 0600), refusing to overwrite anything already there.
    /// A new passphrase needs at least 8 characters; it is stretched with scrypt N=2^16, r=8, p=1.
    public static func create(at file: URL, key source: VaultKeySource) throws(VaultError) -> Vault {
        try create(at: file, key: source, scrypt: .default)
    }

    /// ``create(at:key:)`` with chosen scrypt parameters (tests use cheap ones).
    static func create(at file: URL, key source: VaultKeySource, scrypt: ScryptParameters) throws(VaultError) -> Vault {
        guard try SecureFile.stamp(file.path) == nil else { throw .alreadyExists(path: file.path) }
        let (kdf, key) = try VaultKey.fresh(source, parameters: scrypt)
        var vault = Vault(file: file, entries: [], kdf: kdf, key: key, stamp: nil)
        try vault.write(exclusive: true)
        return vault
    }

    /// Opens and decrypts the vault at `file`.
    ///
    /// Refuses, without writing anything: a file group or others can read (`readableByOthers`),
    /// a file that is not a vault (`notAVault`), a format from a newer davgate (`newerFormat`), and
    /// a wrong key or any truncated or altered byte (`wrongKeyOrDamaged`).
    public static func open(at file: URL, key source: VaultKeySource) throws(VaultError) -> Vault {
        let path = file.path
        let (contents, stamp) = try SecureFile.readPrivate(path, missing: .notFound(path: path))
        let (header, headerCount) = try VaultHeader.parse(contents, path: path)
        let key = try VaultKey.derive(source, for: header.kdf, vaultPath: path)
        let tagStart = contents.count - VaultHeader.tagCount
        var plaintext: Data
        do {
            let box = try AES.GCM.SealedBox(
                nonce: AES.GCM.Nonce(data: header.nonce),
                ciphertext: contents[headerCount..<tagStart],
                tag: contents[tagStart...])
            plaintext = try AES.GCM.open(box, using: key, authenticating: contents[0..<headerCount])
        } catch {
            throw .wrongKeyOrDamaged(path: path)
        }
        defer { plaintext.withUnsafeMutableBytes { zeroize($0) } }
        let entries = try VaultPayload.decode(plaintext, path: path)
        return Vault(file: file, entries: entries.sorted(by: Self.order), kdf: header.kdf, key: key, stamp: stamp)
    }

    /// The entry with this service and account in `group`, or nil.
    ///
    /// This is the server's only way in: a domain passes its own access group, so it can never read
    /// an entry of another group, even one with the same service and account.
    public func entry(service: String, account: String, group: String) -> VaultEntry? {
        entries.first { $0.matches(service: service, account: account, group: group) }
    }

    /// The entries of one access group.
    public func entries(inGroup group: String) -> [VaultEntry] {
        entries.filter { $0.group == group }
    }

    /// Adds an entry, or replaces the secret of an existing one (keeping its creation date; a nil
    /// `label` keeps its label). Only in memory until ``save()``.
    /// - Returns: true when the entry is new.
    @discardableResult
    public mutating func set(service: String, account: String, group: String, label: String? = nil, secret: VaultSecret) throws(VaultError) -> Bool {
        try VaultEntry.validate(service, as: "service")
        try VaultEntry.validate(account, as: "account")
        try VaultEntry.validate(group, as: "group")
        if let label { try VaultEntry.validate(label, as: "label") }
        let now = Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down))
        if let index = entries.firstIndex(where: { $0.matches(service: service, account: account, group: group) }) {
            entries[index].secret = secret
            if let label { entries[index].label = label }
            entries[index].modified = now
            return false
        }
        entries.append(VaultEntry(service: service, account: account, group: group, label: label, secret: secret, created: now, modified: now))
        entries.sort(by: Self.order)
        return true
    }

    /// Removes an entry; only in memory until ``save()``.
    /// - Returns: false when there was no such entry.
    @discardableResult
    public mutating func remove(service: String, account: String, group: String) -> Bool {
        guard let index = entries.firstIndex(where: { $0.matches(service: service, account: account, group: group) }) else { return false }
        entries.remove(at: index)
        return true
    }

    /// Changes what unlocks the vault (a new passphrase gets a new salt); ``save()`` writes it.
    public mutating func rekey(to source: VaultKeySource) throws(VaultError) {
        try rekey(to: source, scrypt: .default)
    }

    /// ``rekey(to:)`` with chosen scrypt parameters (tests use cheap ones).
    mutating func rekey(to source: VaultKeySource, scrypt: ScryptParameters) throws(VaultError) {
        (kdf, key) = try VaultKey.fresh(source, parameters: scrypt)
    }

    /// Encrypts the entries under a fresh nonce and replaces the file atomically (mode 0600).
    ///
    /// Refuses with `changedOnDisk` when another process replaced the vault since it was opened,
    /// so two `davgate vault set` at once never silently lose one change.
    public mutating func save() throws(VaultError) {
        guard try SecureFile.stamp(file.path) == stamp else { throw .changedOnDisk(path: file.path) }
        try write(exclusive: false)
    }

    private mutating func write(exclusive: Bool) throws(VaultError) {
        let nonce = AES.GCM.Nonce()
        let header = VaultHeader(kdf: kdf, nonce: Array(nonce)).bytes
        var plaintext = try VaultPayload.encode(entries)
        defer { plaintext.withUnsafeMutableBytes { zeroize($0) } }
        let box: AES.GCM.SealedBox
        do {
            box = try AES.GCM.seal(plaintext, using: key, nonce: nonce, authenticating: header)
        } catch {
            throw .crypto(reason: "AES-GCM refused to seal")
        }
        stamp = try SecureFile.replace(file.path, with: header + box.ciphertext + box.tag, exclusive: exclusive)
    }

    /// The file and the number of entries; never the key or a secret.
    public var description: String { "Vault(\(file.path), \(entries.count) entries)" }

    public var debugDescription: String { description }

    /// Only the file and the (redacting) entries, so `dump` never walks into the key.
    public var customMirror: Mirror {
        Mirror(self, children: ["file": file, "entries": entries], displayStyle: .struct)
    }

    private static func order(_ a: VaultEntry, _ b: VaultEntry) -> Bool {
        (a.group, a.service, a.account) < (b.group, b.service, b.account)
    }
}
