import DavgateTestSupport
import Foundation
import Testing

/// litmus, the WebDAV conformance suite, all five suites, against the real
/// davgate over TLS and over plain HTTP. Fails on any failed test and on any
/// warning.
/// Over TLS and plain HTTP with the defaults (write-back, uploads after 2 s
/// of quiet), over TLS with uploads at once (racing litmus's next request),
/// and over TLS with write-through.
enum LitmusSetup: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case tls, plainHTTP, eagerUploads, writeThrough
    var testDescription: String { rawValue }
    var usesTLS: Bool { self != .plainHTTP }
    var extraDomain: String {
        switch self {
        case .tls, .plainHTTP: ""
        case .eagerUploads: "upload_delay = 0"
        case .writeThrough: "write_mode = \"through\""
        }
    }
}

@Suite("litmus", .serialized)
struct LitmusTests {
    @Test("litmus, all five suites, over TLS and plain HTTP, with write-back uploading late or at once, and with write-through", arguments: LitmusSetup.allCases)
    func litmus(setup: LitmusSetup) async throws {
        let tls = setup.usesTLS
        let litmus = try #require(findExecutable("litmus"), "litmus is not installed; .ci/run installs it (apt-get install litmus)")
        let server = try await DavgateProcess(tls: tls, extraDomain: setup.extraDomain)
        defer { server.cleanUp() }
        let summary = try await runLitmus(litmus, url: "\(server.baseURL)/files/", password: server.adminPassword, in: server.root)
        if summary.failed > 0 || summary.warnings > 0 || summary.passed < 103 {
            print(summary.output)
            print(server.stderr)
        }
        #expect(summary.suites == 5, "litmus ran \(summary.suites) suites")
        // Over plain HTTP litmus also runs `expect100`, which it skips over TLS.
        let expected = tls ? 103 : 104
        #expect(summary.passed == expected, "litmus passed \(summary.passed) of \(expected)")
        #expect(summary.failed == 0, "litmus failures: \(summary.failures)")
        #expect(summary.warnings == 0, "litmus warnings: \(summary.warningLines)")
    }
}

/// Runs litmus's five suites against `url` as admin, in `folder`.
func runLitmus(_ litmus: String, url: String, password: String, in folder: URL) async throws -> LitmusSummary {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: litmus)
    process.arguments = [url, "admin", password]
    process.currentDirectoryURL = folder
    var environment = ProcessInfo.processInfo.environment
    environment["TESTS"] = "basic copymove props locks http"
    process.environment = environment
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = pipe
    try process.run()
    let output = try await onOwnThread {
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }
    return LitmusSummary(output)
}

/// The figures litmus prints: one summary line per suite, warnings, failures.
struct LitmusSummary {
    var output = ""
    var suites = 0
    var passed = 0
    var failed = 0
    var warnings = 0
    var failures: [String] = []
    var warningLines: [String] = []

    init(_ output: String) {
        self.output = output
        for line in output.split(separator: "\n").map(String.init) {
            // "<- summary for `basic': of 16 tests run: 16 passed, 0 failed. 100.0%"
            if line.contains("<- summary for") {
                suites += 1
                passed += Self.number(before: " passed", in: line)
                failed += Self.number(before: " failed", in: line)
            } else if line.contains("warning") && line.contains("issued") {
                // "-> 1 warning was issued." / "-> 2 warnings were issued."
                warnings += Self.number(before: " warning", in: line)
            }
            if line.contains("FAIL") { failures.append(line) }
            if line.contains("WARNING") { warningLines.append(line) }
        }
    }

    static func number(before marker: String, in line: String) -> Int {
        guard let range = line.range(of: marker) else { return 0 }
        let digits = line[..<range.lowerBound].reversed().prefix { $0.isNumber }
        return Int(String(digits.reversed())) ?? 0
    }
}

func findExecutable(_ name: String) -> String? {
    for dir in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
        let path = "\(dir)/\(name)"
        if FileManager.default.isExecutableFile(atPath: path) { return path }
    }
    return nil
}
