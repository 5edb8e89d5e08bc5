import Foundation

/// What the upstream says about one entry of a folder.
public struct UpstreamEntry: Sendable, Equatable {
    public var name: String
    public var isFolder: Bool
    public var size: Int64
    public var modified: Date
    /// Opaque; changes whenever the content changes upstream.
    public var version: String
    public var executable: Bool

    public init(name: String, isFolder: Bool, size: Int64, modified: Date, version: String, executable: Bool = false) {
        self.name = name
        self.isFolder = isFolder
        self.size = size
        self.modified = modified
        self.version = version
        self.executable = executable
    }
}

/// Space figures for RFC 4331 `quota-available-bytes` / `quota-used-bytes`.
public struct UpstreamQuota: Sendable, Equatable {
    public var available: Int64
    public var used: Int64
    public init(available: Int64, used: Int64) {
        self.available = available
        self.used = used
    }
}

/// Why an upstream call failed, in terms the server can map to a status.
public enum UpstreamError: Error, Sendable, Equatable, CustomStringConvertible {
    case notFound
    case exists
    /// A parent folder is missing or is a file.
    case conflict
    case noSpace
    case forbidden(String)
    case unavailable(String)
    /// No connection could be made: nothing of the request was sent.
    case unreachable(String)
    case timeout
    /// The upstream's version is not the one a conditional write expected
    /// (someone changed or created it meanwhile): a conflict to keep both.
    case versionMismatch
    /// Someone holds a lock on it upstream (HTTP 423).
    case locked
    case io(String)

    /// The upstream may well take it later (down, overloaded, slow);
    /// anything else will be refused again.
    public var isTransient: Bool {
        switch self {
        case .unavailable, .unreachable, .timeout: true
        default: false
        }
    }

    public var description: String {
        switch self {
        case .notFound: "not found upstream"
        case .exists: "already exists upstream"
        case .conflict: "parent folder missing upstream"
        case .noSpace: "no space left upstream"
        case .forbidden(let m): "upstream refused access: \(m)"
        case .unavailable(let m): "upstream unavailable: \(m)"
        case .unreachable(let m): "upstream unreachable: \(m)"
        case .timeout: "upstream timed out"
        case .versionMismatch: "the upstream file changed since it was read"
        case .locked: "locked upstream by someone working there directly"
        case .io(let m): "upstream I/O error: \(m)"
        }
    }
}

/// The seam between the provider core and a concrete store (a directory,
/// another WebDAV server, S3). Stores know nothing about WebDAV clients,
/// items or the index; they move bytes and names.
///
/// Paths are item paths relative to the domain's root. A store never
/// overwrites implicitly: `move` and `copy` expect a free destination, the
/// core removes what must be replaced first, so every store behaves alike.
public protocol UpstreamStore: Sendable {
    /// For logs and status, never containing credentials.
    var displayName: String { get }
    /// What names the store can hold; the provider refuses others before
    /// acknowledging a write.
    var nameRules: NameRules { get }
    /// The entries of a folder; `.notFound` if it is gone, `.conflict` if a file.
    func list(_ folder: ItemPath) async throws -> [UpstreamEntry]
    /// The entries with the folder's own version as the same answer gave it
    /// (a WebDAV collection's ETag), nil when the store has none.
    func listing(_ folder: ItemPath) async throws -> FolderListing
    /// The entries a page at a time as the store receives them (S3's 1,000
    /// keys), so a folder of any size is listed in bounded memory; returns
    /// the folder's own version as `listing` does. A name may come again
    /// on a later page (S3 lists a key `a` before the folder `a/`): the
    /// later entry wins. Stores that list in one answer hand it over whole.
    func listPages(_ folder: ItemPath, _ page: ([UpstreamEntry]) async throws -> Void) async throws -> String?
    func stat(_ path: ItemPath) async throws -> UpstreamEntry?
    /// Fetches content into `destination`. Without a range: the whole file
    /// into a new `destination` (which must not exist). With a range: only
    /// those bytes, written at their own offsets into `destination` (created
    /// when missing), so a cache file can fill sparsely. The observer hears
    /// of the version once the upstream has answered and before any byte is
    /// written (and can stop the fetch there), then of the bytes of this
    /// fetch durable in the file so far, so readers can stream behind the
    /// writer. Returns the entry describing the version the bytes belong to.
    func fetch(_ path: ItemPath, range: ClosedRange<Int64>?, into destination: URL,
               observer: FetchObserver) async throws -> UpstreamEntry
    /// Stores the local file's bytes at `path`. `expecting` guards against
    /// overwriting someone else's change (`.versionMismatch` when it fails).
    /// The local file is not modified and stays where it is. `progress`,
    /// when given, counts the bytes as they are sent.
    func upload(_ file: URL, to path: ItemPath, expecting: UpstreamExpectation, progress: UploadProgress?) async throws -> UpstreamEntry
    func makeFolder(_ path: ItemPath) async throws -> UpstreamEntry
    /// Removes a file or a folder with everything below it.
    func delete(_ path: ItemPath) async throws
    func move(_ source: ItemPath, to destination: ItemPath) async throws -> UpstreamEntry
    /// Copies a file, or a folder with (`recursive`) or without its members.
    func copy(_ source: ItemPath, to destination: ItemPath, recursive: Bool) async throws -> UpstreamEntry
    func quota() async throws -> UpstreamQuota?
    /// The position of the upstream's change feed now, nil when it has
    /// none (`UpstreamFeed.swift`; the default).
    func feedPosition() async throws -> String?
    /// What changed below the root since `position`, at most `limit`
    /// changes a page. Throws `UpstreamFeedError`.
    func changes(since position: String, limit: Int) async throws -> UpstreamChanges
    /// Whether the store is another davgate's domain, which reserves
    /// `.davgate/` and keeps its own trash and versions: a domain on it
    /// then deletes and overwrites plainly and leaves keeping to it (the
    /// default: false).
    func isDavgate() async throws -> Bool
    /// Whether the file at `path` lives only on the gateway, never
    /// upstream (`keep_local`): the trash does not take it there.
    func keepsOnGateway(_ path: ItemPath) -> Bool
}

/// A folder's entries and its own version at the time of the listing.
public struct FolderListing: Sendable, Equatable {
    public var entries: [UpstreamEntry]
    public var version: String?
    public init(entries: [UpstreamEntry], version: String?) {
        self.entries = entries
        self.version = version
    }
}

/// What a conditional upload expects to find upstream.
public enum UpstreamExpectation: Sendable, Equatable {
    /// Overwrite whatever is there.
    case any
    /// Nothing may be there (`If-None-Match: *`).
    case absent
    /// Exactly this upstream version (`If-Match`).
    case version(String)
}

/// What a fetch reports while it runs.
public struct FetchObserver: Sendable {
    /// The upstream answered: the bytes to come belong to this entry's
    /// version and size. Throwing stops the fetch before a byte is written,
    /// so a reader expecting one version never receives another's bytes.
    public var began: @Sendable (UpstreamEntry) async throws -> Void
    /// The count of bytes of this fetch durable in the file so far.
    public var progressed: @Sendable (Int64) -> Void

    public init(began: @escaping @Sendable (UpstreamEntry) async throws -> Void = { _ in },
                progressed: @escaping @Sendable (Int64) -> Void = { _ in }) {
        self.began = began
        self.progressed = progressed
    }
}

extension UpstreamStore {
    /// Most stores sit on a file system somewhere: 255 bytes a name.
    public var nameRules: NameRules { .common }

    /// Stores without folder versions list without one.
    public func listing(_ folder: ItemPath) async throws -> FolderListing {
        FolderListing(entries: try await list(folder), version: nil)
    }

    public func listPages(_ folder: ItemPath, _ page: ([UpstreamEntry]) async throws -> Void) async throws -> String? {
        let listing = try await listing(folder)
        try await page(listing.entries)
        return listing.version
    }

    /// The whole content into a new file, without progress reports.
    public func fetch(_ path: ItemPath, into destination: URL) async throws -> UpstreamEntry {
        try await fetch(path, range: nil, into: destination, observer: FetchObserver())
    }

    /// A fetch reporting only its progress.
    public func fetch(_ path: ItemPath, range: ClosedRange<Int64>?, into destination: URL,
                      progress: @escaping @Sendable (Int64) -> Void) async throws -> UpstreamEntry {
        try await fetch(path, range: range, into: destination, observer: FetchObserver(progressed: progress))
    }

    public func isDavgate() async throws -> Bool { false }

    public func keepsOnGateway(_ path: ItemPath) -> Bool { false }

    /// An upload nobody watches.
    public func upload(_ file: URL, to path: ItemPath, expecting: UpstreamExpectation) async throws -> UpstreamEntry {
        try await upload(file, to: path, expecting: expecting, progress: nil)
    }

    /// An unconditional upload.
    public func upload(_ file: URL, to path: ItemPath) async throws -> UpstreamEntry {
        try await upload(file, to: path, expecting: .any)
    }
}
