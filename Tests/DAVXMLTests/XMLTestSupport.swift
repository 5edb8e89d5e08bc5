import DAVXML

/// Shorthand for building expected trees.
func element(_ namespace: String, _ local: String, _ attributes: [(XMLName, String)] = [], _ children: XMLNode...) -> XMLElement {
    XMLElement(name: XMLName(namespace, local), attributes: attributes.map { (name: $0.0, value: $0.1) }, children: children)
}

func node(_ e: XMLElement) -> XMLNode { .element(e) }

/// Parses with the one-shot API, returning the error instead of throwing so
/// that tests can compare it with `#expect(... == ...)`.
func parseResult(_ bytes: [UInt8], limits: XMLLimits = .default) -> Result<XMLElement, XMLParseError> {
    Result { () throws(XMLParseError) in try XMLDocumentParser.parse(bytes, limits: limits) }
}

func parseResult(_ string: String, limits: XMLLimits = .default) -> Result<XMLElement, XMLParseError> {
    Result { () throws(XMLParseError) in try XMLDocumentParser.parse(string, limits: limits) }
}

/// Feeds `bytes` in chunks of `size` bytes (1 = byte by byte).
func parseInChunks(_ bytes: [UInt8], size: Int, limits: XMLLimits = .default) -> Result<XMLElement, XMLParseError> {
    Result { () throws(XMLParseError) in
        var parser = XMLPushParser(limits: limits)
        var start = 0
        while start < bytes.count {
            let end = min(start + size, bytes.count)
            try parser.feed(bytes[start..<end])
            start = end
        }
        return try parser.finish()
    }
}

extension Result {
    var failure: Failure? {
        if case .failure(let e) = self { e } else { nil }
    }
}

extension XMLParseError {
    var isMalformed: Bool {
        if case .malformed = self { true } else { false }
    }

    var isUnsupportedEncoding: Bool {
        if case .unsupportedEncoding = self { true } else { false }
    }
}
