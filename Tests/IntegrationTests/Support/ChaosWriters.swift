import DavgateTestSupport
import Foundation
import Testing

/// Clients that keep writing through a cluster's HAProxy while a test
/// breaks the cluster underneath them, as a careful client would: a PUT
/// that failed for a reason worth retrying (502 or 504 from the proxy when
/// an instance died under the request, 503 from the proxy or from davgate,
/// a broken connection) is sent again until it is acknowledged. What was
/// acknowledged, the last bytes of each file, is what the upstream folder
/// must hold at the end.
///
/// Writer `w`'s files are `FOLDER/wW-N.bin`, of sizes from nothing to
/// 400 kB; every third write overwrites the writer's previous file with new
/// bytes instead of making one. A file is only ever written by its writer,
/// one request at a time.
struct ChaosWriters {
    /// Acknowledged writes, retries and surprises, shared by the writers.
    actor Ledger {
        /// The last acknowledged bytes of each file, by name.
        private(set) var acknowledged: [String: Data] = [:]
        /// Each acknowledged request: when it was sent, and when its answer came.
        private(set) var acknowledgements: [(sent: ContinuousClock.Instant, answered: ContinuousClock.Instant)] = []
        /// Retried failures: `502`, `503`, `504` or `connection`, counted.
        private(set) var retried: [String: Int] = [:]
        /// Answers no write should get (a 500, a 409, ...), and writes never
        /// acknowledged within a minute of retrying.
        private(set) var unexpected: [String] = []
        /// Files whose last write was neither acknowledged nor refused for a
        /// reason to retry: what they hold is unknown.
        private(set) var uncertain: Set<String> = []

        func acknowledge(_ name: String, _ data: Data, sent: ContinuousClock.Instant) {
            acknowledged[name] = data
            acknowledgements.append((sent, .now))
        }

        func retry(_ reason: String) { retried[reason, default: 0] += 1 }

        func fail(_ name: String, _ what: String) {
            unexpected.append(what)
            uncertain.insert(name)
        }
    }

    let folder: String
    let writers: Int
    let ledger = Ledger()

    /// Runs the writers through `cluster`'s HAProxy, each with its own
    /// client, until `deadline`; a write begun before it is retried to its
    /// acknowledgement after it.
    func run(through cluster: DavgateCluster, until deadline: ContinuousClock.Instant) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<writers {
                group.addTask {
                    let client = try DAVClient(cluster)
                    do {
                        try await write(as: writer, client: client, until: deadline)
                    } catch {
                        try? await client.shutdown()
                        throw error
                    }
                    try await client.shutdown()
                }
            }
            try await group.waitForAll()
        }
    }

    private func write(as writer: Int, client: DAVClient, until deadline: ContinuousClock.Instant) async throws {
        let sizes = [0, 1, 700, 4_096, 33_000, 150_000, 400_000]
        var made: String?
        var number = 0
        while ContinuousClock.now < deadline {
            number += 1
            let name: String
            if number % 3 == 0, let made {
                name = made
            } else {
                name = "w\(writer)-\(number).bin"
            }
            let data = try randomData(sizes[Int.random(in: 0..<sizes.count)])
            if try await put(name, data, client: client) { made = name }
        }
    }

    /// One write, sent until acknowledged; false when it met an answer
    /// not worth retrying, or a minute passed.
    private func put(_ name: String, _ data: Data, client: DAVClient) async throws -> Bool {
        let path = "/files/\(folder)/\(name)"
        let giveUp = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < giveUp {
            let sent = ContinuousClock.now
            do {
                let reply = try await client.send("PUT", path, bodyData: data)
                switch reply.status {
                case 200, 201, 204:
                    await ledger.acknowledge(name, data, sent: sent)
                    return true
                case 502, 503, 504:
                    await ledger.retry("\(reply.status)")
                default:
                    await ledger.fail(name, "PUT \(path) (\(data.count) bytes): \(reply.status) \(reply.text.prefix(400))")
                    return false
                }
            } catch is CancellationError {
                throw CancellationError()
            } catch {
                await ledger.retry("connection")
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        await ledger.fail(name, "PUT \(path) (\(data.count) bytes) not acknowledged within 60 s of retrying")
        return false
    }
}
