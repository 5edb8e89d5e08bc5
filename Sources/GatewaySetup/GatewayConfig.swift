import Foundation
import ProviderCore

/// davgate's configuration, read from a TOML file (`conf/davgate.toml` by default).
///
/// Every path in it is absolute: relative paths in the file are taken from the file's own folder,
/// so the server behaves the same whatever its working directory.
public struct GatewayConfig: Sendable {
    /// The configuration file, absolute.
    public var file: URL
    public var server: ServerSettings
    /// At least one.
    public var domains: [DomainSettings]
    /// `[index]`: a shared index; nil for the embedded SQLite one.
    public var index: IndexSettings?

    /// The configuration file used when none is named, relative to the working directory.
    public static let defaultPath = "conf/davgate.toml"

    public init(file: URL, server: ServerSettings, domains: [DomainSettings], index: IndexSettings? = nil) {
        self.file = file
        self.server = server
        self.domains = domains
        self.index = index
    }
}

/// The `[server]` table.
public struct ServerSettings: Sendable {
    /// From `listen = "127.0.0.1:8443"` (or `"[::1]:8443"`); port 0 asks for an ephemeral port.
    public var host: String
    public var port: Int
    /// `tls`, default true. Without it, Basic auth is refused unless ``allowBasicOverHTTP``.
    public var tls: Bool
    /// `certificate`, default `../certs/davgate.pem` beside the configuration folder.
    public var certificate: URL
    /// `private_key`, default `../certs/davgate-key.pem`.
    public var privateKey: URL
    /// `state`: the index, cache and users file; default `../var`.
    public var state: URL
    /// `allow_basic_over_http`, default false.
    public var allowBasicOverHTTP: Bool
    /// `max_xml_body` in bytes, default 1 MiB: larger XML request bodies get 413 before they are read.
    public var maxXMLBodyBytes: Int
    /// `propfind_infinity`, default false: PROPFIND with `Depth: infinity` is refused (RFC 4918 section 9.1).
    public var propfindInfinity: Bool
    /// `listing_ttl` in seconds, default 5: how long a listing from the upstream is trusted.
    public var listingTTL: Double
    /// `lock_timeout_default` in seconds (600): a LOCK without `Timeout`.
    public var lockTimeoutDefault: Int
    /// `lock_timeout_max` in seconds (604800, a week): the most a client may ask for.
    public var lockTimeoutMax: Int
    /// `idle_timeout` in seconds (60): how long a connection may be silent
    /// between requests or while its request body has stopped arriving.
    public var idleTimeout: Double
    /// `header_timeout` in seconds (20): how long the TLS handshake and a
    /// request head may take, from the connection's start or a later
    /// request's first byte (slow clients holding connections).
    public var headerTimeout: Double
    /// `log_level`: trace, debug, info, notice, warning, error or critical; default info.
    public var logLevel: String
    /// `log_format`: `text` (default, readable lines) or `json` (one
    /// object per line, for log shippers).
    public var logFormat: String
    /// `access_log`, default false: a line per request at info.
    public var accessLog: Bool
    /// `shutdown_grace` in seconds (10): how long a stop lets requests in
    /// flight finish before they are cut.
    public var shutdownGrace: Double
    /// `realm` of the Basic auth challenge, default `davgate`.
    public var realm: String
    /// The credentials vault (`vault`); defaults to `vault.dgv` in the state folder.
    public var vault: URL
    /// The users file (`users_file`); defaults to `users.json` in the state
    /// folder. Instances sharing an index name one file (it is re-read when
    /// it changes).
    public var usersFile: URL

    /// The settings of a file without a `[server]` table, paths resolved against `configFolder`.
    public init(configFolder: URL) {
        host = "127.0.0.1"
        port = 8443
        tls = true
        certificate = GatewayConfig.resolve("../certs/davgate.pem", against: configFolder)
        privateKey = GatewayConfig.resolve("../certs/davgate-key.pem", against: configFolder)
        state = GatewayConfig.resolve("../var", against: configFolder)
        allowBasicOverHTTP = false
        maxXMLBodyBytes = 1 << 20
        propfindInfinity = false
        listingTTL = 5
        lockTimeoutDefault = 600
        lockTimeoutMax = 604_800
        idleTimeout = 60
        headerTimeout = 20
        logLevel = "info"
        logFormat = "text"
        accessLog = false
        shutdownGrace = 10
        realm = "davgate"
        vault = state.appendingPathComponent("vault.dgv")
        usersFile = state.appendingPathComponent("users.json")
    }
}

/// One `[[domain]]`: a root served at `/NAME/`, bridged to its upstream.
public struct DomainSettings: Sendable {
    /// 1-64 of `[A-Za-z0-9._-]`, not starting with `.`; unique.
    public var name: String
    public var upstream: UpstreamLocation
    /// `listing_ttl`, defaulting to the server's.
    public var listingTTL: Double
    /// `refresh_interval` in seconds, default 300 (0: never): how often
    /// folders whose content policy is `eager` are refreshed in the
    /// background, and what is new or changed below them downloaded.
    public var refreshInterval: Double
    /// `revalidate = "listing"` (default) or `"always"`: whether a cached
    /// file is compared with the upstream before every read, or trusted
    /// until its folder's listing is refreshed.
    public var revalidate: Revalidation
    /// `folder_etags = true`: the upstream's folder ETags change whenever
    /// anything below them changes (Nextcloud, ownCloud), so a refresh asks
    /// for the folder's ETag first and reads the listing only when it moved.
    /// Off by default: Apache's folder ETags miss edits of existing files.
    public var folderETags: Bool
    /// `keep_local = ["._*", ".DS_Store"]`: file names (shell patterns) kept
    /// in the state folder and never uploaded, such as macOS's metadata files.
    public var keepLocal: [String]
    /// `cache_budget = "10 GiB"` and `min_free_disk = "2 GiB"`: over either,
    /// the least recently read clean content is evicted back to placeholders.
    public var cacheBudget: CacheBudget
    /// `write_mode = "back"` (default) answers a PUT once it is durable here
    /// and journaled; `"through"` once the upstream took it.
    public var writeMode: WriteMode
    /// `mirror_locks = true` (WebDAV upstreams): a client's lock on a file is
    /// also taken upstream, so people working there see the file locked.
    public var mirrorLocks: Bool
    /// `upload_delay` (seconds, default 2) and `upload_max_age` (seconds,
    /// default 7 days) of write-back uploads.
    public var uploads: UploadPolicy
    /// `credentials = { service = "...", account = "..." }`: the vault entry
    /// holding the upstream's password; nil for an upstream without auth.
    public var credentials: VaultReference?
    /// `access_group`: the only vault group this domain may read (the
    /// keychain's access group); defaults to the domain's name.
    public var accessGroup: String
    /// `upstream_ca`: one extra CA or pinned certificate (PEM) for a
    /// self-signed upstream.
    public var upstreamCA: URL?
    /// `users = { alice = "rw", bob = "ro" }`; nil lets every user read and write.
    public var users: [String: DomainAccess]?
    /// `upstream_file_mode` (default `"0644"`) and `upstream_folder_mode`
    /// (default `"0755"`): the permission bits of files and folders davgate
    /// creates in a folder upstream, as Apache's defaults, so other programs
    /// serving the folder can read them.
    public var upstreamFileMode: UInt32
    public var upstreamFolderMode: UInt32
    /// The line of `upstream` in the file, for a refusal at start that
    /// only the upstream can give (S3's `NoSuchBucket`).
    public var upstreamLine: Int?
    /// `trash = true` (default) with `trash_retention` (default 30 days)
    /// and `trash_budget` (default: no limit): a DELETE moves into the
    /// domain's trash upstream; nil (`trash = false`) destroys at once.
    public var trash: TrashPolicy?
    /// `versions_keep = 10` (default; 0 keeps none): how many earlier
    /// contents of each file an overwrite keeps upstream; `versions_budget`
    /// (default: no limit): how many bytes of them the domain keeps.
    public var versions: VersionPolicy

    public init(name: String, upstream: UpstreamLocation, listingTTL: Double, revalidate: Revalidation = .listing,
                folderETags: Bool = false, keepLocal: [String] = [], cacheBudget: CacheBudget = CacheBudget(),
                writeMode: WriteMode = .back, uploads: UploadPolicy = UploadPolicy(), mirrorLocks: Bool = false,
                credentials: VaultReference? = nil, accessGroup: String? = nil, upstreamCA: URL? = nil,
                users: [String: DomainAccess]? = nil, upstreamFileMode: UInt32 = 0o644, upstreamFolderMode: UInt32 = 0o755,
                upstreamLine: Int? = nil, refreshInterval: Double = 300, trash: TrashPolicy? = TrashPolicy(),
                versions: VersionPolicy = VersionPolicy()) {
        self.name = name
        self.upstream = upstream
        self.listingTTL = listingTTL
        self.refreshInterval = refreshInterval
        self.revalidate = revalidate
        self.folderETags = folderETags
        self.keepLocal = keepLocal
        self.cacheBudget = cacheBudget
        self.writeMode = writeMode
        self.uploads = uploads
        self.mirrorLocks = mirrorLocks
        self.credentials = credentials
        self.accessGroup = accessGroup ?? name
        self.upstreamCA = upstreamCA
        self.users = users
        self.upstreamFileMode = upstreamFileMode
        self.upstreamFolderMode = upstreamFolderMode
        self.upstreamLine = upstreamLine
        self.trash = trash
        self.versions = versions
    }
}

/// Names a vault entry (the keychain's service and account).
public struct VaultReference: Sendable, Equatable {
    public var service: String
    public var account: String
    public init(service: String, account: String) {
        self.service = service
        self.account = account
    }
}

/// What a user may do in a domain.
public enum DomainAccess: String, Sendable, Equatable {
    case readWrite = "rw"
    case readOnly = "ro"
}

extension GatewayConfig {
    /// `path` as an absolute, standardized file URL; a relative path is taken from `folder`.
    static func resolve(_ path: String, against folder: URL) -> URL {
        var path = Substring(path)
        while path.count > 1, path.hasSuffix("/") { path = path.dropLast() }  // "../var/" names the same folder as "../var"
        let url = path.hasPrefix("/") ? URL(fileURLWithPath: String(path)) : folder.appendingPathComponent(String(path))
        return url.standardizedFileURL
    }
}
