import Foundation
import Glibc
import Logging
import Testing

@testable import ServiceRuntime

/// Log lines as a shipper reads them: one JSON object per line that any
/// JSON parser takes, whatever the message holds; the level is the
/// process's, changed for every copy of a logger at once.
@Suite struct ConsoleLogHandlerTests {
    @Test func jsonLinesParseWithFieldsOfTheirOwn() throws {
        let capture = try LogCapture(format: .json)
        var logger = Logger(label: "davgate") { capture.output.handler(label: $0) }
        logger[metadataKey: "hb.request.id"] = "42abc"
        let awkward = "quote \" backslash \\ newline \n tab \t bell \u{07} del \u{7F} é 日本 🎉"
        logger.info("\(awkward)", metadata: [
            "status": .stringConvertible(207), "bytes": .stringConvertible(Int64(4096)),
            "duration_ms": .stringConvertible(0.25), "cut": .stringConvertible(true), "path": "/files/a b",
            "nested": .dictionary(["list": .array(["x", .stringConvertible(1)])]),
        ])
        logger.warning("second")
        let lines = try capture.lines()
        #expect(lines.count == 2)
        let first = try #require(try JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as? [String: Any])
        #expect(first["message"] as? String == awkward)
        #expect(first["level"] as? String == "info")
        #expect(first["logger"] as? String == "davgate")
        #expect(first["request_id"] as? String == "42abc")
        #expect(first["status"] as? Int == 207)
        #expect(first["bytes"] as? Int == 4096)
        #expect(first["duration_ms"] as? Double == 0.25)
        #expect(first["cut"] as? Bool == true)
        #expect(first["path"] as? String == "/files/a b")
        #expect(((first["nested"] as? [String: Any])?["list"] as? [Any])?.count == 2)
        let time = try #require(first["time"] as? String)
        #expect(time.hasSuffix("Z") && time.count == "2026-11-25T21:02:05.123Z".count)
        let second = try #require(try JSONSerialization.jsonObject(with: Data(lines[1].utf8)) as? [String: Any])
        #expect(second["level"] as? String == "warning")
        #expect(second["request_id"] as? String == "42abc")
    }

    @Test func textLinesKeepSwiftLogsFormat() throws {
        let capture = try LogCapture(format: .text)
        let logger = Logger(label: "davgate") { capture.output.handler(label: $0) }
        logger.info("hello", metadata: ["b": "2", "a": "1"])
        let line = try #require(try capture.lines().first)
        #expect(line.contains(" info davgate: a=1 b=2 [ServiceRuntimeTests] hello"))
    }

    @Test func levelAndFormatChangeForEveryCopy() throws {
        let capture = try LogCapture(format: .text)
        let logger = Logger(label: "davgate") { capture.output.handler(label: $0) }
        let copy = logger
        logger.debug("hidden")
        capture.output.level = .debug
        #expect(copy.logLevel == .debug)
        copy.debug("shown")
        capture.output.format = .json
        logger.debug("as json")
        let lines = try capture.lines()
        #expect(lines.count == 2)
        #expect(lines[0].hasSuffix("shown"))
        #expect(lines[1].hasPrefix("{") && lines[1].contains("\"message\":\"as json\""))
    }
}

/// A `LogOutput` writing into a temporary file, read back line by line.
final class LogCapture {
    let file: String
    let descriptor: Int32
    let output: LogOutput

    init(format: LogFormat) throws {
        file = FileManager.default.temporaryDirectory.appendingPathComponent("log-\(UUID().uuidString)").path
        descriptor = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        guard descriptor >= 0 else { throw POSIXError(.EIO) }
        output = LogOutput(level: .info, format: format, descriptor: descriptor)
    }

    func lines() throws -> [String] {
        try String(contentsOfFile: file, encoding: .utf8).split(separator: "\n").map(String.init)
    }

    deinit {
        close(descriptor)
        unlink(file)
    }
}
