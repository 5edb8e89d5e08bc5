import Foundation
import GatewaySetup
import ProviderCore
import Testing

@Suite("[index]: the shared index's settings")
struct IndexSettingsTests {
    static let domain = "[[domain]]\nname = \"files\"\nupstream = \"https://cloud.example/dav/\"\n"

    @Test("no [index] keeps the embedded index and write-back; [index] url selects PostgreSQL and write-through")
    func sharedIndex() throws {
        let folder = try TemporaryFolder()
        let embedded = try GatewayConfig.load(from: try folder.config(Self.domain))
        #expect(embedded.index == nil)
        #expect(embedded.domains[0].writeMode == .back)

        let shared = try GatewayConfig.load(from: try folder.config("""
            [index]
            url = "postgres://dav@db.example:6432/davgate?tls=prefer"
            credentials = { service = "postgres", account = "dav" }

            \(Self.domain)
            """))
        let index = try #require(shared.index)
        #expect(index.location.user == "dav" && index.location.host == "db.example" && index.location.port == 6432)
        #expect(index.location.database == "davgate" && index.location.tls == .prefer && index.location.password == nil)
        #expect(index.credentials == VaultReference(service: "postgres", account: "dav"))
        #expect(shared.domains[0].writeMode == .through, "a shared index acknowledges a write once the upstream holds it")
        #expect(index.location.description == "postgres://dav@db.example:6432/davgate")
    }

    @Test("TLS is required off loopback unless the URL says otherwise, and off on loopback")
    func tlsDefaults() throws {
        #expect(try PostgresLocation(url: "postgres://u@db.example/d").tls == .require)
        #expect(try PostgresLocation(url: "postgres://u@127.0.0.1/d").tls == .disable)
        #expect(try PostgresLocation(url: "postgresql://u@localhost:5433/d?tls=require").tls == .require)
        #expect(try PostgresLocation(url: "postgres://u@localhost/d").port == 5432)
        let six = try PostgresLocation(url: "postgres://u@[::1]:6543/d")
        #expect(six.host == "::1" && six.port == 6543 && six.tls == .disable, "an IPv6 literal without its brackets, and loopback")
        #expect(try PostgresLocation(url: "postgres://dav%20user@h/my%2Ddb").user == "dav user")
    }

    @Test("bad [index] settings are refused, naming the key and what is wrong")
    func refused() throws {
        let folder = try TemporaryFolder()
        let cases: [(String, String)] = [
            ("url = \"mysql://u@h/d\"", "postgres://"),
            ("url = \"postgres://u:secret@h/d\"", "password does not belong in the URL"),
            ("url = \"postgres://h/d\"", "names no user"),
            ("url = \"postgres://u@h/\"", "one database"),
            ("url = \"postgres://u@h/d?tls=maybe\"", "tls must be"),
            ("url = \"postgres://u@h/d?sslmode=require\"", "unknown parameter sslmode"),
            ("url = \"postgres://u@h/d?ca=relative.pem\"", "absolute path"),
            ("url = \"postgres://u@h:70000/d\"", "port"),
            ("url = \"postgres://u@h/d?ca=/nonexistent/ca.pem\"", "does not exist"),
            ("credentials = { service = \"pg\", account = \"u\" }", "needs url"),
            ("url = \"postgres://u@h/d\"\nport = 5", "port"),
        ]
        for (settings, reason) in cases {
            #expect {
                _ = try GatewayConfig.load(from: try folder.config("[index]\n\(settings)\n\n\(Self.domain)"))
            } throws: { error in
                "\(error)".contains(reason) && "\(error)".contains("[index]")
            }
        }
        #expect {
            _ = try GatewayConfig.load(from: try folder.config("\(Self.domain)access_group = \"davgate:index\"\n"))
        } throws: { error in
            "\(error)".contains("access_group") && "\(error)".contains("davgate's own")
        }
        #expect {
            _ = try GatewayConfig.load(from: try folder.config("[index]\nurl = \"postgres://u@h/d\"\n\n\(Self.domain)write_mode = \"back\"\n"))
        } throws: { error in
            "\(error)".contains("write_mode") && "\(error)".contains("shared index")
        }
    }
}
