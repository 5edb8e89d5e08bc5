import DavgateTestSupport
import Foundation
import Testing

/// The browser listing, loaded by a real browser: headless Chromium over
/// TLS with Basic auth. The DOM must hold a row per item with its state, and
/// a screenshot is kept as a test artifact in `.build/test-artifacts/`.
@Suite("the browser: the HTML listing in headless Chromium")
struct BrowserTests {
    static var artifacts: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent(".build/test-artifacts", isDirectory: true)
    }

    @Test("a folder and the status page in Chromium: one row per item with size, date and state (cloud, local, partly local, conflict); a davmount link; cache use and conflicts")
    func chromiumListing() async throws {
        let chromium = try #require(findExecutable("chromium"), "Chromium is not installed (apt-get install chromium)")
        try await withGateway(extraDomain: "listing_ttl = 600") { server, client in
            // Placeholders: put straight into the upstream before davgate lists it.
            try Data(count: 3_500_000).write(to: server.upstream.appendingPathComponent("Präsentation 2026.pdf"))
            try Data("in the cloud".utf8).write(to: server.upstream.appendingPathComponent("cloud.txt"))
            #expect(try await client.send("MKCOL", "/files/Reports").status == 201)
            #expect(try await client.send("PUT", "/files/local.txt", body: "written here").status == 201)
            // A conflict copy: the upstream changed under an edit.
            _ = try await client.makeConflict(server, name: "report.txt")
            // Partly local: one range read.
            #expect(try await client.send("GET", "/files/Pr%C3%A4sentation%202026.pdf", headers: [("Range", "bytes=0-99")]).status == 206)

            let profile = FileManager.default.temporaryDirectory.appendingPathComponent("chromium-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: profile) }
            let command = try ClientCommand(scratch: profile.appendingPathComponent("scratch"), environment: ["HOME": profile.path])
            let password = server.adminPassword.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
            let url = "https://admin:\(password)@127.0.0.1:\(server.port)/files/"
            // The certificate is davgate's own self-signed one; Chromium has no
            // per-run trust store, so certificate errors are ignored here.
            let common = ["--headless", "--no-sandbox", "--disable-gpu", "--ignore-certificate-errors", "--no-first-run",
                          "--user-data-dir=\(profile.path)", "--window-size=1100,700"]
            let dom = try await command.run(chromium, common + ["--dump-dom", url], timeout: .seconds(120))
            #expect(dom.succeeded, "\(dom)")
            let html = dom.stdout
            #expect(html.contains("<title>/files/ · davgate</title>"), "\(html)")
            #expect(html.contains("data-name=\"cloud.txt\" data-state=\"placeholder\""), "\(html)")
            #expect(html.contains("data-name=\"local.txt\" data-state=\"materialized\""))
            #expect(html.contains("data-name=\"Präsentation 2026.pdf\" data-state=\"partial\""))
            #expect(html.contains("3.5 MB"), "a size a person reads")
            #expect(html.contains("data-name=\"report.txt\" data-state=\"placeholder\""), "the upstream's version, not read yet")
            #expect(html.contains("(conflicted copy ") && html.contains("data-state=\"conflict\""), "the kept-both copy is marked")
            #expect(html.contains("data-name=\"Reports\" data-state=\"folder\""))
            #expect(html.contains("href=\"/files/Pr%C3%A4sentation%202026.pdf\""), "links are percent-encoded hrefs")
            #expect(html.contains("href=\"?davmount\""))
            #expect(html.contains("6 items"))

            try FileManager.default.createDirectory(at: Self.artifacts, withIntermediateDirectories: true)
            let screenshot = Self.artifacts.appendingPathComponent("browser-listing.png")
            try? FileManager.default.removeItem(at: screenshot)
            let shot = try await command.run(chromium, common + ["--screenshot=\(screenshot.path)", url], timeout: .seconds(120))
            #expect(shot.succeeded, "\(shot)")
            let png = try Data(contentsOf: screenshot)
            #expect(png.count > 10_000 && png.starts(with: [0x89, 0x50, 0x4E, 0x47]), "a PNG screenshot at \(screenshot.path)")

            // The status page, in the same browser: cache use, uploads, the conflict copy.
            let statusURL = "https://admin:\(password)@127.0.0.1:\(server.port)/.davgate/status"
            let status = try await command.run(chromium, common + ["--dump-dom", statusURL], timeout: .seconds(120))
            #expect(status.succeeded, "\(status)")
            #expect(status.stdout.contains("<title>Status · davgate</title>"), "\(status.stdout)")
            #expect(status.stdout.contains("data-domain=\"files\""))
            #expect(status.stdout.range(of: "data-cache-bytes=\"[1-9][0-9]*\"", options: .regularExpression) != nil, "cache use shown")
            #expect(status.stdout.contains("0 running"), "uploads shown")
            #expect(status.stdout.contains("/report (conflicted copy "), "the conflict copy to resolve")
            let statusShot = Self.artifacts.appendingPathComponent("status-page.png")
            try? FileManager.default.removeItem(at: statusShot)
            let shot2 = try await command.run(chromium, common + ["--screenshot=\(statusShot.path)", statusURL], timeout: .seconds(120))
            #expect(shot2.succeeded && FileManager.default.fileExists(atPath: statusShot.path), "\(shot2)")

            let mount = try await client.send("GET", "/files/Reports/?davmount")
            #expect(mount.status == 200)
            #expect(mount.header("Content-Type") == "application/davmount+xml")
            #expect(mount.text.contains("<dm:url>https://127.0.0.1:\(server.port)/files/Reports/</dm:url>"), "\(mount.text)")
            #expect(mount.text.contains("<dm:username>admin</dm:username>"))
        }
    }
}
