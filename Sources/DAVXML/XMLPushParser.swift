/// An incremental parser for one XML request body.
///
/// Feed the body's chunks as they arrive, then call `finish()`. Limits are
/// enforced as bytes arrive, so an oversized or hostile body is refused
/// without ever being buffered whole (RFC 4918 section 20.6). Underneath is a
/// libxml2 SAX2 push parser that refuses any DOCTYPE, never loads anything
/// from the network or the file system and expands no entities besides the
/// five predefined ones and character references.
///
/// The parser is non-copyable because it owns a libxml2 context; it is freed
/// when the parser goes away, whichever way the parse ended. One parser is
/// used from one task; many parsers may run concurrently.
///
/// After the first error, or after `finish()`, the parser is spent: every
/// further call throws that error (or `.malformed` after a finished parse).
public struct XMLPushParser: ~Copyable {
    private let builder: XMLTreeBuilder
    private var bytesFed = 0
    private var finished = false

    /// - Parameter limits: caps on size, depth and node count.
    public init(limits: XMLLimits = .default) {
        builder = XMLTreeBuilder(limits: limits, ignoreDeclaredEncoding: false)
    }

    /// Used for `String` input, whose bytes are UTF-8 whatever an XML
    /// declaration inside it claims.
    init(limits: XMLLimits, ignoreDeclaredEncoding: Bool) {
        builder = XMLTreeBuilder(limits: limits, ignoreDeclaredEncoding: ignoreDeclaredEncoding)
    }

    /// Parses the next chunk of the body.
    ///
    /// The size cap is checked before libxml2 sees the chunk, so a chunk that
    /// would cross `maxBytes` is never parsed.
    public mutating func feed(_ bytes: UnsafeRawBufferPointer) throws(XMLParseError) {
        try checkUsable()
        guard !bytes.isEmpty else { return }
        if bytes.count > builder.limits.maxBytes - bytesFed {
            builder.fail(.tooLarge)
            throw .tooLarge
        }
        bytesFed += bytes.count
        builder.parse(bytes, terminate: false)
        if let error = builder.error { throw error }
    }

    /// Parses the next chunk of the body.
    public mutating func feed(_ bytes: [UInt8]) throws(XMLParseError) {
        let result: Result<Void, XMLParseError> = bytes.withUnsafeBytes { raw in
            Result { () throws(XMLParseError) in try feed(raw) }
        }
        try result.get()
    }

    /// Parses the next chunk of the body, from any collection of bytes
    /// (`ArraySlice<UInt8>`, `Data`, `ByteBuffer.readableBytesView`, ...).
    public mutating func feed(_ bytes: some Sequence<UInt8>) throws(XMLParseError) {
        let contiguous: Result<Void, XMLParseError>? = bytes.withContiguousStorageIfAvailable { buffer in
            Result { () throws(XMLParseError) in try feed(UnsafeRawBufferPointer(buffer)) }
        }
        if let contiguous {
            try contiguous.get()
        } else {
            try feed(Array(bytes))
        }
    }

    /// Ends the body and returns its root element.
    ///
    /// - Returns: the root element, namespaces resolved.
    /// - Throws: `.empty` if there was no root element, `.malformed` if the
    ///   document is incomplete or not well-formed, or the error that stopped
    ///   an earlier `feed`.
    public mutating func finish() throws(XMLParseError) -> XMLElement {
        try checkUsable()
        finished = true
        builder.parse(UnsafeRawBufferPointer(start: nil, count: 0), terminate: true)
        return try builder.result().get()
    }

    private func checkUsable() throws(XMLParseError) {
        if let error = builder.error { throw error }
        if finished { throw .malformed("the parser has already finished") }
    }
}
