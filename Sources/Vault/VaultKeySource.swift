import Foundation

/// What unlocks a vault: a passphrase stretched with scrypt, or a file of 32 random bytes.
///
/// A key file suits unattended servers (no passphrase in the environment of a long-running
/// process); a passphrase suits people. Either way only the derived 256-bit key is kept.
public enum VaultKeySource: Sendable {
    /// A passphrase; scrypt with the parameters recorded in the vault's header turns it into the key.
    case passphrase(String)
    /// A file holding exactly 32 raw key bytes, mode 0600 (make one with
    /// `(umask 077; head -c 32 /dev/urandom > vault.key)`).
    case keyFile(URL)
}
