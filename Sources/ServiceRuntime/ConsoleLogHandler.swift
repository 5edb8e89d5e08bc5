#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Logging

/// A swift-log handler writing through the process's `LogOutput`, in its
/// current format. The text format is swift-log's `StreamLogHandler` line,
/// so nothing changes for readers of the default log; the JSON format is
/// one object per line: `time` (UTC, milliseconds), `level`, `message`,
/// `logger`, `source`, then every metadata key as a field of its own, with
/// Hummingbird's request id as `request_id` and numbers as numbers.
public struct ConsoleLogHandler: LogHandler {
    public let label: String
    let output: LogOutput
    public var metadata: Logger.Metadata = [:]

    /// The process's level: setting it through any copy sets it for all.
    public var logLevel: Logger.Level {
        get { output.level }
        set { output.level = newValue }
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var merged = metadata
        if let explicit = event.metadata { merged.merge(explicit) { $1 } }
        if let error = event.error {
            merged["error.message"] = "\(error)"
            merged["error.type"] = "\(String(reflecting: type(of: error)))"
        }
        switch output.format {
        case .text:
            output.write(textLine(event, merged))
        case .json:
            output.write(jsonLine(event, merged))
        }
    }

    private func textLine(_ event: LogEvent, _ metadata: Logger.Metadata) -> String {
        let pretty = metadata.isEmpty ? "" : " " + metadata.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        return "\(LogTime.local()) \(event.level) \(label):\(pretty) [\(event.source)] \(event.message)\n"
    }

    private func jsonLine(_ event: LogEvent, _ metadata: Logger.Metadata) -> String {
        var object = JSONObjectWriter()
        object.field("time", string: LogTime.utcMilliseconds())
        object.field("level", string: event.level.rawValue)
        object.field("message", string: event.message.description)
        object.field("logger", string: label)
        object.field("source", string: event.source)
        for (key, value) in metadata.sorted(by: { $0.key < $1.key }) {
            object.field(Self.fieldName(key), value)
        }
        return object.finished() + "\n"
    }

    /// Metadata keys as shippers expect field names; Hummingbird names its
    /// request id `hb.request.id`.
    static func fieldName(_ key: String) -> String {
        key == "hb.request.id" ? "request_id" : key
    }
}

/// Timestamps of log lines.
enum LogTime {
    /// swift-log's text format: local time with its offset, to the second.
    static func local() -> String {
        var now = time(nil)
        var parts = tm()
        localtime_r(&now, &parts)
        var buffer = [Int8](repeating: 0, count: 32)
        let count = strftime(&buffer, buffer.count, "%Y-%m-%dT%H:%M:%S%z", &parts)
        return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// RFC 3339 in UTC with milliseconds, which every shipper parses.
    static func utcMilliseconds() -> String {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        var seconds = now.tv_sec
        var parts = tm()
        gmtime_r(&seconds, &parts)
        var buffer = [Int8](repeating: 0, count: 32)
        let count = strftime(&buffer, buffer.count, "%Y-%m-%dT%H:%M:%S", &parts)
        let millis = Int(now.tv_nsec / 1_000_000)
        let fraction = millis < 10 ? "00\(millis)" : millis < 100 ? "0\(millis)" : "\(millis)"
        return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self) + ".\(fraction)Z"
    }
}
