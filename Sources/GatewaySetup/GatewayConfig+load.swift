import Foundation
import ProviderCore

extension GatewayConfig {
    /// The log levels `log_level` accepts (swift-log's).
    static let logLevels = ["trace", "debug", "info", "notice", "warning", "error", "critical"]
    /// The formats `log_format` accepts.
    static let logFormats = ["text", "json"]

    /// Reads and checks a configuration file.
    ///
    /// Refused, naming the file, the key and its line: a missing or unreadable file, TOML that does not
    /// parse, unknown tables and keys, values of the wrong type or out of range, no `[[domain]]`, a
    /// duplicate or invalid domain name, a certificate without its private key (or the reverse), and
    /// a `file:` upstream that does not exist (unless it lies in the state folder, where the server
    /// makes it on first start).
    /// - Parameter file: the configuration file; a relative path is taken from the working directory.
    /// - Returns: the configuration, every path absolute.
    public static func load(from file: URL) throws(ConfigError) -> GatewayConfig {
        let shownName = file.isFileURL ? file.relativePath : file.absoluteString
        let absolute = file.absoluteURL.standardizedFileURL
        let data: Data
        do {
            data = try Data(contentsOf: absolute)
        } catch let error as CocoaError where error.code == .fileReadNoSuchFile {
            throw ConfigError(file: shownName, reason: "file not found")
        } catch {
            guard FileManager.default.fileExists(atPath: absolute.path) else {
                throw ConfigError(file: shownName, reason: "file not found")
            }
            throw ConfigError(file: shownName, reason: "cannot read the file: \(error.localizedDescription)")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw ConfigError(file: shownName, reason: "the file is not UTF-8 text")
        }
        let document: TOMLTable
        do {
            document = try TOML.parse(text)
        } catch {
            throw ConfigError(file: shownName, line: error.line, reason: "column \(error.column): \(error.reason)")
        }
        let reader = ConfigReader(file: shownName, folder: absolute.deletingLastPathComponent())
        return try reader.read(document, absolute: absolute)
    }
}

/// Turns the parsed document into settings, one table at a time.
private struct ConfigReader {
    let file: String
    let folder: URL

    func read(_ document: TOMLTable, absolute: URL) throws(ConfigError) -> GatewayConfig {
        for key in document.keys where key != "server" && key != "domain" && key != "index" {
            let line = document.line(of: key)
            if case .table = document[key] {
                throw ConfigError(file: file, key: "[\(key)]", line: line, reason: "unknown table (known: [server], [index], [[domain]])")
            }
            if case .array(let elements) = document[key], elements.allSatisfy({ if case .table = $0 { true } else { false } }), !elements.isEmpty {
                throw ConfigError(file: file, key: "[[\(key)]]", line: line, reason: "unknown table (known: [server], [index], [[domain]])")
            }
            throw ConfigError(file: file, key: key, line: line, reason: "unknown key: settings belong in [server] or [[domain]]")
        }

        var server = ServerSettings(configFolder: folder)
        if let value = document["server"] {
            guard case .table(let table) = value else {
                throw ConfigError(file: file, key: "server", line: document.line(of: "server"), reason: "expected the table [server], got \(value.typeName)")
            }
            server = try readServer(SettingsTable(table, name: "[server]", file: file))
        }
        if server.tls {
            let settings: SettingsTable
            if case .table(let table) = document["server"] {
                settings = SettingsTable(table, name: "[server]", file: file)
            } else {
                settings = SettingsTable(TOMLTable(), name: "[server]", file: file, isInFile: false)
            }
            try checkCertificatePair(server, in: settings)
        }
        var index: IndexSettings?
        if let value = document["index"] {
            guard case .table(let table) = value else {
                throw ConfigError(file: file, key: "index", line: document.line(of: "index"), reason: "expected the table [index], got \(value.typeName)")
            }
            index = try readIndex(SettingsTable(table, name: "[index]", file: file))
        }

        guard let domainsValue = document["domain"] else {
            throw ConfigError(file: file, reason: "no [[domain]]: at least one domain is needed")
        }
        guard case .array(let elements) = domainsValue, !elements.isEmpty else {
            throw ConfigError(
                file: file, key: "domain", line: document.line(of: "domain"),
                reason: "expected [[domain]] tables (an array of tables), got \(domainsValue.typeName)"
            )
        }
        var domains: [DomainSettings] = []
        var lineOfName: [String: Int] = [:]
        for element in elements {
            guard case .table(let table) = element else {
                throw ConfigError(file: file, key: "domain", line: document.line(of: "domain"), reason: "expected [[domain]] tables, got \(element.typeName)")
            }
            let settings = SettingsTable(table, name: "[[domain]]", file: file)
            let domain = try readDomain(settings, server: server, shared: index != nil)
            if let first = lineOfName[domain.name] {
                throw settings.error("name", "domain \"\(domain.name)\" is defined twice (first on line \(first))")
            }
            lineOfName[domain.name] = table.line(of: "name") ?? table.line
            domains.append(domain)
        }
        return GatewayConfig(file: absolute, server: server, domains: domains, index: index)
    }

    private func readIndex(_ table: SettingsTable) throws(ConfigError) -> IndexSettings {
        try table.refuseUnknownKeys(["url", "credentials"])
        guard let url = try table.string("url") else {
            throw table.error("url", "[index] needs url = \"postgres://USER@HOST:PORT/DATABASE\" (leave [index] out for the embedded index)")
        }
        let location: PostgresLocation
        do {
            location = try PostgresLocation(url: url)
        } catch {
            throw table.error("url", error.reason)
        }
        if let ca = location.caFile, !FileManager.default.fileExists(atPath: ca) {
            throw table.error("url", "the ca file \(ca) does not exist")
        }
        return IndexSettings(location: location, credentials: try vaultReference("credentials", in: table))
    }

    /// `key = { service = "...", account = "..." }`, naming a vault entry.
    private func vaultReference(_ key: String, in table: SettingsTable) throws(ConfigError) -> VaultReference? {
        guard let entry = try table.table(key) else { return nil }
        let inner = SettingsTable(entry, name: "\(table.name) \(key)", file: file)
        try inner.refuseUnknownKeys(["service", "account"])
        guard let service = try inner.string("service"), !service.isEmpty,
              let account = try inner.string("account"), !account.isEmpty else {
            throw table.error(key, "expected { service = \"...\", account = \"...\" } naming a vault entry")
        }
        return VaultReference(service: service, account: account)
    }

    private func readServer(_ table: SettingsTable) throws(ConfigError) -> ServerSettings {
        try table.refuseUnknownKeys([
            "listen", "tls", "certificate", "private_key", "state", "allow_basic_over_http", "max_xml_body",
            "propfind_infinity", "listing_ttl", "lock_timeout_default", "lock_timeout_max", "log_level", "realm", "vault",
            "idle_timeout", "header_timeout", "log_format", "access_log", "shutdown_grace", "users_file",
        ])
        var server = ServerSettings(configFolder: folder)
        if let listen = try table.string("listen") {
            guard let (host, port) = Self.parseListen(listen) else {
                throw table.error("listen", "expected host:port, got \"\(listen)\"")
            }
            server.host = host
            server.port = port
        }
        server.tls = try table.bool("tls") ?? server.tls
        let certificate = try table.string("certificate")
        let privateKey = try table.string("private_key")
        switch (certificate, privateKey) {
        case (.some, nil):
            throw table.error("certificate", "certificate is set without private_key: set both or neither")
        case (nil, .some):
            throw table.error("private_key", "private_key is set without certificate: set both or neither")
        default:
            break
        }
        if let certificate { server.certificate = try path(certificate, key: "certificate", in: table) }
        if let privateKey { server.privateKey = try path(privateKey, key: "private_key", in: table) }
        if let state = try table.string("state") {
            server.state = try path(state, key: "state", in: table)
            server.vault = server.state.appendingPathComponent("vault.dgv")
            server.usersFile = server.state.appendingPathComponent("users.json")
        }
        if let vault = try table.string("vault") { server.vault = try path(vault, key: "vault", in: table) }
        if let users = try table.string("users_file") { server.usersFile = try path(users, key: "users_file", in: table) }
        server.allowBasicOverHTTP = try table.bool("allow_basic_over_http") ?? server.allowBasicOverHTTP
        if let bytes = try table.integer("max_xml_body") {
            guard bytes > 0 else { throw table.error("max_xml_body", "expected a size in bytes above 0, got \(bytes)") }
            server.maxXMLBodyBytes = bytes
        }
        server.propfindInfinity = try table.bool("propfind_infinity") ?? server.propfindInfinity
        server.listingTTL = try table.duration("listing_ttl") ?? server.listingTTL
        if let seconds = try table.integer("lock_timeout_default") {
            guard seconds > 0 else { throw table.error("lock_timeout_default", "expected seconds above 0, got \(seconds)") }
            server.lockTimeoutDefault = seconds
        }
        if let seconds = try table.integer("lock_timeout_max") {
            guard seconds > 0 else { throw table.error("lock_timeout_max", "expected seconds above 0, got \(seconds)") }
            server.lockTimeoutMax = seconds
        }
        guard server.lockTimeoutDefault <= server.lockTimeoutMax else {
            let key = table.has("lock_timeout_default") ? "lock_timeout_default" : "lock_timeout_max"
            throw table.error(key, "lock_timeout_default (\(server.lockTimeoutDefault)) is above lock_timeout_max (\(server.lockTimeoutMax))")
        }
        for (key, keyPath) in [("idle_timeout", \ServerSettings.idleTimeout), ("header_timeout", \ServerSettings.headerTimeout)] {
            guard let seconds = try table.duration(key) else { continue }
            // Below a millisecond would round to no timeout at all.
            guard seconds >= 0.001, seconds <= 86_400 else {
                throw table.error(key, "expected seconds above 0 and at most 86400 (a day), got \(seconds)")
            }
            server[keyPath: keyPath] = seconds
        }
        if let level = try table.string("log_level") {
            guard GatewayConfig.logLevels.contains(level) else {
                throw table.error("log_level", "expected one of \(GatewayConfig.logLevels.joined(separator: ", ")), got \"\(level)\"")
            }
            server.logLevel = level
        }
        if let format = try table.string("log_format") {
            guard GatewayConfig.logFormats.contains(format) else {
                throw table.error("log_format", "expected \"text\" or \"json\", got \"\(format)\"")
            }
            server.logFormat = format
        }
        server.accessLog = try table.bool("access_log") ?? server.accessLog
        if let seconds = try table.duration("shutdown_grace") {
            guard seconds <= 3600 else {
                throw table.error("shutdown_grace", "expected seconds from 0 to 3600 (an hour), got \(seconds)")
            }
            server.shutdownGrace = seconds
        }
        if let realm = try table.string("realm") {
            // The realm is sent as a quoted-string in WWW-Authenticate (RFC 7617 section 2).
            guard !realm.isEmpty, realm.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value != 0x7F && $0 != "\"" && $0 != "\\" }) else {
                throw table.error("realm", "expected a non-empty text without quotes, backslashes or control characters")
            }
            server.realm = realm
        }
        return server
    }

    /// A certificate without its key (or the reverse) is a mistake to report, not a reason to make a new pair.
    private func checkCertificatePair(_ server: ServerSettings, in table: SettingsTable) throws(ConfigError) {
        let manager = FileManager.default
        let hasCertificate = manager.fileExists(atPath: server.certificate.path)
        let hasKey = manager.fileExists(atPath: server.privateKey.path)
        if hasCertificate, !hasKey {
            throw table.error(
                "private_key",
                "the certificate \(server.certificate.path) exists but its private key \(server.privateKey.path) does not; restore the key or remove both to have a development pair made"
            )
        }
        if hasKey, !hasCertificate {
            throw table.error(
                "certificate",
                "the private key \(server.privateKey.path) exists but its certificate \(server.certificate.path) does not; restore the certificate or remove both to have a development pair made"
            )
        }
    }

    /// - Parameter shared: the index is shared (`[index]`): writes are
    ///   acknowledged once the upstream holds them, since an instance's own
    ///   outbox would be lost with the instance.
    private func readDomain(_ table: SettingsTable, server: ServerSettings, shared: Bool) throws(ConfigError) -> DomainSettings {
        try table.refuseUnknownKeys(["name", "upstream", "listing_ttl", "refresh_interval", "revalidate", "folder_etags", "keep_local", "cache_budget", "min_free_disk", "write_mode", "upload_delay", "upload_max_age", "dirty_budget", "upload_parallelism", "mirror_locks", "credentials", "access_group", "upstream_ca", "users", "upstream_file_mode", "upstream_folder_mode", "trash", "trash_retention", "trash_budget", "versions_keep", "versions_budget"] + S3Location.keys)
        guard let name = try table.string("name") else { throw table.error(nil, "missing key name") }
        guard Self.isValidDomainName(name) else {
            throw table.error("name", "expected 1-64 of letters, digits, '.', '_', '-', not starting with '.', got \"\(name)\"")
        }
        guard let upstreamText = try table.string("upstream") else {
            throw table.error(nil, "missing key upstream (in domain \"\(name)\")")
        }
        var upstream = try upstream(upstreamText, in: table, server: server)
        if case .s3(let location) = upstream {
            upstream = .s3(try s3Settings(location, in: table))
        } else if let key = S3Location.keys.first(where: table.has) {
            throw table.error(key, "applies to an S3 upstream (s3://BUCKET/PREFIX/) only")
        }
        let ttl = try table.duration("listing_ttl") ?? server.listingTTL
        let refreshInterval = try table.duration("refresh_interval") ?? 300
        var revalidate = Revalidation.listing
        if let text = try table.string("revalidate") {
            guard let value = Revalidation(rawValue: text) else {
                throw table.error("revalidate", "expected \"listing\" or \"always\", got \"\(text)\"")
            }
            revalidate = value
        }
        let folderETags = try table.bool("folder_etags") ?? false
        let keepLocal = try table.strings("keep_local") ?? []
        let budget = CacheBudget(maxBytes: try table.size("cache_budget"), minFreeBytes: try table.size("min_free_disk"))
        var writeMode = shared ? WriteMode.through : WriteMode.back
        if let text = try table.string("write_mode") {
            guard let value = WriteMode(rawValue: text) else {
                throw table.error("write_mode", "expected \"through\" or \"back\", got \"\(text)\"")
            }
            if shared && value == .back {
                throw table.error("write_mode", "write_mode = \"back\" cannot be used with a shared index ([index]): a write acknowledged from this instance's outbox would be lost with the instance; leave write_mode out (\"through\")")
            }
            writeMode = value
        }
        let uploads = UploadPolicy(quietDelay: try table.duration("upload_delay") ?? 2,
                                   maxAge: try table.duration("upload_max_age") ?? 7 * 86_400,
                                   dirtyBudget: try table.size("dirty_budget"),
                                   parallelism: try table.integer("upload_parallelism") ?? 4)
        guard (1...64).contains(uploads.parallelism) else {
            throw table.error("upload_parallelism", "expected 1 to 64 uploads at once, got \(uploads.parallelism)")
        }
        let credentials = try vaultReference("credentials", in: table)
        if case .s3 = upstream, credentials == nil {
            throw table.error("upstream", "an S3 upstream needs credentials = { service = \"...\", account = \"ACCESS_KEY_ID\" }, a vault entry holding the secret key")
        }
        let group = try table.string("access_group")
        if let group, group.isEmpty { throw table.error("access_group", "expected a non-empty group name") }
        if let group, group.hasPrefix("davgate:") { throw table.error("access_group", "groups starting with davgate: are davgate's own (\(IndexSettings.accessGroup) holds the index's password)") }
        var upstreamCA: URL?
        if let ca = try table.string("upstream_ca") {
            let url = try path(ca, key: "upstream_ca", in: table)
            guard FileManager.default.fileExists(atPath: url.path) else {
                throw table.error("upstream_ca", "the file \(url.path) does not exist")
            }
            upstreamCA = url
        }
        let mirrorLocks = try table.bool("mirror_locks") ?? false
        if mirrorLocks {
            switch upstream {
            case .webdav: break
            case .directory: throw table.error("mirror_locks", "locks can be mirrored only to a WebDAV upstream (https://...), not to a folder")
            case .s3: throw table.error("mirror_locks", "locks can be mirrored only to a WebDAV upstream (https://...); S3 has no locks")
            }
        }
        let fileMode = try mode("upstream_file_mode", in: table, upstream: upstream) ?? 0o644
        let folderMode = try mode("upstream_folder_mode", in: table, upstream: upstream) ?? 0o755
        var users: [String: DomainAccess]?
        if let grants = try table.table("users") {
            var result: [String: DomainAccess] = [:]
            for user in grants.keys {
                guard case .string(let text) = grants[user], let access = DomainAccess(rawValue: text) else {
                    throw table.error("users", "user \"\(user)\": expected \"rw\" or \"ro\"")
                }
                result[user] = access
            }
            users = result
        }
        var trash: TrashPolicy?
        if try table.bool("trash") ?? true {
            let retention = try table.duration("trash_retention") ?? TrashPolicy().retention
            guard retention > 0 else { throw table.error("trash_retention", "expected a positive duration; to keep no trash, set trash = false") }
            trash = TrashPolicy(retention: retention, budget: try table.size("trash_budget"))
        } else if let key = ["trash_retention", "trash_budget"].first(where: table.has) {
            throw table.error(key, "applies only when the domain keeps a trash; remove it or set trash = true")
        }
        let versionsKeep = try table.integer("versions_keep") ?? VersionPolicy().keep
        guard (0...1000).contains(versionsKeep) else {
            throw table.error("versions_keep", "expected 0 (keep no versions) to 1000 versions a file, got \(versionsKeep)")
        }
        let versionsBudget = try table.size("versions_budget")
        if versionsBudget != nil, versionsKeep == 0 {
            throw table.error("versions_budget", "applies only when the domain keeps versions; remove it or set versions_keep above 0")
        }
        return DomainSettings(name: name, upstream: upstream, listingTTL: ttl, revalidate: revalidate, folderETags: folderETags, keepLocal: keepLocal, cacheBudget: budget,
                              writeMode: writeMode, uploads: uploads, mirrorLocks: mirrorLocks, credentials: credentials,
                              accessGroup: group, upstreamCA: upstreamCA, users: users,
                              upstreamFileMode: fileMode, upstreamFolderMode: folderMode, upstreamLine: table.table.line(of: "upstream"),
                              refreshInterval: refreshInterval, trash: trash, versions: VersionPolicy(keep: versionsKeep, budget: versionsBudget))
    }

    /// The S3 keys of a domain whose upstream is `s3://...`.
    private func s3Settings(_ location: S3Location, in table: SettingsTable) throws(ConfigError) -> S3Location {
        var location = location
        if let region = try table.string("region") {
            guard !region.isEmpty, region.utf8.allSatisfy({ (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x2D }) else {
                throw table.error("region", "expected a region name such as \"us-east-1\", got \"\(region)\"")
            }
            location.region = region
        }
        location.pathStyle = try table.bool("path_style") ?? false
        if let text = try table.string("endpoint") {
            guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
                  let host = url.host, !host.isEmpty, url.path.isEmpty || url.path == "/", url.query == nil, url.user == nil else {
                throw table.error("endpoint", "expected http(s)://HOST[:PORT] without a path or credentials, got \"\(text)\"")
            }
            location.endpoint = url
        } else {
            location.endpoint = URL(string: "https://s3.\(location.region).amazonaws.com")!
        }
        if let markers = try table.string("folder_markers") {
            guard ["slash", "hidden"].contains(markers) else {
                throw table.error("folder_markers", "expected \"slash\" (name/) or \"hidden\" (name/.davgate-folder), got \"\(markers)\"")
            }
            location.folderMarkers = markers
        }
        if let threshold = try table.size("multipart_threshold") {
            guard threshold >= 5 << 20 else {
                throw table.error("multipart_threshold", "S3's parts are at least 5 MiB; expected \"5 MiB\" or more")
            }
            location.multipartThreshold = threshold
        }
        return location
    }

    /// `upstream_file_mode = "0644"`: permission bits in octal, as chmod
    /// takes them; a folder upstream only (a server upstream decides its own).
    private func mode(_ key: String, in table: SettingsTable, upstream: UpstreamLocation) throws(ConfigError) -> UInt32? {
        guard let text = try table.string(key) else { return nil }
        guard let value = UInt32(text, radix: 8), value <= 0o7777, !text.isEmpty, text.allSatisfy({ ("0"..."7").contains($0) }) else {
            throw table.error(key, "expected permission bits in octal such as \"0644\", got \"\(text)\"")
        }
        guard case .directory = upstream else {
            throw table.error(key, "modes apply to a folder upstream (file:...) only; a server upstream sets its own")
        }
        return value
    }

    private func upstream(_ text: String, in table: SettingsTable, server: ServerSettings) throws(ConfigError) -> UpstreamLocation {
        if text.hasPrefix("http://") || text.hasPrefix("https://") {
            guard let url = URL(string: text), let host = url.host, !host.isEmpty else {
                throw table.error("upstream", "not a valid URL: \"\(text)\"")
            }
            return .webdav(url)
        }
        if text.hasPrefix("s3://") {
            let rest = text.dropFirst("s3://".count)
            let bucket = String(rest.prefix { $0 != "/" })
            var prefix = String(rest.dropFirst(bucket.count)).drop { $0 == "/" }
            if !prefix.isEmpty && !prefix.hasSuffix("/") { prefix += "/" }
            let segments = prefix.split(separator: "/", omittingEmptySubsequences: false).dropLast()
            guard (3...63).contains(bucket.count),
                  bucket.utf8.allSatisfy({ (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x2E || $0 == 0x2D || $0 == 0x5F }),
                  segments.allSatisfy({ !$0.isEmpty && $0 != "." && $0 != ".." }) else {
                throw table.error("upstream", "expected s3://BUCKET/ or s3://BUCKET/PREFIX/ (a bucket name of 3-63 lower-case letters, digits, dots and hyphens), got \"\(text)\"")
            }
            return .s3(S3Location(bucket: bucket, prefix: String(prefix), endpoint: URL(string: "https://s3.amazonaws.com")!))
        }
        guard text.hasPrefix("file:") else {
            throw table.error("upstream", "expected file:PATH, http://..., https://... or s3://BUCKET/PREFIX/, got \"\(text)\"")
        }
        var path = String(text.dropFirst("file:".count))
        if path.hasPrefix("//") {
            // file:///absolute/path, the URL form.
            guard let url = URL(string: text), url.host == nil || url.host == "" || url.host == "localhost" else {
                throw table.error("upstream", "a file: URL names no other host, got \"\(text)\"")
            }
            path = url.path
        }
        guard !path.isEmpty else { throw table.error("upstream", "file: needs a path, got \"\(text)\"") }
        let directory = GatewayConfig.resolve(path, against: folder)
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: directory.path, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else { throw table.error("upstream", "\(directory.path) is not a folder") }
        } else {
            let state = server.state.path
            let insideState = directory.path == state || directory.path.hasPrefix(state.hasSuffix("/") ? state : state + "/")
            guard insideState else {
                throw table.error("upstream", "the folder \(directory.path) does not exist (only folders inside the state folder \(state) are made on first start)")
            }
        }
        return .directory(directory)
    }

    private func path(_ text: String, key: String, in table: SettingsTable) throws(ConfigError) -> URL {
        guard !text.isEmpty, !text.utf8.contains(0) else { throw table.error(key, "expected a path, got \"\(text)\"") }
        return GatewayConfig.resolve(text, against: folder)
    }

    /// `host:port`, `[v6]:port`; port 0-65535 (0: ephemeral).
    static func parseListen(_ text: String) -> (host: String, port: Int)? {
        let host: Substring
        let portText: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return nil }
            host = text[text.index(after: text.startIndex)..<close]
            let rest = text[text.index(after: close)...]
            guard rest.hasPrefix(":") else { return nil }
            portText = rest.dropFirst()
            guard host.contains(":") else { return nil }
        } else {
            guard let colon = text.lastIndex(of: ":") else { return nil }
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
            guard !host.contains(":") else { return nil }  // IPv6 needs brackets
        }
        guard !host.isEmpty,
            host.unicodeScalars.allSatisfy({ $0.isASCII && $0.value > 0x20 && !"/[]@?#".unicodeScalars.contains($0) }),
            (1...5).contains(portText.count), portText.allSatisfy(\.isASCII), portText.allSatisfy(\.isNumber),
            let port = Int(portText), (0...65535).contains(port)
        else { return nil }
        return (String(host), port)
    }

    static func isValidDomainName(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard (1...64).contains(bytes.count), bytes.first != UInt8(ascii: ".") else { return false }
        return bytes.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"):
                true
            default:
                false
            }
        }
    }
}

/// One table of the configuration with typed, checked access to its keys.
private struct SettingsTable {
    let table: TOMLTable
    /// `[server]` or `[[domain]]`, as the file spells it.
    let name: String
    let file: String

    /// The line for errors about keys it lacks; nil for a table the file does not have.
    let line: Int?

    init(_ table: TOMLTable, name: String, file: String, isInFile: Bool = true) {
        self.table = table
        self.name = name
        self.file = file
        self.line = isInFile ? table.line : nil
    }

    /// An error about `key` (or about the table itself), at the key's line (or the table's).
    func error(_ key: String?, _ reason: String) -> ConfigError {
        ConfigError(
            file: file,
            key: key.map { "\(name) \($0)" } ?? name,
            line: key.flatMap(table.line(of:)) ?? line,
            reason: reason
        )
    }

    func has(_ key: String) -> Bool { table[key] != nil }

    func refuseUnknownKeys(_ known: [String]) throws(ConfigError) {
        for key in table.keys where !known.contains(key) {
            throw error(key, "unknown key (known: \(known.joined(separator: ", ")))")
        }
    }

    /// A size: a number of bytes, or a string such as "512 MiB" or "2 GB"
    /// (KiB, MiB, GiB, TiB by 1024; KB, MB, GB, TB by 1000).
    func size(_ key: String) throws(ConfigError) -> Int64? {
        guard let value = table[key] else { return nil }
        switch value {
        case .integer(let bytes):
            guard bytes >= 0 else { throw error(key, "expected a size of 0 or more, got \(bytes)") }
            return Int64(bytes)
        case .string(let text):
            let units: [String: Double] = ["B": 1, "KB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12,
                                           "KIB": 1024, "MIB": 1_048_576, "GIB": 1_073_741_824, "TIB": 1_099_511_627_776]
            let trimmed = text.trimmingCharacters(in: .whitespaces)
            let digits = trimmed.prefix { $0.isNumber || $0 == "." }
            let unit = trimmed.dropFirst(digits.count).trimmingCharacters(in: .whitespaces).uppercased()
            guard let number = Double(digits), let factor = units[unit.isEmpty ? "B" : unit] else {
                throw error(key, "expected a size such as \"512 MiB\" or \"2 GB\", got \"\(text)\"")
            }
            return Int64(number * factor)
        default:
            throw error(key, "expected a size (bytes, or a string such as \"512 MiB\"), got \(value.typeName)")
        }
    }

    func strings(_ key: String) throws(ConfigError) -> [String]? {
        guard let value = table[key] else { return nil }
        guard case .array(let items) = value else { throw error(key, "expected an array of strings, got \(value.typeName)") }
        var result: [String] = []
        for item in items {
            guard case .string(let text) = item, !text.isEmpty else {
                throw error(key, "expected an array of non-empty strings, got \(item.typeName)")
            }
            result.append(text)
        }
        return result
    }

    func string(_ key: String) throws(ConfigError) -> String? {
        guard let value = table[key] else { return nil }
        guard case .string(let text) = value else { throw error(key, "expected a string, got \(value.typeName)") }
        return text
    }

    func table(_ key: String) throws(ConfigError) -> TOMLTable? {
        guard let value = table[key] else { return nil }
        guard case .table(let inner) = value else { throw error(key, "expected an inline table { ... }, got \(value.typeName)") }
        return inner
    }

    func bool(_ key: String) throws(ConfigError) -> Bool? {
        guard let value = table[key] else { return nil }
        guard case .bool(let flag) = value else { throw error(key, "expected true or false, got \(value.typeName)") }
        return flag
    }

    func integer(_ key: String) throws(ConfigError) -> Int? {
        guard let value = table[key] else { return nil }
        guard case .integer(let number) = value, let result = Int(exactly: number) else {
            throw error(key, "expected an integer, got \(value.typeName)")
        }
        return result
    }

    /// Seconds, as an integer or a float, finite and not negative.
    func duration(_ key: String) throws(ConfigError) -> Double? {
        guard let value = table[key] else { return nil }
        let seconds: Double
        switch value {
        case .integer(let number): seconds = Double(number)
        case .float(let number): seconds = number
        default: throw error(key, "expected seconds (a number), got \(value.typeName)")
        }
        guard seconds.isFinite, seconds >= 0 else { throw error(key, "expected seconds of 0 or more, got \(seconds)") }
        return seconds
    }
}
