import Foundation

/// A path inside a domain, as decoded, NFC-normalised name segments.
/// The core never sees a client's raw URL; DAVServer normalises it first.
public typealias ItemPath = [String]

/// One row of the index: the File Provider's `NSFileProviderItem`.
///
/// An item exists as soon as the upstream listing names it; whether its bytes
/// are local is a separate question (`state`). That split is the whole
/// point of the placeholder model: PROPFIND answers from these rows alone.
public struct Item: Sendable, Equatable {
    public enum Kind: Int, Sendable { case file = 0, folder = 1 }

    public var id: Int64
    public var domain: String
    public var parentID: Int64?
    public var name: String
    public var kind: Kind
    public var size: Int64
    public var modified: Date
    public var created: Date
    /// Bumped on every content change seen or made here; feeds the ETag.
    public var contentVersion: Int64
    /// The upstream's own version of the content (for the directory store:
    /// inode, size and mtime in nanoseconds); nil for folders that have none.
    public var upstreamVersion: String?
    /// The upstream version the cache file holds, nil while a placeholder.
    public var cachedVersion: String?
    public var executable: Bool
    /// Folders: when the listing was last refreshed from the upstream.
    public var listedAt: Date?
    /// `SHA1:<hex>` of the current content when davgate saw all of its bytes
    /// (a PUT); nil otherwise. Tied to the content version, so any change
    /// of the content drops it.
    public var checksum: String?
    /// The stored part of the item's state, which only the state machine
    /// changes; `Provider.state(of:)` adds what is in flight.
    public var state: StoredState
    /// Folders: the change feed's sequence number of the newest change
    /// anywhere below, raised by the index in the transaction that makes
    /// the change; it moves the folder's ETag.
    public var treeVersion: Int64

    public init(id: Int64, domain: String, parentID: Int64?, name: String, kind: Kind, size: Int64, modified: Date, created: Date,
                contentVersion: Int64, upstreamVersion: String?, cachedVersion: String?, executable: Bool, listedAt: Date?,
                checksum: String? = nil, state: StoredState? = nil, treeVersion: Int64 = 0) {
        self.id = id
        self.domain = domain
        self.parentID = parentID
        self.name = name
        self.kind = kind
        self.size = size
        self.modified = modified
        self.created = created
        self.contentVersion = contentVersion
        self.upstreamVersion = upstreamVersion
        self.cachedVersion = cachedVersion
        self.executable = executable
        self.listedAt = listedAt
        self.checksum = checksum
        self.state = state ?? (kind == .folder ? .folder : .placeholder)
        self.treeVersion = treeVersion
    }

    public var isFolder: Bool { kind == .folder }
    public var isRoot: Bool { parentID == nil }

    /// Written here and not yet delivered (write-back): the local content is
    /// the truth until the journal has delivered it.
    public var dirty: Bool { state.isPendingUpload }

    /// The whole current content is local: the version the listing shows,
    /// or newer bytes written here that wait for their upload.
    public var isMaterialized: Bool { state.isLocal }

    /// Strong ETag derived from identity and content version, never from
    /// mtime: it changes on every content change, also within one second
    /// (davfs2 loses edits on weak or stale ETags). A folder's also changes
    /// when anything below it does (the meaning Nextcloud and ownCloud
    /// give it), so a client can skip a subtree whose ETag it already has.
    ///
    /// Written as bytes into a string of known size: every member of a
    /// PROPFIND has one, and appending its pieces (or interpolating them)
    /// cost a string per piece.
    public var etag: String {
        String(unsafeUninitializedCapacity: 3 * 17 + 4) { out in
            var count = 0
            // As `String(value, radix: 16)`: lowercase, a minus sign
            // before a negative one (none is, but an ETag must not change).
            func hex(_ value: Int64) {
                if value < 0 { out[count] = UInt8(ascii: "-"); count += 1 }
                let v = value.magnitude
                var digits = 1
                while digits < 16 && v >> (4 * UInt64(digits)) != 0 { digits += 1 }
                for k in stride(from: digits - 1, through: 0, by: -1) {
                    let nibble = UInt8(truncatingIfNeeded: v >> (4 * UInt64(k))) & 0xF
                    out[count] = nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
                    count += 1
                }
            }
            out[count] = UInt8(ascii: "\""); count += 1
            hex(id)
            out[count] = UInt8(ascii: "-"); count += 1
            hex(contentVersion)
            if isFolder {
                out[count] = UInt8(ascii: "-"); count += 1
                hex(treeVersion)
            }
            out[count] = UInt8(ascii: "\""); count += 1
            return count
        }
    }
}
