import Foundation

/// One credential in the vault: the keychain's generic-password item.
///
/// An entry is identified by (service, account, group), as a keychain item is by service, account
/// and access group. Several domains may share a group; a domain reads only the entries of its own
/// group (see ``Vault/entry(service:account:group:)``). Its description shows the identifying
/// fields and never the secret.
public struct VaultEntry: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible {
    /// What the credential is for, e.g. the upstream's host name (`kSecAttrService`).
    public var service: String
    /// The user name at that service (`kSecAttrAccount`).
    public var account: String
    /// The access group: which domains may read it (`kSecAttrAccessGroup`).
    public var group: String
    /// A human-readable label (`kSecAttrLabel`), if one was given.
    public var label: String?
    /// The secret itself; prints as `<redacted>`.
    public var secret: VaultSecret
    /// When the entry was first stored (whole seconds, UTC).
    public var created: Date
    /// When the secret or label last changed (whole seconds, UTC).
    public var modified: Date

    public init(service: String, account: String, group: String, label: String? = nil, secret: VaultSecret, created: Date, modified: Date) {
        self.service = service
        self.account = account
        self.group = group
        self.label = label
        self.secret = secret
        self.created = created
        self.modified = modified
    }

    public var description: String {
        let labelPart = label.map { ", label: \"\($0)\"" } ?? ""
        return "VaultEntry(service: \"\(service)\", account: \"\(account)\", group: \"\(group)\"\(labelPart), secret: <redacted>)"
    }

    public var debugDescription: String { description }

    /// Whether this entry has the given identity.
    func matches(service: String, account: String, group: String) -> Bool {
        self.service == service && self.account == account && self.group == group
    }

    /// Checks a service, account, group or label: 1-1024 UTF-8 bytes, no control characters
    /// (they would garble `vault list` and logs, and no real service name needs them).
    static func validate(_ value: String, as name: String) throws(VaultError) {
        guard !value.isEmpty else { throw .invalidField(name: name, reason: "it is empty") }
        guard value.utf8.count <= 1024 else { throw .invalidField(name: name, reason: "longer than 1024 bytes") }
        guard !value.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw .invalidField(name: name, reason: "it contains a control character")
        }
    }
}
