import ArgumentParser
import CoreMetrics
import DAVServer
import Foundation
import GatewaySetup
import Logging
import Prometheus
import ServiceLifecycle
import ProviderCore
import ServiceRuntime
import Upstreams
import Users
import Vault

/// `davgate serve`: first-start set-up, then the server until SIGINT/SIGTERM.
struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Serve the configured domains over WebDAV.",
        discussion: """
            On first start this makes a self-signed certificate for localhost (when none is \
            configured) and the user 'admin' with a random password, printed once.
            """
    )

    @OptionGroup var vaultOptions: VaultOptions

    func run() async throws {
        limitAllocatorRetention()
        LoaderTables.release()
        let config = try loadConfig(vaultOptions.config.config)
        let output = LogOutput(level: Logger.Level(rawValue: config.server.logLevel) ?? .info,
                               format: LogFormat(rawValue: config.server.logFormat) ?? .text)
        let logger = Logger(label: "davgate") { output.handler(label: $0) }
        // Before any provider or handler makes its counters.
        let metrics = PrometheusCollectorRegistry()
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: metrics))
        let server = config.server
        try FileManager.default.createDirectory(at: server.state, withIntermediateDirectories: true)

        var certificate: ServerCertificate?
        if server.tls {
            let (created, fingerprint) = try DevelopmentCertificate.ensure(certificate: server.certificate, privateKey: server.privateKey)
            if created {
                say("Created a self-signed certificate for localhost and 127.0.0.1: \(server.certificate.path)")
            }
            say("Certificate SHA-256 fingerprint: \(fingerprint)")
            do {
                certificate = try ServerCertificate(certificate: server.certificate.path, privateKey: server.privateKey.path)
            } catch {
                throw ValidationError("\(config.file.path): \(error)")
            }
        }

        let users = try UserStore(file: server.usersFile)
        if let password = try FirstStart.ensureAdmin(in: users) {
            say("Created user 'admin' with password: \(password)")
            say("(shown once; change it with: davgate user passwd admin --password-stdin)")
        }

        // The vault is opened only when a domain or the shared index needs
        // credentials, and only the entries of each domain's access group
        // are handed to its store.
        let vault = config.domains.contains { $0.credentials != nil } || config.index?.credentials != nil ? try vaultOptions.openVault() : nil
        let index = try await openIndex(config, vault: { vault }, logger: logger)
        if let shared = config.index { say("Index: \(shared.location) (PostgreSQL)") }
        var providers: [String: Provider] = [:]
        for domain in config.domains {
            var store = try await makeStore(for: domain, vault: vault, config: config, logger: logger)
            if !domain.keepLocal.isEmpty {
                store = try KeepLocalStore(wrapping: store, folder: server.state.appendingPathComponent("local").appendingPathComponent(domain.name),
                                           patterns: domain.keepLocal)
            }
            logger.info("domain \(domain.name): upstream \(store.displayName)")
            providers[domain.name] = try Provider(
                domain: domain.name, store: store, index: index,
                cacheFolder: server.state.appendingPathComponent("cache").appendingPathComponent(domain.name),
                listingTTL: domain.listingTTL, revalidation: domain.revalidate,
                trustFolderVersions: domain.folderETags, budget: domain.cacheBudget,
                writeMode: domain.writeMode, uploads: domain.uploads,
                lockMirror: domain.mirrorLocks ? store as? any LockMirror : nil, refreshInterval: domain.refreshInterval,
                trash: domain.trash, versions: domain.versions, logger: logger)
        }

        var settings = DAVServerSettings(
            host: server.host, port: server.port, certificate: certificate, domains: providers,
            permissions: Reloader.permissions(of: config.domains), accessLog: server.accessLog, users: users,
            realm: server.realm, allowBasicOverHTTP: server.allowBasicOverHTTP,
            maxXMLBodyBytes: server.maxXMLBodyBytes, propfindInfinity: server.propfindInfinity,
            lockTimeoutDefault: server.lockTimeoutDefault, lockTimeoutMax: server.lockTimeoutMax,
            idleTimeout: .milliseconds(Int64(server.idleTimeout * 1000)),
            headerTimeout: .milliseconds(Int64(server.headerTimeout * 1000)))
        settings.metricsText = { metrics.emitToString() }
        settings.shutdownGrace = .milliseconds(Int64(server.shutdownGrace * 1000))
        // Chunks are kept on this instance's disk: with a shared index the
        // next chunk may reach another instance, so there are none.
        settings.chunkUploads = config.index == nil ? try ChunkFolders(root: server.state.appendingPathComponent("uploads")) : nil
        let scheme = server.tls ? "https" : "http"
        let host = server.host.contains(":") ? "[\(server.host)]" : server.host
        // What the journal holds from before a restart is put right first,
        // then uploaded alongside the server (in every domain: one switched
        // to write-through still delivers its earlier write-back files).
        for provider in providers.values {
            try await provider.recoverJournal()
            try await provider.removeOrphanedContent()
            try await provider.adoptMirroredLocks()
        }
        // The uploads run in the server's service group; by the time `run`
        // returns, a graceful stop has let them finish (or cut them short
        // after the grace), so what is reported below is what really waits.
        let ordered = config.domains.compactMap { providers[$0.name] }
        let uploader = Uploader(providers: ordered, grace: settings.shutdownGrace)
        let quiet = QuietMemoryRelease(activity: { ServerActivity.requestsBegun }) {
            index.releaseMemory()
            QuietMemoryRelease.trimHeap()
        }
        var services: [any Service] = [uploader, DomainLoop.eagerRefresh(ordered), DomainLoop.hourlyExpiry(ordered), quiet,
                                       HeapSlackRelease()]
        let heartbeat = index.isShared ? InstanceHeartbeat(index: index, scheme: scheme, host: host, providers: ordered, logger: logger) : nil
        if let heartbeat {
            services.append(heartbeat)
            settings.instances = { try await index.instances() }
            settings.instanceID = heartbeat.id
        }
        let notifier = SystemdNotifier()
        let reloader = Reloader(configPath: vaultOptions.config.config, running: config, output: output, certificate: certificate,
                                providers: providers, live: settings.live, users: users, logger: logger)
        let companions: [any Service] = [
            ReloadSignal(notifier: notifier) { await reloader.reload() },
            SystemdService(notifier: notifier, logger: logger),
        ]
        try await DAVServer(settings: settings, logger: logger).run(services: services, companions: companions) { port in
            heartbeat?.listening(on: port)
            let domains = config.domains.map { "\(scheme)://\(host):\(port)/\($0.name)/" }.joined(separator: ", ")
            say("davgate listening on \(scheme)://\(host):\(port)/ serving \(domains)")
            LoaderTables.releaseCode()
            if let failure = notifier.notify("READY=1\nSTATUS=serving \(domains)") {
                logger.warning("\(failure)")
            }
        }
        for provider in providers.values {
            await provider.reportPendingAtStop()
        }
        logger.notice("davgate stopped")
    }
}

/// The upstream store of a domain; a WebDAV upstream's password or an S3
/// secret key comes from the vault entry the domain names, read within the
/// domain's access group.
private func makeStore(for domain: DomainSettings, vault: Vault?, config: GatewayConfig, logger: Logger) async throws -> any UpstreamStore {
    switch domain.upstream {
    case .directory(let root):
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        return DirectoryStore(root: root, fileMode: mode_t(domain.upstreamFileMode), folderMode: mode_t(domain.upstreamFolderMode))
    case .webdav(let url):
        let secret = try credentials(of: domain, vault: vault, config: config)
        return try WebDAVStore(baseURL: url, credentials: secret.map { ($0.account, $0.secret) }, credentialsSource: secret?.source,
                               extraTrustRoot: domain.upstreamCA)
    case .s3(let location):
        guard let secret = try credentials(of: domain, vault: vault, config: config) else {
            throw ValidationError("\(config.file.path): domain \(domain.name): an S3 upstream needs credentials")
        }
        let store = try S3Store(
            endpoint: location.endpoint, bucket: location.bucket, prefix: location.prefix, region: location.region,
            pathStyle: location.pathStyle, credentials: S3Credentials(accessKeyID: secret.account, secretAccessKey: secret.secret),
            credentialsSource: secret.source, extraTrustRoot: domain.upstreamCA,
            folderMarkers: S3Store.FolderMarkers(rawValue: location.folderMarkers) ?? .slash,
            multipart: S3Store.Multipart(threshold: location.multipartThreshold))
        do {
            try await store.checkBucket()
        } catch let error as S3StoreConfigurationError {
            let line = domain.upstreamLine.map { " line \($0)" } ?? ""
            throw ValidationError("\(config.file.path)\(line): domain \(domain.name): upstream = \"\(domain.upstream)\": \(error)")
        } catch {
            logger.warning("domain \(domain.name): the S3 upstream did not answer at start (\(error)); serving what the index holds")
        }
        return store
    }
}

/// The vault entry a domain names: its account, secret and, for messages,
/// where it came from; nil for a domain without credentials.
private func credentials(of domain: DomainSettings, vault: Vault?, config: GatewayConfig) throws -> (account: String, secret: String, source: String)? {
    guard let reference = domain.credentials else { return nil }
    guard let entry = vault?.entry(service: reference.service, account: reference.account, group: domain.accessGroup),
          let secret = entry.secret.stringValue else {
        throw ValidationError("""
            \(config.file.path): domain \(domain.name): no vault entry service "\(reference.service)" account \
            "\(reference.account)" in access group "\(domain.accessGroup)"; add it with: davgate vault set \
            \(reference.service) \(reference.account) --group \(domain.accessGroup) (the secret on standard input)
            """)
    }
    let source = "the vault entry service \"\(reference.service)\" account \"\(reference.account)\" (davgate vault set \(reference.service) \(reference.account) --group \(domain.accessGroup))"
    return (reference.account, secret, source)
}

/// Streaming a large file allocates a 256 KiB buffer per chunk on one thread
/// and frees it on another. glibc then raises its mmap threshold (up to 32
/// MiB) and serves such buffers from per-thread arenas that fragment and are
/// never returned: +40-60 MiB during a 1 GiB GET (measured by scripts/bench).
/// A fixed threshold keeps every block of 1 MiB or more an mmap that goes
/// back at once, and two arenas are plenty for two cores.
///
/// 1 MiB, not less: NIOSSL decrypts a large request body into a buffer that
/// grows to 512 KiB and is copied afresh whenever the body stream still
/// holds the last one, which is every time. Above the threshold each copy
/// was a new mapping faulted in page by page: a 1 GiB PUT took 400,000 page
/// faults and a third more CPU (`perf record -e page-faults`); from the
/// arena the freed block is simply reused. Peak RSS through 10,000 small
/// PUTs and a 1 GiB PUT and GET stayed the same (68-69 MiB either way).
///
/// A fixed mmap threshold also fixes the trim threshold at its 128 KiB
/// default: SQLite's statements allocate and free a few hundred KiB of
/// pages each (a folder walk's temporary tables, a commit's page images),
/// and glibc gave the heap's top back with `brk` after each, then faulted
/// it in again (TLB shootdowns and page faults, 12% of a small PUT's CPU in
/// issue 14's profile). Keeping up to 4 MiB free at the top, and growing it
/// 1 MiB at a time, ends that churn for a bounded few MiB, which
/// `QuietMemoryRelease` gives back once the requests stop.
private func limitAllocatorRetention() {
    #if os(Linux)
    _ = glibcMallopt(-3 /* M_MMAP_THRESHOLD */, 1024 * 1024)
    _ = glibcMallopt(-8 /* M_ARENA_MAX */, 2)
    _ = glibcMallopt(-1 /* M_TRIM_THRESHOLD */, Int32(QuietMemoryRelease.keptFreeTop))
    _ = glibcMallopt(-2 /* M_TOP_PAD */, 1 << 20)
    #endif
}

#if os(Linux)
/// glibc's `mallopt`, which the Glibc module does not export (malloc.h).
@_silgen_name("mallopt")
private func glibcMallopt(_ parameter: Int32, _ value: Int32) -> Int32
#endif

/// Prints a line for the operator and flushes at once (tests read it).
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

func loadConfig(_ path: String) throws -> GatewayConfig {
    do {
        return try GatewayConfig.load(from: URL(fileURLWithPath: path))
    } catch {
        throw ValidationError("\(error)")
    }
}
