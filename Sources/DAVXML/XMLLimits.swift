/// Caps applied while parsing a request body.
///
/// RFC 4918 section 20.6 warns that XML bodies from clients can be used for
/// denial of service (huge bodies, deep nesting, many elements); every parse
/// therefore runs under explicit limits that are checked as bytes arrive, not
/// after the whole tree has been built.
public struct XMLLimits: Sendable, Equatable {
    /// Largest body accepted, in bytes as received (before any decoding).
    public var maxBytes: Int
    /// Deepest element nesting accepted; the root element is at depth 1.
    public var maxDepth: Int
    /// Most nodes accepted: elements, attributes and text nodes together.
    public var maxNodes: Int

    public init(maxBytes: Int = 1 << 20, maxDepth: Int = 64, maxNodes: Int = 100_000) {
        self.maxBytes = maxBytes
        self.maxDepth = maxDepth
        self.maxNodes = maxNodes
    }

    /// 1 MiB, depth 64, 100,000 nodes: far above any real PROPFIND, PROPPATCH
    /// or LOCK body, far below what would hurt the server.
    public static let `default` = XMLLimits()
}
