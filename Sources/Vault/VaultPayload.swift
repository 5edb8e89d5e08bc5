import DurableFiles
import Foundation

/// The plaintext inside the ciphertext: the entries as JSON,
/// `{"entries":[{"service":…,"account":…,"group":…,"label":…,"secret":"<base64>","created":"<ISO 8601>","modified":"<ISO 8601>"}]}`.
///
/// JSON keeps the format readable to a future davgate and to an operator debugging with the key;
/// the secret is base64 because secrets are bytes, not necessarily text. `label` is omitted when
/// there is none. Unknown keys are ignored so a later minor addition does not break this reader.
struct VaultPayload: Codable {
    struct Stored: Codable {
        var service: String
        var account: String
        var group: String
        var label: String?
        var secret: String
        var created: Date
        var modified: Date
    }

    var entries: [Stored]

    /// Serialises `entries`; the caller zeroes the returned bytes once they are encrypted.
    static func encode(_ entries: [VaultEntry]) throws(VaultError) -> Data {
        let stored = entries.map { entry in
            Stored(service: entry.service, account: entry.account, group: entry.group, label: entry.label,
                   secret: entry.secret.withUnsafeBytes { Data($0).base64EncodedString() },
                   created: entry.created, modified: entry.modified)
        }
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        do {
            return try encoder.encode(VaultPayload(entries: stored))
        } catch {
            throw .crypto(reason: "cannot encode the entries")
        }
    }

    /// Parses decrypted bytes. Only reached after the GCM tag verified, so a failure here means a
    /// writer bug, still reported as a damaged vault rather than a crash.
    static func decode(_ plaintext: Data, path: String) throws(VaultError) -> [VaultEntry] {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        guard let payload = try? decoder.decode(VaultPayload.self, from: plaintext) else {
            throw .wrongKeyOrDamaged(path: path)
        }
        var entries: [VaultEntry] = []
        for stored in payload.entries {
            guard var bytes = Data(base64Encoded: stored.secret) else { throw .wrongKeyOrDamaged(path: path) }
            let secret = VaultSecret(bytes: bytes)
            bytes.withUnsafeMutableBytes { zeroize($0) }
            entries.append(VaultEntry(service: stored.service, account: stored.account, group: stored.group,
                                      label: stored.label, secret: secret, created: stored.created, modified: stored.modified))
        }
        return entries
    }
}
