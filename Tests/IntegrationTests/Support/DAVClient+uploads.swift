import DavgateTestSupport
import Foundation

/// Write-back is the default: a test that looks into the upstream after a
/// write first waits for the journal to deliver, as status.json tells it.
extension DAVClient {
    /// One domain's write-back uploads (pending counts the one in flight).
    func uploads(domain: String = "files") async throws -> (pending: Int, failed: Int) {
        let domains = try await statusDomains()
        let uploads = domains.first { $0["name"] as? String == domain }?["uploads"] as? [String: Any]
        return (uploads?["pending"] as? Int ?? -1, (uploads?["failed"] as? [Any])?.count ?? -1)
    }

    /// Waits (up to `seconds`) until no domain has an upload pending.
    func uploadsDrained(seconds: Int = 30) async throws -> Bool {
        for _ in 0..<(seconds * 10) {
            let pending = try await statusDomains().map { ($0["uploads"] as? [String: Any])?["pending"] as? Int ?? -1 }
            if !pending.isEmpty && pending.allSatisfy({ $0 == 0 }) { return true }
            try await Task.sleep(for: .milliseconds(100))
        }
        return false
    }

    private func statusDomains() async throws -> [[String: Any]] {
        let json = try JSONSerialization.jsonObject(with: try await send("GET", "/.davgate/status.json").body) as? [String: Any]
        return json?["domains"] as? [[String: Any]] ?? []
    }
}

/// Waits until `server` has delivered every write-back upload, asking as its admin.
func uploadsDrained(_ server: DavgateProcess, seconds: Int = 30) async throws -> Bool {
    try await withClient(server) { try await $0.uploadsDrained(seconds: seconds) }
}

extension DAVClient {
    /// A conflict as write-back meets one: `ours v1` is delivered, `ours
    /// v2` is written, the upstream file changes behind davgate's back
    /// while v2 waits for its upload (`upload_delay`), and the upload finds
    /// it. Returns the conflicted copy's href. Changed upstream after v2's
    /// PUT, not before: before, a PUT that came after the folder's listing
    /// expired (a slow machine drained v1 late) saw "theirs" first and
    /// wrote over it, an edit of theirs and no conflict.
    func makeConflict(_ server: DavgateProcess, name: String) async throws -> String {
        guard try await send("PUT", "/files/\(name)", body: "ours v1").status == 201, try await uploadsDrained() else {
            throw ConflictNotMade(reason: "the first version was not delivered")
        }
        guard try await send("PUT", "/files/\(name)", body: "ours v2").status == 204 else {
            throw ConflictNotMade(reason: "the second version was not written")
        }
        try "theirs".write(to: server.upstream.appendingPathComponent(name), atomically: true, encoding: .utf8)
        guard try await uploadsDrained() else {
            throw ConflictNotMade(reason: "the second version was not delivered")
        }
        let listing = try await send("PROPFIND", "/files/", headers: [("Depth", "1")])
        let stem = hrefSegment((name as NSString).deletingPathExtension)
        guard let copy = Multistatus(listing)?.hrefs.first(where: { $0.hasPrefix("/files/\(stem)%20(conflicted%20copy%20") }) else {
            throw ConflictNotMade(reason: "no conflicted copy listed: \(listing.text)")
        }
        return copy
    }

    struct ConflictNotMade: Error { let reason: String }
}
