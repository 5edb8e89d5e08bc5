/// Why the vault refused an operation.
///
/// Every message names the file involved and, where there is one, the fix. No case carries a
/// secret, a passphrase or key bytes, so any error is safe to print or log.
public enum VaultError: Error, Equatable, CustomStringConvertible {
    /// There is no vault at this path.
    case notFound(path: String)
    /// `create` found a file already there; an existing vault is never overwritten.
    case alreadyExists(path: String)
    /// The file does not start with the vault magic: it is something else.
    case notAVault(path: String)
    /// The key does not open the vault, or the file was truncated or altered. AES-GCM cannot tell
    /// these apart, and neither should the message: it would tell an attacker which one it was.
    case wrongKeyOrDamaged(path: String)
    /// The format version is higher than this davgate reads.
    case newerFormat(path: String, version: Int)
    /// The vault or key file can be read by group or others (`mode & 0o077 != 0`).
    case readableByOthers(path: String, mode: Int)
    /// The vault is unlocked with the other kind of key (a key file instead of a passphrase or back).
    case wrongKeyKind(path: String, needs: String)
    /// The key file is unusable: wrong length, or not a regular file.
    case badKeyFile(path: String, reason: String)
    /// A passphrase is empty, or too short for a new vault.
    case weakPassphrase(reason: String)
    /// A service, account, group or label is empty, too long or has control characters.
    case invalidField(name: String, reason: String)
    /// The vault changed on disk after it was opened; saving would lose the other change.
    case changedOnDisk(path: String)
    /// A system call failed; names the call, the file and the system's reason.
    case io(path: String, call: String, reason: String)
    /// The cryptography library refused (it should not happen with valid parameters).
    case crypto(reason: String)

    public var description: String {
        switch self {
        case .notFound(let path):
            "\(path): no vault here; create one with: davgate vault init"
        case .alreadyExists(let path):
            "\(path): a file is already there; refusing to overwrite it"
        case .notAVault(let path):
            "\(path): not a davgate vault"
        case .wrongKeyOrDamaged(let path):
            "\(path): wrong passphrase or damaged vault"
        case .newerFormat(let path, let version):
            "\(path): vault written by a newer davgate (format \(version)); upgrade davgate"
        case .readableByOthers(let path, let mode):
            "\(path): group or others can read it (mode \(String(mode, radix: 8))); fix with: chmod 600 \(path)"
        case .wrongKeyKind(let path, let needs):
            "\(path): this vault is unlocked with \(needs)"
        case .badKeyFile(let path, let reason):
            "\(path): not a usable key file: \(reason)"
        case .weakPassphrase(let reason):
            "passphrase refused: \(reason)"
        case .invalidField(let name, let reason):
            "invalid \(name): \(reason)"
        case .changedOnDisk(let path):
            "\(path): the vault changed on disk since it was opened; nothing was saved, run the command again"
        case .io(let path, let call, let reason):
            "\(path): \(call) failed: \(reason)"
        case .crypto(let reason):
            "cryptography failed: \(reason)"
        }
    }
}
