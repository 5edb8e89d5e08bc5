import DavgateTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Issue 12, items 1-3, from a client against the real binary: nothing
/// outside a folder upstream is reachable through links inside it; names
/// the upstream cannot hold are refused before they are acknowledged; what
/// arrives upstream has the modes other programs need.
@Suite("the upstream's boundaries: links, names, modes")
struct UpstreamBoundaryTests {
    static let lockBody = """
        <D:lockinfo xmlns:D="DAV:"><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype></D:lockinfo>
        """

    /// The hrefs a PROPFIND Depth 1 lists, decoded, without the folder's own.
    static func listed(_ client: DAVClient, _ folder: String) async throws -> [String] {
        let reply = try await client.send("PROPFIND", folder, headers: [("Depth", "1")])
        #expect(reply.status == 207, "PROPFIND \(folder)")
        let tree = try #require(XMLTree.parse(reply.body))
        return tree.descendants("href").map { $0.text.removingPercentEncoding ?? $0.text }.filter { $0 != folder }
    }

    static func isLink(_ url: URL) -> Bool {
        var st = stat()
        return lstat(url.path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFLNK
    }

    static func mode(_ url: URL) -> mode_t {
        var st = stat()
        return stat(url.path, &st) == 0 ? st.st_mode & 0o7777 : 0
    }

    @Test("a link that leads out of the folder is hidden, and no method reads, writes, lists or removes anything through it")
    func linksOutOfTheRootAreRefused() async throws {
        try await withGateway(extraDomain: "upload_delay = 0.2") { server, client in
            let fm = FileManager.default
            let upstream = server.upstream
            let outside = server.root.appendingPathComponent("outside")
            try fm.createDirectory(at: outside, withIntermediateDirectories: true)
            try Data("secret".utf8).write(to: outside.appendingPathComponent("secret.txt"))
            try fm.createDirectory(at: upstream.appendingPathComponent("docs"), withIntermediateDirectories: true)
            try Data("a".utf8).write(to: upstream.appendingPathComponent("docs/a.txt"))
            // The case (davgate's own certificate folder, by a relative
            // link climbing out), an absolute link, and a link to one file.
            try fm.createSymbolicLink(atPath: upstream.appendingPathComponent("certs-link").path, withDestinationPath: "../../certs")
            try fm.createSymbolicLink(atPath: upstream.appendingPathComponent("abs-link").path, withDestinationPath: outside.path)
            let keyLink = upstream.appendingPathComponent("key-link.pem")
            try fm.createSymbolicLink(atPath: keyLink.path, withDestinationPath: server.root.appendingPathComponent("certs/davgate-key.pem").path)
            let key = try Data(contentsOf: server.root.appendingPathComponent("certs/davgate-key.pem"))

            let top = try await Self.listed(client, "/files/")
            #expect(top.contains("/files/docs/"))
            for hidden in ["certs-link", "abs-link", "key-link.pem"] {
                #expect(!top.contains { $0.hasPrefix("/files/\(hidden)") }, "\(hidden) is not listed")
            }
            #expect(try await client.send("GET", "/files/key-link.pem").status == 404)
            #expect(try await client.send("GET", "/files/certs-link/davgate-key.pem").status == 404)
            #expect(try await client.send("GET", "/files/abs-link/secret.txt").status == 404)
            for link in ["certs-link", "abs-link"] {
                #expect(try await client.send("PROPFIND", "/files/\(link)/", headers: [("Depth", "1")]).status == 404, "PROPFIND \(link)")
                #expect(try await client.send("PUT", "/files/\(link)/new.txt", body: "planted").status == 409, "PUT into \(link)")
                #expect(try await client.send("MKCOL", "/files/\(link)/made").status == 409, "MKCOL in \(link)")
                #expect(try await client.send("LOCK", "/files/\(link)/locked.txt", body: Self.lockBody).status == 409, "LOCK in \(link)")
                #expect(try await client.send("DELETE", "/files/\(link)").status == 404, "DELETE \(link)")
                #expect(try await client.send("DELETE", "/files/\(link)/secret.txt").status == 404, "DELETE below \(link)")
                #expect(try await client.send("PROPPATCH", "/files/\(link)", body: """
                    <D:propertyupdate xmlns:D="DAV:"><D:set><D:prop><x xmlns="urn:t">1</x></D:prop></D:set></D:propertyupdate>
                    """).status == 404, "PROPPATCH \(link)")
                for method in ["MOVE", "COPY"] {
                    let moved = try await client.send(method, "/files/docs/a.txt", headers: [("Destination", "\(client.base)/files/\(link)/a.txt")])
                    #expect(moved.status == 409, "\(method) into \(link)")
                }
            }
            // A PUT of the escaping file link's name never writes through it:
            // the name is taken upstream, so ours is kept beside it.
            #expect(try await client.send("PUT", "/files/key-link.pem", body: "overwritten?").status == 201)
            #expect(try await client.uploadsDrained())

            #expect(try Data(contentsOf: server.root.appendingPathComponent("certs/davgate-key.pem")) == key, "the key is untouched")
            #expect(Self.isLink(keyLink), "the link is still a link")
            #expect(try fm.contentsOfDirectory(atPath: outside.path) == ["secret.txt"], "nothing was created outside")
            #expect(try String(contentsOf: outside.appendingPathComponent("secret.txt"), encoding: .utf8) == "secret")
            #expect(try fm.contentsOfDirectory(atPath: server.root.appendingPathComponent("certs").path).sorted() == ["davgate-key.pem", "davgate.pem"])
            #expect(Self.isLink(upstream.appendingPathComponent("certs-link")) && Self.isLink(upstream.appendingPathComponent("abs-link")))
            #expect(try String(contentsOf: upstream.appendingPathComponent("docs/a.txt"), encoding: .utf8) == "a", "MOVE and COPY left the source")
        }
    }

    @Test("a link that stays inside is followed as what it points to; DELETE removes the link, not its target; a link to its own ancestor is hidden")
    func linksInsideTheRootAreFollowed() async throws {
        try await withGateway(extraDomain: "upload_delay = 0.2") { server, client in
            let fm = FileManager.default
            let upstream = server.upstream
            try fm.createDirectory(at: upstream.appendingPathComponent("docs"), withIntermediateDirectories: true)
            try Data("inside".utf8).write(to: upstream.appendingPathComponent("docs/a.txt"))
            try fm.createSymbolicLink(atPath: upstream.appendingPathComponent("alias").path, withDestinationPath: "docs")
            try fm.createSymbolicLink(atPath: upstream.appendingPathComponent("a-link.txt").path, withDestinationPath: "docs/a.txt")
            try fm.createSymbolicLink(atPath: upstream.appendingPathComponent("docs/loop").path, withDestinationPath: "..")

            let top = try await Self.listed(client, "/files/")
            #expect(top.contains("/files/alias/"), "a folder link is listed as a folder")
            #expect(top.contains("/files/a-link.txt"))
            #expect(try await client.send("GET", "/files/a-link.txt").text == "inside")
            #expect(try await client.send("GET", "/files/alias/a.txt").text == "inside")
            #expect(!(try await Self.listed(client, "/files/docs/")).contains { $0.contains("loop") }, "a cycle is hidden")

            #expect(try await client.send("PUT", "/files/alias/b.txt", body: "through the link").status == 201)
            #expect(try await client.uploadsDrained())
            #expect(try String(contentsOf: upstream.appendingPathComponent("docs/b.txt"), encoding: .utf8) == "through the link")

            #expect(try await client.send("DELETE", "/files/alias").status == 204)
            #expect(!Self.isLink(upstream.appendingPathComponent("alias")) && !fm.fileExists(atPath: upstream.appendingPathComponent("alias").path))
            #expect(try fm.contentsOfDirectory(atPath: upstream.appendingPathComponent("docs").path).sorted() == ["a.txt", "b.txt", "loop"],
                    "the target folder keeps its files")
        }
    }

    @Test("names the upstream cannot hold get 414 or 400 with a DAV error naming the limit, and leave nothing behind")
    func namesBeyondTheUpstreamAreRefused() async throws {
        try await withGateway { server, client in
            let long = String(repeating: "n", count: 300)
            let longest = String(repeating: "m", count: 255)
            let accents = String(repeating: "é", count: 128) // 256 bytes in UTF-8

            let put = try await client.send("PUT", "/files/\(long)", body: "never stored")
            #expect(put.status == 414)
            #expect(put.text.contains("name-too-long") && put.text.contains("255 bytes"), "\(put.text)")
            #expect(try await client.send("PUT", "/files/\(accents.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)", body: "x").status == 414)
            #expect(try await client.send("MKCOL", "/files/\(long)").status == 414)
            #expect(try await client.send("LOCK", "/files/\(long)", body: Self.lockBody).status == 414)
            let control = try await client.send("PUT", "/files/line%0Abreak.txt", body: "x")
            #expect(control.status == 400)
            #expect(control.text.contains("name-has-control-character"), "\(control.text)")
            #expect(try await client.send("MKCOL", "/files/tab%09folder").status == 400)
            #expect(try await client.send("PUT", "/files/del%7F.txt", body: "x").status == 400)

            #expect(try await client.send("PUT", "/files/ok.txt", body: "ok").status == 201)
            for method in ["MOVE", "COPY"] {
                let moved = try await client.send(method, "/files/ok.txt", headers: [("Destination", "\(client.base)/files/\(long)")])
                #expect(moved.status == 400, "\(method) to a long name")
                #expect(moved.text.contains("name-too-long"))
                let cr = try await client.send(method, "/files/ok.txt", headers: [("Destination", "\(client.base)/files/a%0Db")])
                #expect(cr.status == 400, "\(method) to a name with CR")
            }

            // At the limit it is accepted and arrives.
            #expect(try await client.send("PUT", "/files/\(longest)", body: "fits").status == 201)
            #expect(try await client.uploadsDrained())
            let names = try server.upstreamNames().sorted()
            #expect(names == [longest, "ok.txt"].sorted(), "nothing refused reached the upstream")
            let top = try await Self.listed(client, "/files/")
            #expect(top.sorted() == ["/files/\(longest)", "/files/ok.txt"].sorted(), "and no index row stayed")
            let uploads = try await client.uploads()
            #expect(uploads.pending == 0 && uploads.failed == 0, "and no journal row")
        }
    }

    @Test("files and folders arrive upstream with 0644 and 0755, or the configured modes, whatever the umask; an overwrite keeps a file's mode; the cache stays private")
    func modesUpstream() async throws {
        try await withGateway(extraDomain: "upload_delay = 0.1") { (server: DavgateProcess, client: DAVClient) async throws in
            #expect(try await client.send("MKCOL", "/files/dir").status == 201)
            #expect(try await client.send("PUT", "/files/dir/f.txt", body: "one").status == 201)
            #expect(try await client.uploadsDrained())
            let file = server.upstream.appendingPathComponent("dir/f.txt")
            #expect(Self.mode(server.upstream.appendingPathComponent("dir")) == 0o755)
            #expect(Self.mode(file) == 0o644)
            #expect(Self.mode(server.state.appendingPathComponent("cache/files")) == 0o700, "the cache folder is the owner's alone")

            #expect(chmod(file.path, 0o750) == 0)
            #expect(try await client.send("PUT", "/files/dir/f.txt", body: "two").status == 204)
            #expect(try await client.uploadsDrained())
            #expect(try String(contentsOf: file, encoding: .utf8) == "two")
            #expect(Self.mode(file) == 0o750, "an overwrite keeps the file's mode")
        }
        try await withGateway(extraDomain: "upload_delay = 0.1\nupstream_file_mode = \"0664\"\nupstream_folder_mode = \"2775\"") { (server: DavgateProcess, client: DAVClient) async throws in
            #expect(try await client.send("MKCOL", "/files/shared").status == 201)
            #expect(try await client.send("PUT", "/files/shared/g.txt", body: "group").status == 201)
            #expect(try await client.send("COPY", "/files/shared", headers: [("Destination", "\(client.base)/files/copied")]).status == 201)
            #expect(try await client.uploadsDrained())
            #expect(Self.mode(server.upstream.appendingPathComponent("shared")) == 0o2775, "exact, though the umask strips group write")
            #expect(Self.mode(server.upstream.appendingPathComponent("shared/g.txt")) == 0o664)
            #expect(Self.mode(server.upstream.appendingPathComponent("copied")) == 0o2775)
            #expect(Self.mode(server.upstream.appendingPathComponent("copied/g.txt")) == 0o664, "a copy keeps the file's mode")
        }
    }

    @Test("a WebDAV upstream that answers 414 to a name teaches the limit: the next such name is refused here without asking it, shorter ones still go")
    func webDAVNameLimitIsLearned() async throws {
        // Apache's request line limit: a real server that refuses long names with 414.
        try await withApacheGateway(apacheConfig: "LimitRequestLine 250", extraDomain: "write_mode = \"through\"") { g in
            let long = String(repeating: "w", count: 240), short = String(repeating: "s", count: 200)
            let first = try await g.client.send("PUT", "/lazy/\(long)", body: "refused upstream")
            #expect(first.status == 502, "the upstream's refusal, reported")
            #expect(first.text.contains("414"), "\(first.text)")
            #expect(g.apache.accessLines.contains { $0.contains(" 414 ") }, "Apache did answer 414")

            let mark = g.apache.accessLines.count
            let second = try await g.client.send("PUT", "/lazy/\(long)", body: "refused here")
            #expect(second.status == 414)
            #expect(second.text.contains("name-too-long") && second.text.contains("239 bytes"), "\(second.text)")
            // (A listing refresh may go meanwhile; the name itself never does.)
            #expect(!g.upstreamRequests(since: mark).contains { $0.hasPrefix("PUT ") }, "refused without asking the upstream")

            #expect(try await g.client.send("PUT", "/lazy/\(short)", body: "fits").status == 201)
            #expect(try String(contentsOf: g.upstreamFolder.appendingPathComponent(short), encoding: .utf8) == "fits")
        }
    }
}
