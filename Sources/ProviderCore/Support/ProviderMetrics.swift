import CoreMetrics

/// A domain's counters, through swift-metrics: the library only counts, and
/// the executable picks the backend (Prometheus, for `/.davgate/metrics`).
struct ProviderMetrics: Sendable {
    let cacheHits: Counter
    let cacheMisses: Counter
    let fetches: Counter
    let fetchedBytes: Counter
    let fetchFailures: Counter
    let uploads: Counter
    let uploadedBytes: Counter
    let uploadsInFlight: Meter
    /// Write-back: files written here waiting for their upload.
    let uploadsPending: Gauge
    let conflicts: Counter
    let upstreamErrors: Counter
    /// Listing refreshes that read a folder's listing upstream.
    let listings: Counter
    /// Of them, those thrown away because a change reaching the folder ran
    /// meanwhile (`NamespaceClock`): the next read lists again.
    let listingsDiscarded: Counter

    init(domain: String) {
        let labels = [("domain", domain)]
        cacheHits = Counter(label: "davgate_cache_hits_total", dimensions: labels)
        cacheMisses = Counter(label: "davgate_cache_misses_total", dimensions: labels)
        fetches = Counter(label: "davgate_fetches_total", dimensions: labels)
        fetchedBytes = Counter(label: "davgate_fetched_bytes_total", dimensions: labels)
        fetchFailures = Counter(label: "davgate_fetch_failures_total", dimensions: labels)
        uploads = Counter(label: "davgate_uploads_total", dimensions: labels)
        uploadedBytes = Counter(label: "davgate_uploaded_bytes_total", dimensions: labels)
        uploadsInFlight = Meter(label: "davgate_uploads_in_flight", dimensions: labels)
        uploadsPending = Gauge(label: "davgate_uploads_pending", dimensions: labels)
        uploadsPending.record(0)
        conflicts = Counter(label: "davgate_conflicts_total", dimensions: labels)
        upstreamErrors = Counter(label: "davgate_upstream_errors_total", dimensions: labels)
        listings = Counter(label: "davgate_listings_total", dimensions: labels)
        listingsDiscarded = Counter(label: "davgate_listings_discarded_total", dimensions: labels)
    }
}
