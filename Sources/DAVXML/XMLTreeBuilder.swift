import CLibXML2

/// The state behind one `XMLPushParser`: it owns the libxml2 push parser
/// context and receives its SAX2 events, building the `XMLElement` tree and
/// enforcing `XMLLimits`.
///
/// It is a class because libxml2 calls back through a `void *` user-data
/// pointer, which needs a stable address for the whole parse. It is used from
/// one task at a time only; every libxml2 object it touches belongs to its own
/// context, so any number of builders can run on different threads at once.
final class XMLTreeBuilder {
    /// An element whose end tag has not been seen yet.
    private struct OpenElement {
        var name: XMLName
        var attributes: [(name: XMLName, value: String)]
        var children: [XMLNode] = []
    }

    let limits: XMLLimits
    /// Nil only if libxml2 could not allocate a context.
    private(set) var context: xmlParserCtxtPtr?
    /// The first error seen; everything after it is ignored.
    private(set) var error: XMLParseError?
    private(set) var root: XMLElement?
    private var stack: [OpenElement] = []
    /// Character data not yet attached to the innermost open element. libxml2
    /// delivers text in arbitrary pieces (buffer boundaries, entity and
    /// character references, CDATA sections); collecting the UTF-8 bytes here
    /// merges adjacent pieces into one text node.
    private var pendingText: [UInt8] = []
    private var nodeCount = 0
    private var sawElement = false
    /// Whether every byte fed so far is a UTF-8 byte order mark byte or XML
    /// whitespace (XML 1.0 section 2.3, `S`).
    private var sawOnlyBlanks = true
    private var bytesSeen = 0
    private var bomBytes = 0
    private static let utf8BOM: [UInt8] = [0xEF, 0xBB, 0xBF]

    /// Nothing but whitespace, after a complete byte order mark if any.
    private var bodyIsBlank: Bool {
        sawOnlyBlanks && (bomBytes == 0 || bomBytes == Self.utf8BOM.count)
    }

    /// `xmlInitParser` must run once, before any thread uses libxml2; a
    /// static let is initialized exactly once and thread-safely.
    private static let libraryInitialized: Void = xmlInitParser()

    init(limits: XMLLimits, ignoreDeclaredEncoding: Bool) {
        Self.libraryInitialized
        self.limits = limits
        var handler = Self.saxHandler()
        let userData = Unmanaged.passUnretained(self).toOpaque()
        // libxml2 copies the handler into the context, so a local is enough.
        // No initial chunk: encoding detection waits for the first 4 bytes.
        context = xmlCreatePushParserCtxt(&handler, userData, nil, 0, nil)
        guard let context else {
            error = .malformed("libxml2 could not create a parser context")
            return
        }
        // NONET: never fetch anything over the network. Deliberately absent:
        // NOENT (substitute entities), DTDLOAD (load the external subset) and
        // DTDATTR (default attributes from a DTD), which are what make XXE and
        // entity expansion possible. libxml2 2.9 has no XML_PARSE_NO_XXE; the
        // DOCTYPE callbacks below refuse any DTD before it can matter.
        var options = Int32(XML_PARSE_NONET.rawValue)
        if ignoreDeclaredEncoding {
            options |= Int32(XML_PARSE_IGNORE_ENC.rawValue)
        }
        xmlCtxtUseOptions(context, options)
    }

    deinit {
        if let context {
            // Our handler has no startDocument, so libxml2 should never build
            // a document; free it anyway if some path did.
            if let doc = context.pointee.myDoc {
                xmlFreeDoc(doc)
                context.pointee.myDoc = nil
            }
            xmlFreeParserCtxt(context)
        }
    }

    // MARK: Driving the parser

    /// Hands bytes to libxml2; `terminate` tells it the document is complete.
    func parse(_ bytes: UnsafeRawBufferPointer, terminate: Bool) {
        guard error == nil, let context else { return }
        if sawOnlyBlanks { scanForContent(bytes) }
        // A few errors are raised without a parser context (the encoding
        // converter's "input conversion failed", I/O errors) and would go to
        // the thread's handler, which prints to stderr. libxml2 keeps that
        // handler per thread, and the whole chunk is parsed synchronously on
        // this thread, so point it at this builder for the duration and put
        // the previous one back afterwards.
        let savedHandler = __xmlStructuredError().pointee
        let savedContext = __xmlStructuredErrorContext().pointee
        xmlSetStructuredErrorFunc(Unmanaged.passUnretained(self).toOpaque(), Self.errorHandler)
        defer { xmlSetStructuredErrorFunc(savedContext, savedHandler) }

        var rest = bytes
        repeat {
            // xmlParseChunk takes an Int32 length.
            let count = min(rest.count, 1 << 30)
            let last = terminate && count == rest.count
            let base = rest.baseAddress?.assumingMemoryBound(to: CChar.self)
            let status = xmlParseChunk(context, base, Int32(count), last ? 1 : 0)
            if error == nil, status != 0 {
                fail(.malformed("libxml2 error \(status)"))
            }
            if error != nil {
                // Only now, with libxml2 back out of its own code, is it safe
                // to halt it (see `fail`).
                xmlStopParser(context)
                return
            }
            rest = UnsafeRawBufferPointer(rebasing: rest[count...])
        } while !rest.isEmpty
    }

    private func scanForContent(_ bytes: UnsafeRawBufferPointer) {
        for byte in bytes {
            defer { bytesSeen += 1 }
            if bytesSeen < Self.utf8BOM.count, bytesSeen == bomBytes, byte == Self.utf8BOM[bytesSeen] {
                bomBytes += 1
                continue
            }
            switch byte {
            case 0x20, 0x09, 0x0A, 0x0D: continue
            default:
                sawOnlyBlanks = false
                return
            }
        }
    }

    /// Records the first error and silences every further SAX event.
    ///
    /// This runs inside libxml2 callbacks, so it only sets `disableSAX`, a
    /// flag libxml2 itself sets on fatal errors. Calling `xmlStopParser`
    /// here would be a use after free: it frees the input buffer, and when
    /// the callback is an error raised by the encoding converter, libxml2
    /// keeps using that buffer after the callback returns (found by the fuzz
    /// target with libxml2 2.9.14). `parse` calls `xmlStopParser` once
    /// `xmlParseChunk` has returned; until then at most the rest of the
    /// current chunk, already within `maxBytes`, is scanned with SAX off.
    func fail(_ newError: XMLParseError) {
        if error == nil { error = newError }
        context?.pointee.disableSAX = 1
    }

    /// The result after the final chunk.
    func result() -> Result<XMLElement, XMLParseError> {
        if let error { return .failure(error) }
        // Every error reaches `report`; this only guards against one that
        // did not. (Not `nsWellFormed`: the tolerated IRI warning clears it.)
        if let context, context.pointee.wellFormed == 0 {
            return .failure(.malformed("not well-formed"))
        }
        guard let root, stack.isEmpty else { return .failure(.empty) }
        return .success(root)
    }

    // MARK: SAX2 events

    private func startElement(
        localname: UnsafePointer<xmlChar>?,
        uri: UnsafePointer<xmlChar>?,
        attributeCount: Int,
        attributes: UnsafeMutablePointer<UnsafePointer<xmlChar>?>?
    ) {
        guard error == nil else { return }
        if stack.count >= limits.maxDepth { return fail(.tooDeep) }
        nodeCount += 1 + attributeCount
        if nodeCount > limits.maxNodes { return fail(.tooManyNodes) }
        if !sawElement, let foreign = iconvEncoding() { return fail(.unsupportedEncoding(foreign)) }
        flushText()
        sawElement = true
        let name = XMLName(Self.namespace(uri), Self.string(localname))
        var resolved: [(name: XMLName, value: String)] = []
        resolved.reserveCapacity(attributeCount)
        if let attributes {
            // Five pointers per attribute: localname, prefix, URI, value, end.
            // The value is not NUL-terminated. Unprefixed attributes have a
            // NULL URI: they are in no namespace (Namespaces in XML 1.0
            // section 6.2), which XMLName spells "".
            for i in 0..<attributeCount {
                let a = attributes + 5 * i
                let value = Self.attributeValue(from: a[3], to: a[4])
                resolved.append((XMLName(Self.namespace(a[2]), Self.string(a[0])), value))
            }
        }
        stack.append(OpenElement(name: name, attributes: resolved))
    }

    /// The encoding libxml2 converts the body from, when that conversion goes
    /// through iconv rather than one of its own decoders. Asked at the root
    /// element: the XML declaration has been read by then, and no content has
    /// reached the tree yet.
    private func iconvEncoding() -> String? {
        guard let encoder = context?.pointee.input?.pointee.buf?.pointee.encoder,
              let name = encoder.pointee.name else { return nil }
        let spelled = String(cString: name)
        return Self.nativeEncodings.contains(spelled.uppercased()) ? nil : spelled
    }

    /// The names of libxml2's built-in decoders, which keep a character split
    /// across chunks whole.
    private static let nativeEncodings: Set<String> = ["UTF-8", "UTF-16", "UTF-16LE", "UTF-16BE", "ISO-8859-1", "ASCII", "US-ASCII"]

    private func endElement() {
        guard error == nil, !stack.isEmpty else { return }
        flushText()
        let open = stack.removeLast()
        let element = XMLElement(name: open.name, attributes: open.attributes, children: open.children)
        if stack.isEmpty {
            root = element
        } else {
            stack[stack.count - 1].children.append(.element(element))
        }
    }

    private func characters(_ bytes: UnsafePointer<xmlChar>?, _ length: Int32) {
        // Outside the root element libxml2 reports no character data, but
        // guard anyway: text there is never part of the tree.
        guard error == nil, !stack.isEmpty, let bytes, length > 0 else { return }
        if pendingText.isEmpty {
            nodeCount += 1
            if nodeCount > limits.maxNodes { return fail(.tooManyNodes) }
        }
        pendingText.append(contentsOf: UnsafeBufferPointer(start: bytes, count: Int(length)))
    }

    private func flushText() {
        guard !pendingText.isEmpty, !stack.isEmpty else { return }
        stack[stack.count - 1].children.append(.text(String(decoding: pendingText, as: UTF8.self)))
        pendingText.removeAll(keepingCapacity: true)
    }

    /// libxml2 reports errors of its context here (the handler's `serror`),
    /// never through the process-wide handlers, so concurrent parsers do not
    /// see each other's errors and nothing is printed to stderr.
    private func report(_ xmlError: UnsafePointer<xmlError>) {
        let e = xmlError.pointee
        // Warnings (such as a relative namespace URI) are not errors. Every
        // error is fatal, including namespace errors such as an undeclared
        // prefix, which libxml2 alone would treat as recoverable.
        guard e.level.rawValue >= XML_ERR_ERROR.rawValue else { return }
        // libxml2 raises "not a valid URI" for a namespace name that is an
        // IRI (say `urn:\u{1F600}`) at error level but with a warning code
        // and recovers; the name is still a fine identifier, so accept it.
        if e.code == Int32(XML_WAR_NS_URI.rawValue) || e.code == Int32(XML_WAR_NS_URI_RELATIVE.rawValue) {
            return
        }
        // libxml2 words an empty body as "Document is empty" or "Extra
        // content at the end of the document" depending on where the push
        // parser was; and "Document is empty" also covers text before the
        // root. Whether the body was blank is what decides.
        if !sawElement, bodyIsBlank {
            return fail(.empty)
        }
        var message = e.message.map { String(cString: $0) } ?? "error \(e.code)"
        while message.last?.isWhitespace == true { message.removeLast() }
        fail(.malformed("\(message) (line \(e.line), column \(e.int2))"))
    }

    // MARK: Helpers

    private static func string(_ p: UnsafePointer<xmlChar>?) -> String {
        guard let p else { return "" }
        return String(cString: p)
    }

    /// A namespace name as delivered by libxml2: it comes from an `xmlns`
    /// attribute value and has the same `&#38;` encoding (see
    /// `attributeValue`).
    private static func namespace(_ p: UnsafePointer<xmlChar>?) -> String {
        guard let p else { return "" }
        return decodingAmpersands(UnsafeBufferPointer(start: p, count: Int(xmlStrlen(p))))
    }

    /// An attribute value as delivered by libxml2's SAX2 interface.
    private static func attributeValue(from start: UnsafePointer<xmlChar>?, to end: UnsafePointer<xmlChar>?) -> String {
        guard let start, let end, end > start else { return "" }
        return decodingAmpersands(UnsafeBufferPointer(start: start, count: end - start))
    }

    /// Without `XML_PARSE_NOENT` (which we must not set), libxml2 hands a `&`
    /// that came from `&amp;` or `&#38;` in an attribute value (namespace
    /// declarations included) to SAX2 as the five characters `&#38;`,
    /// expecting a tree builder to decode it again. Every other reference is
    /// already decoded and a literal `&` cannot occur in a well-formed value,
    /// so each `&` in the buffer starts exactly that sequence.
    private static func decodingAmpersands(_ raw: UnsafeBufferPointer<UInt8>) -> String {
        guard raw.contains(UInt8(ascii: "&")) else { return String(decoding: raw, as: UTF8.self) }
        let escape: [UInt8] = Array("&#38;".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(raw.count)
        var i = 0
        while i < raw.count {
            if raw[i] == UInt8(ascii: "&"), raw.count - i >= escape.count,
               raw[i..<(i + escape.count)].elementsEqual(escape) {
                out.append(UInt8(ascii: "&"))
                i += escape.count
            } else {
                out.append(raw[i])
                i += 1
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static func builder(_ ctx: UnsafeMutableRawPointer?) -> XMLTreeBuilder? {
        guard let ctx else { return nil }
        return Unmanaged<XMLTreeBuilder>.fromOpaque(ctx).takeUnretainedValue()
    }

    /// A SAX2 handler with only the callbacks we need. Everything a DTD could
    /// feed (the DOCTYPE itself, entity, element, attribute-list and notation
    /// declarations) aborts the parse with `.doctypeForbidden`: RFC 4918
    /// section 20.6 requires servers to guard against entity expansion and
    /// external entities, and WebDAV bodies never need a DTD. No `getEntity`
    /// is installed, so only the five predefined entities and character
    /// references are ever expanded; any other reference is a fatal
    /// "undeclared entity" error (XML 1.0 section 4.1, WFC: Entity Declared).
    private static func saxHandler() -> xmlSAXHandler {
        var h = xmlSAXHandler()
        h.initialized = UInt32(XML_SAX2_MAGIC)
        h.startElementNs = { ctx, localname, _, uri, _, _, attributeCount, _, attributes in
            XMLTreeBuilder.builder(ctx)?.startElement(
                localname: localname, uri: uri,
                attributeCount: Int(attributeCount), attributes: attributes)
        }
        h.endElementNs = { ctx, _, _, _ in XMLTreeBuilder.builder(ctx)?.endElement() }
        h.characters = { ctx, bytes, length in XMLTreeBuilder.builder(ctx)?.characters(bytes, length) }
        // CDATA sections are text (XML 1.0 section 2.7).
        h.cdataBlock = { ctx, bytes, length in XMLTreeBuilder.builder(ctx)?.characters(bytes, length) }
        // Whitespace is content: keep it (callers skip it with `elements`).
        h.ignorableWhitespace = h.characters
        h.internalSubset = { ctx, _, _, _ in XMLTreeBuilder.builder(ctx)?.fail(.doctypeForbidden) }
        h.externalSubset = { ctx, _, _, _ in XMLTreeBuilder.builder(ctx)?.fail(.doctypeForbidden) }
        h.entityDecl = { ctx, _, _, _, _, _ in XMLTreeBuilder.builder(ctx)?.fail(.doctypeForbidden) }
        h.unparsedEntityDecl = { ctx, _, _, _, _ in XMLTreeBuilder.builder(ctx)?.fail(.doctypeForbidden) }
        h.elementDecl = { ctx, _, _, _ in XMLTreeBuilder.builder(ctx)?.fail(.doctypeForbidden) }
        h.attributeDecl = { ctx, _, _, _, _, _, _ in XMLTreeBuilder.builder(ctx)?.fail(.doctypeForbidden) }
        h.notationDecl = { ctx, _, _, _ in XMLTreeBuilder.builder(ctx)?.fail(.doctypeForbidden) }
        h.serror = errorHandler
        return h
    }

    private static let errorHandler: xmlStructuredErrorFunc = { ctx, error in
        guard let error else { return }
        XMLTreeBuilder.builder(ctx)?.report(error)
    }
}
