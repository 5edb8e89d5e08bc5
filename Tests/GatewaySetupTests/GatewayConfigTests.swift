import Foundation
import GatewaySetup
import Testing

@Suite("GatewayConfig")
struct GatewayConfigTests {
    /// Loads `text` as `conf/davgate.toml` in a fresh folder and returns the error it must raise.
    private func refusal(_ text: String, in folder: TemporaryFolder) throws -> ConfigError {
        let file = try folder.config(text)
        do {
            _ = try GatewayConfig.load(from: file)
        } catch {
            #expect(error.file == file.path)
            #expect(error.description.hasPrefix(file.path + ":"), "the message names the file: \(error)")
            return error
        }
        Issue.record("accepted:\n\(text)")
        return ConfigError(file: "", reason: "accepted")
    }

    private let minimalDomain = """
        [[domain]]
        name = "files"
        upstream = "file:../var/upstream"
        """

    @Test("defaults, with paths taken from the configuration folder")
    func defaults() throws {
        let folder = try TemporaryFolder()
        let file = try folder.config(minimalDomain)
        let config = try GatewayConfig.load(from: file)
        #expect(config.file == file)
        let server = config.server
        #expect(server.host == "127.0.0.1")
        #expect(server.port == 8443)
        #expect(server.tls)
        #expect(server.certificate == folder.path("certs/davgate.pem"))
        #expect(server.privateKey == folder.path("certs/davgate-key.pem"))
        #expect(server.state == folder.path("var"))
        #expect(!server.allowBasicOverHTTP)
        #expect(server.maxXMLBodyBytes == 1_048_576)
        #expect(!server.propfindInfinity)
        #expect(server.listingTTL == 5)
        #expect(server.lockTimeoutDefault == 600)
        #expect(server.lockTimeoutMax == 604_800)
        #expect(server.idleTimeout == 60)
        #expect(server.headerTimeout == 20)
        #expect(server.logLevel == "info")
        #expect(server.realm == "davgate")
        #expect(config.domains.count == 1)
        #expect(config.domains[0].name == "files")
        #expect(config.domains[0].upstream == .directory(folder.path("var/upstream")))
        #expect(config.domains[0].listingTTL == 5)
    }

    @Test("every key read, relative and absolute paths resolved")
    func everyKey() throws {
        let folder = try TemporaryFolder()
        try FileManager.default.createDirectory(at: folder.path("data/shared"), withIntermediateDirectories: true)
        let absolute = folder.path("data/shared").path
        let file = try folder.config(
            """
            [server]
            listen = "[::1]:0"
            tls = false
            certificate = "tls/./cert.pem"
            private_key = "/etc/davgate/key.pem"
            state = "../state/"
            allow_basic_over_http = true
            max_xml_body = 65_536
            propfind_infinity = true
            listing_ttl = 0.5
            lock_timeout_default = 60
            lock_timeout_max = 3600
            idle_timeout = 30
            header_timeout = 2.5
            log_level = "debug"
            realm = "Team files"

            [[domain]]
            name = "shared"
            upstream = "file:../data/shared"
            listing_ttl = 30

            [[domain]]
            name = "abs"
            upstream = "file:\(absolute)"

            [[domain]]
            name = "cloud"
            upstream = "https://cloud.example/remote.php/dav/files/team/"
            """
        )
        let config = try GatewayConfig.load(from: file)
        let server = config.server
        #expect(server.host == "::1")
        #expect(server.port == 0)
        #expect(!server.tls)
        #expect(server.certificate == folder.path("conf/tls/cert.pem"))
        #expect(server.privateKey == URL(fileURLWithPath: "/etc/davgate/key.pem"))
        #expect(server.state == folder.path("state"))
        #expect(server.allowBasicOverHTTP)
        #expect(server.maxXMLBodyBytes == 65_536)
        #expect(server.propfindInfinity)
        #expect(server.listingTTL == 0.5)
        #expect(server.lockTimeoutDefault == 60)
        #expect(server.lockTimeoutMax == 3600)
        #expect(server.idleTimeout == 30)
        #expect(server.headerTimeout == 2.5)
        #expect(server.logLevel == "debug")
        #expect(server.realm == "Team files")
        #expect(config.domains.map(\.name) == ["shared", "abs", "cloud"])
        #expect(config.domains[0].upstream == .directory(folder.path("data/shared")))
        #expect(config.domains[0].listingTTL == 30)
        #expect(config.domains[1].upstream == .directory(folder.path("data/shared")))
        #expect(config.domains[1].listingTTL == 0.5, "a domain's TTL defaults to the server's")
        #expect(config.domains[2].upstream == .webdav(URL(string: "https://cloud.example/remote.php/dav/files/team/")!))
        for url in [server.certificate, server.privateKey, server.state] {
            #expect(url.path.hasPrefix("/"))
            #expect(!url.path.contains("/./") && !url.path.contains("/../"))
        }
    }

    @Test("listen forms", arguments: [
        ("127.0.0.1:8443", "127.0.0.1", 8443), ("localhost:80", "localhost", 80), ("[::1]:8443", "::1", 8443),
        ("0.0.0.0:0", "0.0.0.0", 0), ("[::]:65535", "::", 65535),
    ])
    func listen(text: String, host: String, port: Int) throws {
        let folder = try TemporaryFolder()
        let config = try GatewayConfig.load(from: try folder.config("[server]\nlisten = \"\(text)\"\n" + minimalDomain))
        #expect(config.server.host == host)
        #expect(config.server.port == port)
    }

    @Test("bad listen values are refused", arguments: ["x", "127.0.0.1", ":8443", "host:65536", "::1:8443", "[::1]8443", "host:-1", "host:8x", "a b:1"])
    func badListen(text: String) throws {
        let folder = try TemporaryFolder()
        let error = try refusal("[server]\nlisten = \"\(text)\"\n" + minimalDomain, in: folder)
        #expect(error.key == "[server] listen")
        #expect(error.line == 2)
        #expect(error.reason == "expected host:port, got \"\(text)\"")
        #expect(error.description.hasSuffix(":2: [server] listen: expected host:port, got \"\(text)\""))
    }

    @Test("refusals name the key and its line", arguments: [
        ("[server]\ntls = \"yes\"", "[server] tls", 2, "expected true or false, got a string"),
        ("[server]\nport = 8443", "[server] port", 2, "unknown key"),
        ("[server]\nmax_xml_body = 0", "[server] max_xml_body", 2, "above 0"),
        ("[server]\nmax_xml_body = 1.5", "[server] max_xml_body", 2, "expected an integer, got a float"),
        ("[server]\nlisting_ttl = -1", "[server] listing_ttl", 2, "0 or more"),
        ("[server]\nlisting_ttl = \"5s\"", "[server] listing_ttl", 2, "expected seconds"),
        ("[server]\nlog_level = \"loud\"", "[server] log_level", 2, "expected one of trace, debug"),
        ("[server]\nrealm = 'say \"hi\"'", "[server] realm", 2, "without quotes"),
        ("[server]\nlock_timeout_default = 100\nlock_timeout_max = 10", "[server] lock_timeout_default", 2, "above lock_timeout_max"),
        ("[server]\nlock_timeout_max = 0", "[server] lock_timeout_max", 2, "above 0"),
        ("[server]\nidle_timeout = 0", "[server] idle_timeout", 2, "above 0"),
        ("[server]\nheader_timeout = 100000", "[server] header_timeout", 2, "at most 86400"),
        ("[server]\nheader_timeout = \"10s\"", "[server] header_timeout", 2, "expected seconds"),
        ("[server]\ncertificate = \"a.pem\"", "[server] certificate", 2, "certificate is set without private_key"),
        ("[server]\nprivate_key = \"a.pem\"", "[server] private_key", 2, "private_key is set without certificate"),
        ("[logging]\nlevel = 1", "[logging]", 1, "unknown table"),
        ("[[mounts]]\nx = 1", "[[mounts]]", 1, "unknown table"),
        ("verbose = true", "verbose", 1, "unknown key"),
        ("server = 1", "server", 1, "expected the table [server]"),
    ])
    func serverRefusals(text: String, key: String, line: Int, reason: String) throws {
        let folder = try TemporaryFolder()
        let error = try refusal(text + "\n" + minimalDomain, in: folder)
        #expect(error.key == key, "\(error)")
        #expect(error.line == line, "\(error)")
        #expect(error.reason.contains(reason), "\(error)")
        #expect(error.description.contains(key), "\(error)")
    }

    @Test("domain refusals", arguments: [
        ("", nil as String?, nil as Int?, "no [[domain]]"),
        ("[domain]\nname = \"x\"", "domain", 1, "expected [[domain]] tables"),
        ("[[domain]]\nname = \"a\"\nupstream = \"file:../var/a\"\nowners = 1", "[[domain]] owners", 4, "unknown key"),
        ("[[domain]]\nupstream = \"file:../var/a\"", "[[domain]]", 1, "missing key name"),
        ("[[domain]]\nname = \"a\"", "[[domain]]", 1, "missing key upstream"),
        ("[[domain]]\nname = \".hidden\"\nupstream = \"file:../var/a\"", "[[domain]] name", 2, "expected 1-64"),
        ("[[domain]]\nname = \"a/b\"\nupstream = \"file:../var/a\"", "[[domain]] name", 2, "expected 1-64"),
        ("[[domain]]\nname = 7\nupstream = \"file:../var/a\"", "[[domain]] name", 2, "expected a string, got an integer"),
        (
            "[[domain]]\nname = \"a\"\nupstream = \"file:../var/a\"\n[[domain]]\nname = \"a\"\nupstream = \"file:../var/b\"",
            "[[domain]] name", 5, "domain \"a\" is defined twice (first on line 2)"
        ),
        ("[[domain]]\nname = \"a\"\nupstream = \"ftp://host/x\"", "[[domain]] upstream", 3, "expected file:PATH"),
        ("[[domain]]\nname = \"a\"\nupstream = \"https://\"", "[[domain]] upstream", 3, "not a valid URL"),
        ("[[domain]]\nname = \"a\"\nupstream = \"file:../elsewhere\"", "[[domain]] upstream", 3, "does not exist"),
        ("[[domain]]\nname = \"a\"\nupstream = \"file:../var/a\"\nlisting_ttl = true", "[[domain]] listing_ttl", 4, "expected seconds"),
    ])
    func domainRefusals(text: String, key: String?, line: Int?, reason: String) throws {
        let folder = try TemporaryFolder()
        let error = try refusal(text, in: folder)
        #expect(error.key == key, "\(error)")
        #expect(error.line == line, "\(error)")
        #expect(error.reason.contains(reason), "\(error)")
    }

    @Test("a file: upstream that is a file, not a folder, is refused")
    func upstreamNotAFolder() throws {
        let folder = try TemporaryFolder()
        try Data("x".utf8).write(to: folder.path("plain"))
        let error = try refusal("[[domain]]\nname = \"a\"\nupstream = \"file:../plain\"", in: folder)
        #expect(error.reason.contains("is not a folder"))
    }

    @Test("a missing file: upstream inside a custom state folder is accepted")
    func upstreamInsideState() throws {
        let folder = try TemporaryFolder()
        let file = try folder.config("[server]\nstate = \"/nonexistent/davgate-state\"\n[[domain]]\nname = \"a\"\nupstream = \"file:///nonexistent/davgate-state/a\"")
        let config = try GatewayConfig.load(from: file)
        #expect(config.domains[0].upstream == .directory(URL(fileURLWithPath: "/nonexistent/davgate-state/a")))
    }

    @Test("a certificate file without its key file (and the reverse) is refused, naming both")
    func certificateWithoutKey() throws {
        let folder = try TemporaryFolder()
        try FileManager.default.createDirectory(at: folder.path("certs"), withIntermediateDirectories: true)
        try Data("cert".utf8).write(to: folder.path("certs/davgate.pem"))
        var error = try refusal(minimalDomain, in: folder)
        #expect(error.key == "[server] private_key")
        #expect(error.line == nil, "no [server] table in the file: no line to point at")
        #expect(error.reason.contains(folder.path("certs/davgate.pem").path))
        #expect(error.reason.contains(folder.path("certs/davgate-key.pem").path))

        try FileManager.default.removeItem(at: folder.path("certs/davgate.pem"))
        try Data("key".utf8).write(to: folder.path("certs/davgate-key.pem"))
        error = try refusal(minimalDomain, in: folder)
        #expect(error.key == "[server] certificate")
        #expect(error.reason.contains(folder.path("certs/davgate.pem").path))
        #expect(error.reason.contains(folder.path("certs/davgate-key.pem").path))

        // Without TLS the pair is not used, so not checked.
        let file = try folder.config("[server]\ntls = false\n" + minimalDomain)
        #expect(try GatewayConfig.load(from: file).server.tls == false)
    }

    @Test("a missing file and unparsable TOML are refused with the file and line")
    func missingAndUnparsable() throws {
        let folder = try TemporaryFolder()
        let missing = folder.path("conf/none.toml")
        #expect(throws: ConfigError(file: missing.path, reason: "file not found")) {
            try GatewayConfig.load(from: missing)
        }
        let error = try refusal("[server]\nlisten = \"127.0.0.1:8443\"\ntls = maybe\n" + minimalDomain, in: folder)
        #expect(error.key == nil)
        #expect(error.line == 3)
        #expect(error.description.contains(":3: column 7: invalid value maybe"), "\(error)")
    }

    @Test("a relative configuration path is shown as given and resolved to an absolute file")
    func relativeConfigPath() throws {
        let folder = try TemporaryFolder()
        _ = try folder.config(minimalDomain)
        let relative = URL(fileURLWithPath: "conf/davgate.toml", relativeTo: folder.url)
        let config = try GatewayConfig.load(from: relative)
        #expect(config.file == folder.path("conf/davgate.toml"))
        #expect(config.server.state == folder.path("var"))
        do {
            _ = try GatewayConfig.load(from: URL(fileURLWithPath: "conf/missing.toml", relativeTo: folder.url))
            Issue.record("a missing file was accepted")
        } catch {
            #expect(error.description == "conf/missing.toml: file not found")
        }
    }

    @Test("the shipped conf/davgate.toml loads with the documented values")
    func shippedConfiguration() throws {
        let file = repositoryRoot.appendingPathComponent(GatewayConfig.defaultPath)
        let config = try GatewayConfig.load(from: file)
        let server = config.server
        #expect(server.host == "127.0.0.1")
        #expect(server.port == 8443)
        #expect(server.tls)
        #expect(server.certificate == repositoryRoot.appendingPathComponent("certs/davgate.pem").standardizedFileURL)
        #expect(server.privateKey == repositoryRoot.appendingPathComponent("certs/davgate-key.pem").standardizedFileURL)
        #expect(server.state == repositoryRoot.appendingPathComponent("var").standardizedFileURL)
        #expect(!server.allowBasicOverHTTP)
        #expect(server.maxXMLBodyBytes == 1 << 20)
        #expect(server.listingTTL == 5)
        #expect(server.lockTimeoutDefault == 600)
        #expect(server.lockTimeoutMax == 604_800)
        #expect(server.logLevel == "info")
        #expect(server.realm == "davgate")
        #expect(config.domains.count == 1)
        #expect(config.domains[0].name == "files")
        #expect(config.domains[0].upstream == .directory(repositoryRoot.appendingPathComponent("var/upstream").standardizedFileURL))

        // Every commented-out default in it, uncommented, loads to the same values.
        let text = try String(contentsOf: file, encoding: .utf8)
        let uncommented = text.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            // "# key = value": a commented-out setting, not prose.
            let isSetting = line.hasPrefix("# ") && line.dropFirst(2).prefix { $0 != " " }.allSatisfy { $0.isLowercase || $0 == "_" }
                && line.dropFirst(2).drop { $0 != " " }.hasPrefix(" = ")
            return isSetting ? String(line.dropFirst(2)) : String(line)
        }.joined(separator: "\n")
        let folder = try TemporaryFolder()
        let copy = try folder.config(uncommented)
        let explicit = try GatewayConfig.load(from: copy)
        #expect(explicit.server.maxXMLBodyBytes == server.maxXMLBodyBytes)
        #expect(explicit.server.listingTTL == server.listingTTL)
        #expect(explicit.server.lockTimeoutMax == server.lockTimeoutMax)
        #expect(explicit.server.logLevel == server.logLevel)
        #expect(explicit.server.realm == server.realm)
        #expect(explicit.domains[0].listingTTL == config.domains[0].listingTTL)
    }
}
