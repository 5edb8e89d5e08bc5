import CoreMetrics

/// The HTTP layer's counters, through swift-metrics. Created on first use,
/// which is after the executable bootstrapped the metrics backend (a
/// counter made before that would count into nothing for ever).
enum ServerMetrics {
    static let bytesSent = Counter(label: "davgate_bytes_sent_total")
    static let bytesReceived = Counter(label: "davgate_bytes_received_total")

    /// Methods beyond WebDAV's are counted as `other`, so a client inventing
    /// methods cannot create series without end.
    static func request(method: String, status: Int) {
        let known = DAVResponder.allowedMethods.contains(method) && !method.isEmpty ? method : "other"
        Counter(label: "davgate_requests_total", dimensions: [("method", known), ("status", String(status))]).increment()
    }
}
