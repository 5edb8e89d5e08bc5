import Foundation
import Testing

/// s3faults.py in front of a real S3 server: every request forwarded byte
/// for byte (so signatures made for the proxy's address still check out at
/// a server that verifies them), except those the rules set here turn into
/// failures. Point the store under test at `endpoint`; look at the bucket
/// through `backend` (its s3tool calls do not pass the proxy).
///
/// The rules live in the proxy and are set through its control endpoint,
/// `/__faults__` on the same port (a path no S3 request has): POST adds
/// rules, GET reads the counts and the log, DELETE forgets both.
public final class S3FaultProxy: Sendable {
    public let backend: any S3TestServer
    public let folder: URL
    public let port: Int
    public var endpoint: URL { URL(string: "http://127.0.0.1:\(port)")! }
    public var log: URL { folder.appendingPathComponent("s3faults.log") }
    private let process: PortAnnouncingProcess

    /// Starts the proxy in front of `backend`.
    public init(in front: any S3TestServer) async throws {
        let python = try Python.executable()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("s3faults-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        do {
            process = try await PortAnnouncingProcess(python, [Python.helper("s3faults.py"), "--backend", "127.0.0.1:\(front.port)"],
                                                      log: folder.appendingPathComponent("s3faults.log"))
        } catch {
            Issue.record("s3faults.py did not start: \(error)")
            try? FileManager.default.removeItem(at: folder)
            throw error
        }
        self.backend = front
        self.folder = folder
        self.port = process.port
    }

    /// What a rule does to the requests it hits.
    public enum Action: Sendable {
        /// Answered by the proxy, never forwarded: `status` with S3's XML
        /// error body holding `code`.
        case error(status: Int, code: String)
        /// Forwarded, but the answer's body cut after `bytes` (on the wire,
        /// after the head) and the connection closed.
        case cut(after: Int)
        /// The connection closed without an answer, after `delay`.
        case drop(after: Duration)
    }

    /// One fault: of the requests of `operations` (all when nil), the first
    /// `skip` pass, the next `times` are hit (-1: all that follow).
    public struct Rule: Sendable {
        public var operations: [S3Operation]?
        public var skip: Int
        public var times: Int
        public var action: Action

        public init(_ operations: [S3Operation]? = nil, skip: Int = 0, times: Int = 1, action: Action) {
            self.operations = operations
            self.skip = skip
            self.times = times
            self.action = action
        }

        var json: [String: Any] {
            var rule: [String: Any] = ["skip": skip, "times": times]
            if let operations { rule["kind"] = operations.map(\.rawValue) }
            switch action {
            case .error(let status, let code): rule.merge(["action": "error", "status": status, "code": code]) { $1 }
            case .cut(let bytes): rule.merge(["action": "cut", "after": bytes]) { $1 }
            case .drop(let delay):
                let seconds = Double(delay.components.seconds) + Double(delay.components.attoseconds) / 1e18
                rule.merge(["action": "drop", "seconds": seconds]) { $1 }
            }
            return rule
        }
    }

    /// Adds rules after those already set; a request takes the first that is due.
    public func add(_ rules: Rule...) async throws {
        let body = try JSONSerialization.data(withJSONObject: rules.map(\.json))
        try await control("POST", body: body)
    }

    /// The next `times` GetObject answers are cut after `bytes` body bytes.
    public func cutGetBodies(after bytes: Int, times: Int = 1) async throws {
        try await add(Rule([.getObject], times: times, action: .cut(after: bytes)))
    }

    /// The `nth` UploadPart from now (1 for the next) fails with 500
    /// InternalError without reaching the server.
    public func failUploadPart(_ nth: Int, status: Int = 500, code: String = "InternalError") async throws {
        try await add(Rule([.uploadPart], skip: nth - 1, action: .error(status: status, code: code)))
    }

    /// The next `count` requests (of `operations`, or any) are answered
    /// `503 SlowDown`, S3's "reduce your request rate".
    public func slowDown(next count: Int, of operations: [S3Operation]? = nil) async throws {
        try await add(Rule(operations, times: count, action: .error(status: 503, code: "SlowDown")))
    }

    /// One request as the proxy saw it.
    public struct Request: Sendable, Decodable, CustomStringConvertible {
        /// The S3 operation's name (`S3Operation`'s raw value).
        public let kind: String
        public let method: String
        public let target: String
        /// What the client was answered; nil when the connection was dropped.
        public let status: Int?
        /// The rule's action that hit it: `error`, `cut` or `drop`.
        public let fault: String?

        public var operation: S3Operation? { S3Operation(rawValue: kind) }
        public var description: String { "\(kind) \(method) \(target) -> \(status.map(String.init) ?? "dropped")\(fault.map { " (\($0))" } ?? "")" }
    }

    /// Every request since the start or the last `reset()`, in order.
    public func requests() async throws -> [Request] {
        struct State: Decodable { let log: [Request] }
        return try JSONDecoder().decode(State.self, from: await control("GET")).log
    }

    /// How many requests of each operation arrived (hit by a fault or not).
    public func received() async throws -> [S3Operation: Int] {
        try await requests().reduce(into: [:]) { counts, request in
            if let operation = request.operation { counts[operation, default: 0] += 1 }
        }
    }

    /// Forgets every rule, count and log line.
    public func reset() async throws {
        try await control("DELETE")
    }

    @discardableResult
    private func control(_ method: String, body: Data = Data()) async throws -> Data {
        let response = try await LoopbackHTTP.send(port: port, method: method, target: "/__faults__",
                                             headers: [("Content-Type", "application/json")], body: body)
        guard response.status == 200 else {
            throw LoopbackHTTP.Failure(description: "s3faults.py \(method): \(response.status) \(response.text)")
        }
        return response.body
    }

    public func stop() {
        process.stop()
    }

    /// Stops the proxy and removes its log; the backend is the caller's.
    public func cleanUp() {
        stop()
        try? FileManager.default.removeItem(at: folder)
    }
}
