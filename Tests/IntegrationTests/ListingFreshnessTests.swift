import DavgateTestSupport
import Foundation
import NIOConcurrencyHelpers
import Testing

/// A folder's listing stays as fresh as its TTL while writes land in other
/// folders. Every write and every finished upload used to void every
/// listing in flight anywhere in the domain, so during a long copy into one
/// folder the others showed nothing new upstream until it ended (issue 14;
/// `NamespaceClock`'s scopes).
@Suite("listings while writes land elsewhere (Apache mod_dav upstream)")
struct ListingFreshnessTests {
    struct Refused: Error { let status: Int; let text: String }

    @Test("a file made upstream in one folder is listed within seconds while four clients keep writing into another")
    func freshDuringWrites() async throws {
        // Each listing of the quiet folder takes Apache about half a second
        // to send (300 members at 128 KiB/s), so that dozens of writes land
        // while one is on its way.
        try await withApacheGateway(rateLimitKiB: 128, extraDomain: "listing_ttl = 0.3\nupload_delay = 0.2") { g in
            for n in 0..<300 { try g.writeUpstream("quiet/member \(n) of the quiet folder.txt", Data("old\n".utf8)) }
            try g.writeUpstream("busy/seed.txt", Data("seed\n".utf8))
            for folder in ["/lazy/quiet/", "/lazy/busy/"] {
                let listed = try await g.client.send("PROPFIND", folder, headers: [("Depth", "1")])
                #expect(listed.status == 207)
            }
            let stop = NIOLockedValueBox(false)
            let lastWrite = NIOLockedValueBox(ContinuousClock.now)
            let writers = (0..<4).map { writer in
                Task {
                    var written = 0
                    while !stop.withLockedValue({ $0 }) {
                        let put = try await g.client.send("PUT", "/lazy/busy/w\(writer)-\(written).txt", body: "write \(written)\n")
                        guard put.status == 201 else { throw Refused(status: Int(put.status), text: put.text) }
                        lastWrite.withLockedValue { $0 = ContinuousClock.now }
                        written += 1
                    }
                    return written
                }
            }
            try await Task.sleep(for: .milliseconds(600))
            try g.writeUpstream("quiet/late.txt", Data("late\n".utf8))
            let made = ContinuousClock.now
            var listedAfter: Duration?
            var listedAt = ContinuousClock.now
            var listings = 0
            while ContinuousClock.now - made < .seconds(8) {
                let listing = try await g.client.send("PROPFIND", "/lazy/quiet/", headers: [("Depth", "1")])
                listings += 1
                if listing.text.contains("/lazy/quiet/late.txt") {
                    listedAt = ContinuousClock.now
                    listedAfter = listedAt - made
                    break
                }
                try await Task.sleep(for: .milliseconds(100))
            }
            stop.withLockedValue { $0 = true }
            var written = 0
            for writer in writers { written += try await writer.value }
            #expect(listedAfter != nil, "late.txt listed while the writes went on (\(listings) listings over 8 s, \(written) PUTs)")
            // The writes went on until it was listed: the last one answered
            // (those in flight when the listing came included) is no older
            // than half a second before it. Measured at the listing itself,
            // one grouped fsync held for seconds by a loaded disk (the
            // whole suite runs beside it) failed this once.
            let lastAnswered = lastWrite.withLockedValue { $0 }
            #expect(lastAnswered > listedAt - .milliseconds(500),
                    "the writes were still landing when it was listed: the last answered \(listedAt - lastAnswered) before")
            #expect(written > 20, "the writes ran throughout: \(written) PUTs")
        }
    }
}
