import DavgateTestSupport
import Foundation
import Testing

/// `davgate watch` as a user runs it: a real child process following a
/// real server's change feed over TLS.
@Suite("davgate watch")
struct WatchCommandTests {
    /// The JSON lines a watcher printed so far, as (change, href) pairs.
    func printed(_ file: URL) throws -> [(change: String, href: String)] {
        guard let text = try? String(contentsOf: file, encoding: .utf8) else { return [] }
        return try text.split(separator: "\n").map { line in
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(line)")
            return (try #require(object["change"] as? String), try #require(object["href"] as? String))
        }
    }

    @Test("a burst of 1,000 changes is printed once each; stopped and started again, it resumes from its token file and misses nothing")
    func burstAndResume() async throws {
        try await withGateway(extraDomain: "listing_ttl = 600") { server, client in
            let folder = server.root.appendingPathComponent("watch")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let tokenFile = folder.appendingPathComponent("token"), password = folder.appendingPathComponent("password")
            try (server.adminPassword + "\n").write(to: password, atomically: true, encoding: .utf8)
            func watch(into out: URL) throws -> pid_t {
                try ChildProcess.spawn(DavgateProcess.executable.path,
                                       ["watch", "/files/", "--json", "--token-file", tokenFile.path, "--interval", "0.2",
                                        "--config", server.configFile.path, "--url", server.baseURL, "--password-stdin"],
                                       stdin: .file(password), stdout: .file(out), stderr: .file(folder.appendingPathComponent("stderr")))
            }
            #expect(try await client.send("PUT", "/files/before.txt", body: "there before the watcher").status == 201)

            let first = folder.appendingPathComponent("first.jsonl")
            let watcher = try watch(into: first)
            try await eventually("the watcher saved its starting position") { FileManager.default.fileExists(atPath: tokenFile.path) }

            // 10 folders of 99 files: 1,000 new members, sent 8 at a time.
            var expected = Set<String>()
            for d in 0..<10 {
                #expect(try await client.send("MKCOL", "/files/d\(d)/").status == 201)
                expected.insert("/files/d\(d)/")
            }
            let names = (0..<10).flatMap { d in (0..<99).map { "/files/d\(d)/f\($0).txt" } }
            expected.formUnion(names)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for lane in 0..<8 {
                    group.addTask {
                        for name in names.enumerated() where name.offset % 8 == lane {
                            let status = try await client.send("PUT", name.element, body: name.element).status
                            #expect(status == 201, "PUT \(name.element): \(status)")
                        }
                    }
                }
                try await group.waitForAll()
            }
            #expect(expected.count == 1000)
            try await eventually("the watcher printed all 1,000 changes", seconds: 60) {
                Set(try printed(first).map(\.href)).isSuperset(of: expected)
            }
            try await Task.sleep(for: .seconds(1))  // five more polls: nothing more may come
            ChildProcess.stop(watcher)
            let lines = try printed(first)
            #expect(lines.count == 1000, "each change once: \(lines.count) lines")
            #expect(Set(lines.map(\.href)) == expected, "nothing else, not the file from before the watcher")
            #expect(lines.allSatisfy { $0.change == "changed" })

            // While it is stopped: a new file, a deletion and a rename.
            #expect(try await client.send("PUT", "/files/while stopped.txt", body: "new").status == 201)
            #expect(try await client.send("DELETE", "/files/d0/f0.txt").status == 204)
            #expect(try await client.send("MOVE", "/files/d1/f1.txt", headers: [("Destination", "\(client.base)/files/d1/renamed.txt")]).status == 201)
            let second = folder.appendingPathComponent("second.jsonl")
            let resumed = try watch(into: second)
            defer { ChildProcess.stop(resumed) }
            let wanted: [String: String] = ["/files/while%20stopped.txt": "changed", "/files/d0/f0.txt": "removed",
                                            "/files/d1/f1.txt": "removed", "/files/d1/renamed.txt": "changed"]
            try await eventually("the restarted watcher printed the changes made while it was stopped") {
                Set(try printed(second).map(\.href)).isSuperset(of: Set(wanted.keys))
            }
            try await Task.sleep(for: .seconds(1))
            let after = try printed(second)
            #expect(after.count == wanted.count, "\(after)")
            for line in after { #expect(wanted[line.href] == line.change, "\(line)") }
        }
    }
}
