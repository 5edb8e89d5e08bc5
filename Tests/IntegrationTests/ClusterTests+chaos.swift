import DavgateTestSupport
import Foundation
import Testing

/// The cluster broken underneath eight writing clients (``ChaosWriters``):
/// an instance SIGKILLed every few seconds, or PostgreSQL crashed once. A
/// client is only promised what it was acknowledged, so that is what is
/// counted at the end, byte for byte in the upstream folder.
extension ClusterTests {
    @Test("an instance SIGKILLed every 3 s and started again on its port while 8 clients write through HAProxy: every acknowledged write is in the upstream byte for byte, nothing else is, and every instance lists exactly those files",
          .timeLimit(.minutes(3)))
    func instancesKilled() async throws {
        try await withCluster { cluster, clients in
            #expect(try await clients.proxy.send("MKCOL", "/files/kill/").status == 201)
            let writers = ChaosWriters(folder: "kill", writers: 8)
            let deadline = ContinuousClock.now + .seconds(26)
            var kills = [0, 0, 0]
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await writers.run(through: cluster, until: deadline) }
                try await Task.sleep(for: .seconds(2))
                var victim = 0
                // The last kill leaves its instance time to come back before the writers stop.
                while ContinuousClock.now + .seconds(4) < deadline {
                    let tick = ContinuousClock.now
                    cluster.kill(victim)
                    kills[victim] += 1
                    try await cluster.restart(victim)
                    victim = (victim + 1) % DavgateCluster.names.count
                    try await Task.sleep(until: tick + .seconds(3), clock: .continuous)
                }
                try await group.waitForAll()
            }
            await Self.summarize("kill", writers, kills: kills)
            #expect(kills.allSatisfy { $0 >= 2 }, "each instance was killed at least twice: \(kills)")
            try await Self.expectAcknowledgedWrites(writers, in: cluster, clients)
        }
    }

    @Test("PostgreSQL crashed for 20 s while 8 clients write through HAProxy: every instance answers 503 with Retry-After while it is down and acknowledges no write sent meanwhile, nothing acknowledged is lost, and every instance serves again",
          .timeLimit(.minutes(3)))
    func databaseCrashed() async throws {
        try await withCluster { cluster, clients in
            #expect(try await clients.proxy.send("MKCOL", "/files/outage/").status == 201)
            let writers = ChaosWriters(folder: "outage", writers: 8)
            let deadline = ContinuousClock.now + .seconds(34)
            var outage: (down: ContinuousClock.Instant, restarting: ContinuousClock.Instant)?
            var probes: [Probe] = []
            var recovered: [Duration?] = [nil, nil, nil]
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await writers.run(through: cluster, until: deadline) }
                try await Task.sleep(for: .seconds(4))
                try await cluster.postgres.crash()
                let down = ContinuousClock.now
                // Each instance on its own port, a PUT and a listing, all at once, while
                // the database stays down long enough for an answer to wait for it.
                async let probing = Self.probe(clients, after: .seconds(1))
                try await Task.sleep(until: down + .seconds(20), clock: .continuous)
                let restarting = ContinuousClock.now
                outage = (down, restarting)
                try await cluster.postgres.start()
                probes = try await probing
                // Every instance, not only one of them, finds the database again.
                for (index, client) in clients.direct.enumerated() {
                    while recovered[index] == nil, ContinuousClock.now < restarting + .seconds(30) {
                        if (try? await client.send("PROPFIND", "/files/outage/", headers: [("Depth", "1")]).status) == 207 {
                            recovered[index] = ContinuousClock.now - restarting
                        } else {
                            try await Task.sleep(for: .milliseconds(200))
                        }
                    }
                }
                try await group.waitForAll()
            }
            await Self.summarize("PostgreSQL crash", writers, kills: nil)
            let window = try #require(outage)
            for probe in probes {
                #expect(probe.status == 503 && probe.retryAfter != nil && probe.answered < window.restarting,
                        "\(probe.request) on \(probe.instance) with PostgreSQL down: \(probe.status.map(String.init) ?? "no answer") after \(probe.answered - window.down) (the database came back after \(window.restarting - window.down)), Retry-After \(probe.retryAfter ?? "none"): \(probe.text.prefix(300))")
            }
            for name in DavgateCluster.names {
                #expect(!FileManager.default.fileExists(atPath: cluster.upstream.appendingPathComponent("outage/probe-\(name).txt").path),
                        "a write refused on \(name) did not reach the upstream")
            }
            #expect(recovered.allSatisfy { $0 != nil }, "each instance answered within 30 s of PostgreSQL's start: \(recovered)")
            let acknowledgements = await writers.ledger.acknowledgements
            // A write sent before the crash may have committed before it and
            // be answered later (its instance's work after the commit waits
            // for the database); one sent once the server was down cannot
            // have committed, and must not be acknowledged until it is back.
            let whileDown = acknowledgements.filter { $0.sent > window.down && $0.answered < window.restarting }
            #expect(whileDown.isEmpty, "\(whileDown.count) writes sent while PostgreSQL was down were acknowledged before it came back")
            #expect(acknowledgements.contains { $0.sent > window.restarting }, "writes are acknowledged again once PostgreSQL is back")
            #expect(await writers.ledger.retried["503", default: 0] > 0, "the writers met 503s while PostgreSQL was down")
            try await Self.expectAcknowledgedWrites(writers, in: cluster, clients)
        }
    }

    /// One request to one instance while the database is down, and how it was answered.
    struct Probe: Sendable {
        var instance: String
        var request: String
        var status: Int?
        var retryAfter: String?
        var text: String
        var answered: ContinuousClock.Instant
    }

    /// A PUT (`/files/outage/probe-NAME.txt`) and a listing of `/files/outage/`
    /// on each instance, all at once, `delay` from now.
    static func probe(_ clients: ClusterClients, after delay: Duration) async throws -> [Probe] {
        try await Task.sleep(for: delay)
        return await withTaskGroup(of: Probe.self) { group in
            for (index, client) in clients.direct.enumerated() {
                let name = DavgateCluster.names[index]
                for (method, path) in [("PUT", "/files/outage/probe-\(name).txt"), ("PROPFIND", "/files/outage/")] {
                    group.addTask {
                        do {
                            let reply = method == "PUT" ? try await client.send("PUT", path, body: "refused")
                                : try await client.send("PROPFIND", path, headers: [("Depth", "1")])
                            return Probe(instance: name, request: "\(method) \(path)", status: reply.status, retryAfter: reply.header("Retry-After"),
                                         text: reply.text, answered: .now)
                        } catch {
                            return Probe(instance: name, request: "\(method) \(path)", text: "\(error)", answered: .now)
                        }
                    }
                }
            }
            return await group.reduce(into: []) { $0.append($1) }.sorted { ($0.instance, $0.request) < ($1.instance, $1.request) }
        }
    }

    /// What the writers had acknowledged is what the cluster holds: byte for
    /// byte in the upstream folder, with nothing there no writer was told of
    /// (davgate's hidden temporary files aside); each instance lists exactly
    /// those files at those sizes, and HAProxy serves each one's bytes.
    static func expectAcknowledgedWrites(_ writers: ChaosWriters, in cluster: DavgateCluster, _ clients: ClusterClients) async throws {
        let ledger = writers.ledger
        let acknowledged = await ledger.acknowledged
        let uncertain = await ledger.uncertain
        let unexpected = await ledger.unexpected
        if !unexpected.isEmpty { print(cluster.diagnostics) }
        #expect(unexpected.isEmpty, "answers no write should get: \(unexpected.prefix(10))")
        #expect(acknowledged.count >= 8 * 5, "the writers were acknowledged \(acknowledged.count) files")

        let folder = cluster.upstream.appendingPathComponent(writers.folder)
        let upstreamNames = try FileManager.default.contentsOfDirectory(atPath: folder.path)
        var lost: [String] = []
        for (name, data) in acknowledged.sorted(by: { $0.key < $1.key }) where !uncertain.contains(name) {
            let held = try? Data(contentsOf: folder.appendingPathComponent(name))
            if held != data {
                // Where the acknowledged bytes went, if anywhere.
                let elsewhere = upstreamNames.first { $0 != name && (try? Data(contentsOf: folder.appendingPathComponent($0))) == data }
                lost.append("\(name) (\(data.count) bytes): " + (held.map { "the upstream holds \($0.count) other bytes" } ?? "not in the upstream")
                            + (elsewhere.map { ", the acknowledged bytes are in \($0)" } ?? ""))
            }
        }
        #expect(lost.isEmpty, "\(lost.count) of \(acknowledged.count) acknowledged writes are not in the upstream: \(lost.prefix(20))")
        let strays = upstreamNames.filter { acknowledged[$0] == nil && !uncertain.contains($0) && !$0.hasPrefix(".davgate-tmp-") }.sorted()
        #expect(strays.isEmpty, "files in the upstream no writer was acknowledged: \(strays)")
        let temporary = upstreamNames.filter { $0.hasPrefix(".davgate-tmp-") }
        if !temporary.isEmpty { print("\(temporary.count) temporary files left in the upstream folder \(writers.folder)/") }

        let expected = acknowledged.filter { !uncertain.contains($0.key) }.mapValues { "\($0.count)" }
        for (index, client) in clients.direct.enumerated() {
            let reply = try await client.send("PROPFIND", "/files/\(writers.folder)/", headers: [("Depth", "1")])
            let listing = try #require(Multistatus(reply), "PROPFIND on \(DavgateCluster.names[index]): \(reply.status) \(reply.text.prefix(300))")
            let prefix = "/files/\(writers.folder)/"
            var listed: [String: String] = [:]
            for response in listing.responses where response.href != prefix {
                listed[String(response.href.dropFirst(prefix.count))] = response.value("getcontentlength") ?? "?"
            }
            let missing = expected.keys.filter { listed[$0] == nil }.sorted()
            let extra = listed.keys.filter { expected[$0] == nil && !uncertain.contains($0) }.sorted()
            let wrongSize = expected.filter { listed[$0.key] != nil && listed[$0.key] != $0.value }.keys.sorted()
            #expect(missing.isEmpty && extra.isEmpty && wrongSize.isEmpty,
                    "instance \(DavgateCluster.names[index]) lists \(listed.count) files: missing \(missing.prefix(10)), extra \(extra.prefix(10)), wrong size \(wrongSize.prefix(10))")
        }

        var wrong: [String] = []
        for (name, data) in acknowledged.sorted(by: { $0.key < $1.key }) where !uncertain.contains(name) {
            let got = try await clients.proxy.send("GET", "/files/\(writers.folder)/\(name)")
            if got.status != 200 || got.body != data { wrong.append("\(name): \(got.status), \(got.body.count) of \(data.count) bytes") }
        }
        #expect(wrong.isEmpty, "\(wrong.count) files not served as acknowledged through HAProxy: \(wrong.prefix(20))")
    }

    /// One line on what the writers went through, for the test's output.
    static func summarize(_ what: String, _ writers: ChaosWriters, kills: [Int]?) async {
        let ledger = writers.ledger
        let files = await ledger.acknowledged.count, writes = await ledger.acknowledgements.count
        let retried = await ledger.retried.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", ")
        let unexpected = await ledger.unexpected.count
        print("cluster \(what): \(writes) writes acknowledged (\(files) files)\(kills.map { ", kills per instance \($0)" } ?? ""); retried \(retried.isEmpty ? "none" : retried); unexpected \(unexpected)")
    }
}
