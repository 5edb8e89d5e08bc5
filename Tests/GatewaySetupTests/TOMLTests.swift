import GatewaySetup
import Testing

@Suite("TOML")
struct TOMLTests {
    @Test("tables, arrays of tables, keys and every scalar kind")
    func grammar() throws {
        let document = try TOML.parse(
            #"""
            # a comment
            title = "davgate"   # trailing comment
            "quoted key" = 'literal \n stays'
            dotted.inner = 1

            [server]
            listen = "127.0.0.1:8443"
            tls = true
            off = false
            big = 1_000_000
            negative = -17
            hex = 0xdead_beef
            octal = 0o755
            binary = 0b1010
            pi = 3.141_5
            exponent = -2e-3
            infinity = inf
            ports = [
              80,
              443,   # https
            ]
            nested = [[1, 2], ["a"]]
            empty = []
            point = { x = 1, y.z = "deep" }

            [[domain]]
            name = "files"

            [[domain]]
            name = "team"
            [domain.users]
            alice = "rw"
            """#
        )
        #expect(document.keys == ["title", "quoted key", "dotted", "server", "domain"])
        #expect(document["title"] == .string("davgate"))
        #expect(document["quoted key"] == .string(#"literal \n stays"#))
        #expect(document["dotted"] == .table(TOMLTable(["inner": .integer(1)])))

        guard case .table(let server) = document["server"] else {
            Issue.record("no [server]")
            return
        }
        #expect(server["listen"] == .string("127.0.0.1:8443"))
        #expect(server["tls"] == .bool(true))
        #expect(server["off"] == .bool(false))
        #expect(server["big"] == .integer(1_000_000))
        #expect(server["negative"] == .integer(-17))
        #expect(server["hex"] == .integer(0xdead_beef))
        #expect(server["octal"] == .integer(0o755))
        #expect(server["binary"] == .integer(10))
        #expect(server["pi"] == .float(3.1415))
        #expect(server["exponent"] == .float(-0.002))
        #expect(server["infinity"] == .float(.infinity))
        #expect(server["ports"] == .array([.integer(80), .integer(443)]))
        #expect(server["nested"] == .array([.array([.integer(1), .integer(2)]), .array([.string("a")])]))
        #expect(server["empty"] == .array([]))
        #expect(
            server["point"] == .table(TOMLTable(["x": .integer(1), "y": .table(TOMLTable(["z": .string("deep")]))]))
        )
        #expect(server.line == 6)
        #expect(server.line(of: "tls") == 8)

        let domains = TOMLValue.array([
            .table(TOMLTable(["name": .string("files")])),
            .table(TOMLTable(["name": .string("team"), "users": .table(TOMLTable(["alice": .string("rw")]))])),
        ])
        #expect(document["domain"] == domains)
    }

    @Test("escapes in basic strings")
    func escapes() throws {
        let document = try TOML.parse(#"s = "quote \" backslash \\ nl \n tab \t e \u00E9 smile \U0001F600""#)
        #expect(document["s"] == .string("quote \" backslash \\ nl \n tab \t e é smile 😀"))
    }

    @Test("CRLF line ends and a byte order mark")
    func lineEnds() throws {
        let document = try TOML.parse("\u{FEFF}a = 1\r\n[t]\r\nb = 'x'\r\n")
        #expect(document["a"] == .integer(1))
        #expect(document["t"] == .table(TOMLTable(["b": .string("x")])))
    }

    @Test("errors carry line, column and reason", arguments: [
        ("a = 1\na = 2", 2, 1, "duplicate key a"),
        ("[t]\nx = 1\n[t]", 3, 1, "table [t] is defined twice"),
        ("a = \"open", 1, 10, "unterminated string"),
        ("\n\na = \"bad \\q\"", 3, 11, "invalid escape"),
        ("a = yes", 1, 5, "invalid value yes"),
        ("a 1", 1, 3, "expected = after the key"),
        ("a = 1 b = 2", 1, 7, "expected the end of the line"),
        ("a = 017", 1, 5, "leading zeros"),
        ("a = 1__0", 1, 5, "invalid value"),
        ("a = 99999999999999999999", 1, 5, "out of range"),
        ("d = 1979-05-27", 1, 5, "dates and times are not supported"),
        ("s = \"\"\"\nx\"\"\"", 1, 6, "multi-line strings are not supported"),
        ("a = [1, 2", 1, 10, "unterminated array"),
        ("a = [1 2]", 1, 8, "expected , or ]"),
        ("p = { x = 1 }\n[p]", 2, 1, "already defined"),
        ("a.b = 1\na.b.c = 2", 2, 1, "already defined"),
        ("[a]\nb = 1\n[[a]]", 3, 1, "not an array of tables"),
        ("a = \"\\uD800\"", 1, 8, "not a Unicode scalar value"),
        ("= 1", 1, 1, "expected a key"),
        ("a = ", 1, 5, "expected a value"),
    ])
    func errors(text: String, line: Int, column: Int, reason: String) {
        do {
            _ = try TOML.parse(text)
            Issue.record("accepted: \(text)")
        } catch {
            #expect(error.line == line, "\(error)")
            #expect(error.column == column, "\(error)")
            #expect(error.reason.contains(reason), "\(error)")
        }
    }
}
