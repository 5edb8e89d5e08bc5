import DavgateTestSupport
import Foundation
import Testing

/// davgate in front of another davgate over TLS: the front follows the
/// upstream's change feed instead of listing folder by folder. What the
/// front asks is read off the upstream's access log.
@Suite("a davgate behind a davgate")
struct ChainedFeedTests {
    /// The upstream's access-log lines for listings and reports of its
    /// `files` domain, in order.
    func listingRequests(_ upstream: DavgateProcess) -> [String] {
        upstream.stderr.split(separator: "\n").compactMap { line in
            guard let start = line.range(of: "] PROPFIND /files") ?? line.range(of: "] REPORT /files") else { return nil }
            return line[line.index(after: start.lowerBound)...].trimmingCharacters(in: .whitespaces)
        }
    }

    func walk(_ client: DAVClient, _ folders: [String]) async throws -> Set<String> {
        var hrefs = Set<String>()
        for folder in folders {
            let reply = try await client.send("PROPFIND", folder, headers: [("Depth", "1")], body: propfind(["getetag"]))
            hrefs.formUnion(try #require(Multistatus(reply), "\(folder): \(reply.status) \(reply.text)").hrefs)
        }
        return hrefs
    }

    @Test("the front keeps its listings current with one REPORT per refresh and no PROPFIND per folder; a new, a removed and a renamed file all arrive")
    func oneReportPerRefresh() async throws {
        let upstream = try await DavgateProcess(extraServer: "access_log = true", extraDomain: "listing_ttl = 600")
        defer { upstream.cleanUp() }
        let chained = try await ChainedFront(upstream: upstream, extraDomain: "listing_ttl = 2")
        defer { chained.cleanUp() }
        let front = chained.front

        try await withClient(upstream) { up in
            try await withClient(front) { client in
                for folder in ["a", "b", "c"] {
                    #expect(try await up.send("MKCOL", "/files/\(folder)/").status == 201)
                    #expect(try await up.send("PUT", "/files/\(folder)/one.txt", body: "one in \(folder)").status == 201)
                }
                let folders = ["/chained/", "/chained/a/", "/chained/b/", "/chained/c/"]
                let firstStarted = ContinuousClock.now
                let first = try await walk(client, folders)
                let firstTook = ContinuousClock.now - firstStarted
                #expect(first.isSuperset(of: ["/chained/a/one.txt", "/chained/b/one.txt", "/chained/c/one.txt"]), "\(first)")
                let walked = listingRequests(upstream)
                if firstTook < .seconds(2) {
                    #expect(walked.count == 5 && walked.allSatisfy { $0.hasPrefix("PROPFIND") }, "a position, then each folder listed once: \(walked)")
                } else {
                    // A walk slower than the front's TTL (a loaded machine; CI
                    // saw it) finds what it listed first stale again on the
                    // way: that refresh is a REPORT, never another PROPFIND.
                    #expect(walked.filter { $0.hasPrefix("PROPFIND") }.count == 5 && walked.allSatisfy { $0.hasPrefix("PROPFIND") || $0.hasPrefix("REPORT") },
                            "a position, each folder listed once, refreshes by REPORT (the walk took \(firstTook)): \(walked)")
                }

                // Changed at the upstream davgate, behind the front's back.
                #expect(try await up.send("PUT", "/files/b/two.txt", body: "two").status == 201)
                #expect(try await up.send("DELETE", "/files/c/one.txt").status == 204)
                #expect(try await up.send("MOVE", "/files/a/one.txt", headers: [("Destination", "\(up.base)/files/a/uno.txt")]).status == 201)
                try await Task.sleep(for: .milliseconds(2_200))  // past the front's listing_ttl

                for round in 0..<2 {
                    let mark = listingRequests(upstream).count
                    let started = ContinuousClock.now
                    let now = try await walk(client, folders)
                    // A walk slower than the TTL (a loaded machine) may refresh again.
                    let refreshes = 1 + Int((ContinuousClock.now - started) / .seconds(2))
                    #expect(now.isSuperset(of: ["/chained/a/uno.txt", "/chained/b/one.txt", "/chained/b/two.txt"]), "round \(round): \(now)")
                    #expect(now.isDisjoint(with: ["/chained/a/one.txt", "/chained/c/one.txt"]), "round \(round): \(now)")
                    let asked = Array(listingRequests(upstream).dropFirst(mark))
                    #expect((1...refreshes).contains(asked.count) && asked.allSatisfy { $0.hasPrefix("REPORT /files/ 207") },
                            "round \(round): one REPORT per refresh for the whole tree, no PROPFIND per folder: \(asked)")
                    try await Task.sleep(for: .milliseconds(2_200))
                }
                #expect(try await client.send("GET", "/chained/b/two.txt").text == "two")
            }
        }
    }
}
