import DavgateTestSupport
import Foundation
import Logging
import NIOConcurrencyHelpers
import PostgresNIO
import Testing
@testable import ProviderCore

/// The shared index when its PostgreSQL server crashes under work: how long
/// what comes after waits for its 503. A domain's writes queue behind one
/// another, so each wait adds up for the last of them.
@Suite("the shared index when PostgreSQL crashes under a statement")
struct PostgresOutageTests {
    @Test("a statement that loses its connection in a crash makes the next waits for a connection short (1 s, not 15), each failing as the index being unavailable; once PostgreSQL is back the index answers, and the next wait is the full one again",
          .timeLimit(.minutes(2)))
    func crashUnderAStatement() async throws {
        let server = try await PostgresServer(fsync: false)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("davgate-outage-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        do {
            try await server.createDatabase("outage")
            var logger = Logger(label: "test")
            logger.logLevel = .error
            let index = try await PostgresIndex(location: try PostgresLocation(url: server.url(database: "outage")),
                                                holdingsFile: folder.appendingPathComponent("holdings.sqlite"), logger: logger)
            let root = try await index.root(domain: "files")

            // In flight when the server goes: the connection it holds is lost.
            let sleeper = Task { try await index.read { try await $0.execute("SELECT pg_sleep(60)") } }
            try await Task.sleep(for: .milliseconds(500))
            try await server.crash()
            let lost = await sleeper.result
            #expect(Self.isUnavailable(lost), "the statement in flight: \(lost)")
            #expect(index.databaseDown.withLockedValue { $0 }, "a lost connection marks the database down")

            // No connection to lease now: each wait is the outage's.
            for attempt in 1...3 {
                let started = ContinuousClock.now
                let answer = await Self.outcome { try await index.item(id: root.id) }
                let waited = ContinuousClock.now - started
                #expect(Self.isUnavailable(answer), "attempt \(attempt): \(answer)")
                #expect(waited < .seconds(5), "attempt \(attempt) waited \(waited) for its 503, not the outage's 1 s")
            }

            try await server.start()
            var back: Item?
            for _ in 0..<80 where back == nil {
                back = try? await index.item(id: root.id)
                if back == nil { try await Task.sleep(for: .milliseconds(250)) }
            }
            #expect(back?.id == root.id, "the index answers once PostgreSQL is back")
            #expect(!index.databaseDown.withLockedValue { $0 }, "an answer clears the mark")
        } catch {
            await server.cleanUp()
            try? FileManager.default.removeItem(at: folder)
            throw error
        }
        await server.cleanUp()
        try? FileManager.default.removeItem(at: folder)
    }

    private static func outcome<T>(_ body: () async throws -> T) async -> Result<T, any Error> {
        do { return .success(try await body()) } catch { return .failure(error) }
    }

    private static func isUnavailable<T>(_ result: Result<T, any Error>) -> Bool {
        guard case .failure(let error) = result else { return false }
        return PostgresIndex.isUnavailable(error)
    }
}
