import DavgateTestSupport
import Foundation
import Testing

/// A write's lock and condition checks hold for the whole write, not only
/// until its body starts (issue 13): the provider checks them again where
/// the write commits, under the same coordination that grants a LOCK, so
/// a LOCK granted while a PUT's body arrives wins (the PUT gets 423 and
/// nothing is stored), and a change its conditions did not see fails it
/// with 412. Every order is driven against the real binary, with the PUT's
/// body held half-sent on a raw connection while the other client acts,
/// in both write modes.
@Suite("writers coordinated for the whole write", .serialized)
struct WriteCoordinationTests {
    static let lockinfo = AdversarialTests.lockinfo
    static let half = 1 << 20

    /// A PUT of `2 * half` bytes of `fill` sent up to its middle: the server
    /// has checked it and is receiving its body.
    static func startPut(_ server: DavgateProcess, _ path: String, fill: UInt8, headers: [String] = []) async throws -> RawConnection {
        let connection = try await RawConnection.open(server)
        let head = (["PUT \(path) HTTP/1.1", "Host: 127.0.0.1:\(server.port)", AdversarialTests.authorization(server),
                     "Content-Length: \(2 * half)"] + headers).joined(separator: "\r\n") + "\r\n\r\n"
        try await connection.send(head)
        try await connection.send(Data(repeating: fill, count: half))
        // The head is checked as soon as it arrives; give the body time to flow.
        try await Task.sleep(for: .milliseconds(400))
        return connection
    }

    /// Sends the rest of the body and returns the PUT's status.
    static func finishPut(_ connection: RawConnection, fill: UInt8) async throws -> Int {
        try await connection.send(Data(repeating: fill, count: half))
        let status = try await connection.response(within: .seconds(30)).status
        connection.close()
        return status
    }

    static func token(_ reply: DAVClient.Reply) throws -> String {
        try #require(reply.header("Lock-Token")).trimmingCharacters(in: CharacterSet(charactersIn: "<>"))
    }

    static let modes = ["back", "through"]

    @Test("a LOCK granted while a PUT's body arrives stops that PUT (423); the file and the lock stay", arguments: modes)
    func lockDuringPut(mode: String) async throws {
        try await withGateway(extraDomain: "write_mode = \"\(mode)\"") { server, client in
            #expect(try await client.send("PUT", "/files/doc.txt", body: "original").status == 201)
            let put = try await Self.startPut(server, "/files/doc.txt", fill: 0x41)
            let lock = try await client.send("LOCK", "/files/doc.txt", body: Self.lockinfo)
            #expect(lock.status == 200, "LOCK while the PUT's body arrives: \(lock.status)")
            #expect(try await Self.finishPut(put, fill: 0x41) == 423)
            let get = try await client.send("GET", "/files/doc.txt")
            #expect(get.status == 200 && get.text == "original", "the locked file was overwritten: \(get.body.count) bytes")
            // The holder still writes with its token.
            let token = try Self.token(lock)
            #expect(try await client.send("PUT", "/files/doc.txt", headers: [("If", "(<\(token)>)")], body: "holder").status == 204)
            #expect(try await client.send("GET", "/files/doc.txt").text == "holder")
        }
    }

    @Test("a depth-infinity LOCK on the folder granted while a PUT of a new file arrives stops it; no file appears", arguments: modes)
    func folderLockDuringPutOfNewFile(mode: String) async throws {
        try await withGateway(extraDomain: "write_mode = \"\(mode)\"") { server, client in
            #expect(try await client.send("MKCOL", "/files/shared").status == 201)
            let put = try await Self.startPut(server, "/files/shared/new.bin", fill: 0x42)
            let lock = try await client.send("LOCK", "/files/shared/", headers: [("Depth", "infinity")], body: Self.lockinfo)
            #expect(lock.status == 200)
            #expect(try await Self.finishPut(put, fill: 0x42) == 423)
            #expect(try await client.send("GET", "/files/shared/new.bin").status == 404)
            let listing = try await client.send("PROPFIND", "/files/shared/", headers: [("Depth", "1")])
            #expect(Multistatus(listing)?.hrefs == ["/files/shared/"])
        }
    }

    @Test("the holder's PUT goes through a refresh of its lock, and others' DELETE and MOVE meanwhile get 423", arguments: modes)
    func holderPutDuringRefreshAndOthersWrites(mode: String) async throws {
        try await withGateway(extraDomain: "write_mode = \"\(mode)\"") { server, client in
            #expect(try await client.send("PUT", "/files/held.txt", body: "original").status == 201)
            let lock = try await client.send("LOCK", "/files/held.txt", headers: [("Timeout", "Second-60")], body: Self.lockinfo)
            let token = try Self.token(lock)
            let put = try await Self.startPut(server, "/files/held.txt", fill: 0x43, headers: ["If: (<\(token)>)"])
            let refresh = try await client.send("LOCK", "/files/held.txt", headers: [("If", "(<\(token)>)"), ("Timeout", "Second-600")])
            #expect(refresh.status == 200)
            #expect(try await client.send("DELETE", "/files/held.txt").status == 423)
            #expect(try await client.send("MOVE", "/files/held.txt", headers: [("Destination", "\(client.base)/files/elsewhere.txt")]).status == 423)
            #expect(try await Self.finishPut(put, fill: 0x43) == 204)
            let get = try await client.send("GET", "/files/held.txt")
            #expect(get.status == 200 && get.body == Data(repeating: 0x43, count: 2 * Self.half))
            #expect(try await client.send("GET", "/files/elsewhere.txt").status == 404)
        }
    }

    @Test("a conditional PUT whose file is deleted or moved while its body arrives fails with 412 and stores nothing", arguments: modes)
    func conditionalPutAfterDeleteOrMove(mode: String) async throws {
        try await withGateway(extraDomain: "write_mode = \"\(mode)\"") { server, client in
            for change in ["DELETE", "MOVE"] {
                let created = try await client.send("PUT", "/files/cond.txt", body: "original")
                #expect(created.status == 201)
                let etag = try #require(created.header("ETag"))
                let put = try await Self.startPut(server, "/files/cond.txt", fill: 0x44, headers: ["If-Match: \(etag)"])
                if change == "DELETE" {
                    #expect(try await client.send("DELETE", "/files/cond.txt").status == 204)
                } else {
                    #expect(try await client.send("MOVE", "/files/cond.txt", headers: [("Destination", "\(client.base)/files/moved.txt")]).status == 201)
                }
                #expect(try await Self.finishPut(put, fill: 0x44) == 412, "\(change) during an If-Match PUT")
                #expect(try await client.send("GET", "/files/cond.txt").status == 404, "\(change): the PUT stored something")
            }
            #expect(try await client.send("GET", "/files/moved.txt").text == "original")
            // If-None-Match: * with a file appearing meanwhile: 412, the newcomer stays.
            let put = try await Self.startPut(server, "/files/fresh.txt", fill: 0x45, headers: ["If-None-Match: *"])
            #expect(try await client.send("PUT", "/files/fresh.txt", body: "first").status == 201)
            #expect(try await Self.finishPut(put, fill: 0x45) == 412)
            #expect(try await client.send("GET", "/files/fresh.txt").text == "first")
        }
    }

    @Test("an unconditional PUT whose file is deleted while its body arrives creates it again (the last writer wins)")
    func unconditionalPutAfterDelete() async throws {
        try await withGateway { server, client in
            #expect(try await client.send("PUT", "/files/plain.txt", body: "original").status == 201)
            let put = try await Self.startPut(server, "/files/plain.txt", fill: 0x46)
            #expect(try await client.send("DELETE", "/files/plain.txt").status == 204)
            #expect(try await Self.finishPut(put, fill: 0x46) == 201)
            #expect(try await client.send("GET", "/files/plain.txt").body == Data(repeating: 0x46, count: 2 * Self.half))
        }
    }

    /// Small unconditional PUTs are checked only where they commit
    /// (`DAVExchange.checksWaitForCommit`): every refusal the checks before
    /// the body gave must come from the commit, with nothing stored.
    @Test("a small PUT checked only at its commit is refused as before: no folder 409, a collection 405, a lock 423; nothing stored", arguments: modes)
    func smallPutsCheckedAtCommit(mode: String) async throws {
        try await withGateway(extraDomain: "write_mode = \"\(mode)\"") { server, client in
            #expect(try await client.send("MKCOL", "/files/dir").status == 201)
            #expect(try await client.send("PUT", "/files/missing/new.txt", body: "x").status == 409)
            #expect(try await client.send("PUT", "/files/dir", body: "x").status == 405)
            #expect(try await client.send("PUT", "/files/held.txt", body: "original").status == 201)
            let lock = try await client.send("LOCK", "/files/held.txt", body: Self.lockinfo)
            #expect(lock.status == 200)
            #expect(try await client.send("PUT", "/files/held.txt", body: "intruder").status == 423)
            let folderLock = try await client.send("LOCK", "/files/dir/", headers: [("Depth", "infinity")], body: Self.lockinfo)
            #expect(folderLock.status == 200)
            #expect(try await client.send("PUT", "/files/dir/new.txt", body: "intruder").status == 423)

            #expect(try await client.send("GET", "/files/held.txt").text == "original")
            #expect(try await client.send("GET", "/files/dir/new.txt").status == 404)
            let root = try #require(Multistatus(try await client.send("PROPFIND", "/files/", headers: [("Depth", "1")])))
            #expect(Set(root.hrefs) == ["/files/", "/files/dir/", "/files/held.txt"])
            let dir = try #require(Multistatus(try await client.send("PROPFIND", "/files/dir/", headers: [("Depth", "1")])))
            #expect(dir.hrefs == ["/files/dir/"])
            // Nor did the upstream get any of them (a locked file's upload
            // waits for its lock, so held.txt may not be there yet).
            let upstream = server.upstream
            #expect(!FileManager.default.fileExists(atPath: upstream.appendingPathComponent("missing").path))
            #expect(((try? FileManager.default.contentsOfDirectory(atPath: upstream.appendingPathComponent("dir").path)) ?? []).isEmpty)
            let held = try? String(contentsOf: upstream.appendingPathComponent("held.txt"), encoding: .utf8)
            #expect(held == nil || held == "original")
            // The holders write with their tokens.
            #expect(try await client.send("PUT", "/files/held.txt", headers: [("If", "(<\(try Self.token(lock))>)")], body: "holder").status == 204)
            // A new member joins its folder's depth-infinity lock (RFC 4918
            // section 6.1): the token matches untagged, as for the folder.
            let token = try Self.token(folderLock)
            #expect(try await client.send("PUT", "/files/dir/new.txt", headers: [("If", "(<\(token)>)")], body: "holder").status == 201)
            #expect(try await client.send("PUT", "/files/dir/tagged.txt", headers: [("If", "<\(client.base)/files/dir/> (<\(token)>)")],
                                          body: "holder").status == 201)
            #expect(try await client.send("PUT", "/files/dir/other.txt", headers: [("If", "(<opaquelocktoken:not-a-lock>)")],
                                          body: "x").status == 412)
            #expect(try await client.send("GET", "/files/dir/new.txt").text == "holder")
            #expect(try await client.send("GET", "/files/dir/other.txt").status == 404)
        }
    }
}
