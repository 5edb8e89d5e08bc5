import CoreMetrics
import NIOConcurrencyHelpers

/// The HTTP layer's counters, through swift-metrics. Created on first use,
/// which is after the executable bootstrapped the metrics backend (a
/// counter made before that would count into nothing for ever).
enum ServerMetrics {
    static let bytesSent = Counter(label: "davgate_bytes_sent_total")
    static let bytesReceived = Counter(label: "davgate_bytes_received_total")

    /// Methods beyond WebDAV's are counted as `other`, so a client inventing
    /// methods cannot create series without end.
    static func request(method: String, status: Int) {
        let key = Key(method: knownMethods.contains(method) ? method : "other", status: status)
        // Made once per method and status: the request path stays free of the
        // backend's lookup and of a new counter object per request.
        let counter = requests.withLockedValue { counters in
            if let existing = counters[key] { return existing }
            let made = Counter(label: "davgate_requests_total", dimensions: [("method", key.method), ("status", String(status))])
            counters[key] = made
            return made
        }
        counter.increment()
    }

    /// The methods counted by name. A set: searching the `Allow` list's
    /// text for the method (and building a "METHOD status" key) cost a
    /// microsecond per request, 3% of a small GET's CPU.
    private static let knownMethods = Set(DAVResponder.allowedMethods.split(separator: ", ").map(String.init))

    private struct Key: Hashable {
        var method: String
        var status: Int
    }

    private static let requests = NIOLockedValueBox<[Key: Counter]>([:])
}
