import Crypto
import CryptoExtras
import DurableFiles
import Foundation

/// Turns a ``VaultKeySource`` into the AES-256 key, as the header's KDF says.
enum VaultKey {
    static let byteCount = 32
    /// New passphrases shorter than this are refused; scrypt slows guessing, it cannot save "1234".
    static let minimumNewPassphraseLength = 8

    /// The key for an existing vault whose header records `kdf`.
    static func derive(_ source: VaultKeySource, for kdf: VaultHeader.KDF, vaultPath: String) throws(VaultError) -> SymmetricKey {
        switch (source, kdf) {
        case (.keyFile(let file), .rawKey):
            return try read(keyFile: file)
        case (.passphrase(let passphrase), .scrypt(let parameters, let salt)):
            return try scrypt(passphrase, parameters: parameters, salt: salt)
        case (.passphrase, .rawKey):
            throw .wrongKeyKind(path: vaultPath, needs: "a key file (--key-file), not a passphrase")
        case (.keyFile, .scrypt):
            throw .wrongKeyKind(path: vaultPath, needs: "a passphrase (DAVGATE_VAULT_PASSPHRASE or the prompt), not a key file")
        }
    }

    /// A fresh KDF (new random salt) and its key, for a new vault or a rekey.
    static func fresh(_ source: VaultKeySource, parameters: ScryptParameters) throws(VaultError) -> (kdf: VaultHeader.KDF, key: SymmetricKey) {
        switch source {
        case .keyFile(let file):
            return (.rawKey, try read(keyFile: file))
        case .passphrase(let passphrase):
            guard passphrase.count >= minimumNewPassphraseLength else {
                throw .weakPassphrase(reason: "use at least \(minimumNewPassphraseLength) characters")
            }
            let salt = randomBytes(VaultHeader.saltCount)
            return (.scrypt(parameters, salt: salt), try scrypt(passphrase, parameters: parameters, salt: salt))
        }
    }

    /// scrypt(passphrase, salt, N, r, p) to 32 bytes; the passphrase's UTF-8 copy is zeroed after.
    static func scrypt(_ passphrase: String, parameters: ScryptParameters, salt: [UInt8]) throws(VaultError) -> SymmetricKey {
        // BoringSSL reads the passphrase through a non-nil pointer; an empty one would crash it.
        guard !passphrase.isEmpty else { throw .weakPassphrase(reason: "it is empty") }
        var bytes = Array(passphrase.utf8)
        defer { zeroize(&bytes) }
        do {
            return try KDF.Scrypt.deriveKey(
                from: bytes, salt: salt, outputByteCount: byteCount,
                rounds: 1 << Int(parameters.log2N), blockSize: Int(parameters.r), parallelism: Int(parameters.p))
        } catch {
            throw .crypto(reason: "scrypt refused its parameters")
        }
    }

    /// The 32 raw bytes of a key file, which must be private (mode 0600 or stricter).
    static func read(keyFile: URL) throws(VaultError) -> SymmetricKey {
        var (bytes, _) = try SecureFile.readPrivate(keyFile.path, missing: .badKeyFile(path: keyFile.path, reason: "no such file"))
        defer { zeroize(&bytes) }
        guard bytes.count == byteCount else {
            throw .badKeyFile(path: keyFile.path, reason: "it holds \(bytes.count) bytes, not exactly \(byteCount) (make one with: (umask 077; head -c 32 /dev/urandom > \(keyFile.path)))")
        }
        return SymmetricKey(data: bytes)
    }

    static func randomBytes(_ count: Int) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<count).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
    }
}
