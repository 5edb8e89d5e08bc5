/// A reader for the subset of TOML 1.0 that davgate's configuration uses.
///
/// Read: comments, `[table]` and `[[array.of.tables]]` headers, bare, quoted and dotted keys, basic
/// strings with escapes (`\" \\ \b \t \n \f \r \uXXXX \UXXXXXXXX`), literal strings, integers
/// (decimal with `_`, `0x`, `0o`, `0b`), floats (with `inf` and `nan`), booleans, arrays (over several
/// lines, trailing comma allowed) and inline tables (as TOML 1.1: newlines and a trailing comma
/// allowed). Not read, and refused with a clear reason: multi-line strings, dates and times.
/// Redefining a key or a table is an error, as TOML requires.
public enum TOML {
    /// Parses a document.
    /// - Returns: the root table.
    /// - Throws: ``TOMLError`` with the line and column of the first problem.
    public static func parse(_ text: String) throws(TOMLError) -> TOMLTable {
        var parser = TOMLParser(Array(text.utf8))
        return try parser.parseDocument()
    }
}

/// A table while the document is being read: tables can still be added to from later headers.
private final class TableNode {
    enum Slot {
        case value(TOMLValue)
        case table(TableNode)
        case tables(TableArrayNode)
    }

    let line: Int
    var order: [String] = []
    var slots: [String: Slot] = [:]
    var lines: [String: Int] = [:]
    /// Defined by its own `[header]`: a second header for it is an error.
    var hasHeader = false
    /// Made by a dotted key: a later `[header]` naming it is an error (TOML 1.0, "Table").
    var madeByDottedKey = false

    init(line: Int) {
        self.line = line
    }

    func insert(_ key: String, _ slot: Slot, line: Int) {
        order.append(key)
        slots[key] = slot
        lines[key] = line
    }

    var table: TOMLTable {
        var table = TOMLTable(line: line)
        for key in order {
            switch slots[key]! {
            case .value(let value): table.set(key, value, line: lines[key]!)
            case .table(let node): table.set(key, .table(node.table), line: lines[key]!)
            case .tables(let array): table.set(key, .array(array.elements.map { .table($0.table) }), line: lines[key]!)
            }
        }
        return table
    }
}

private final class TableArrayNode {
    var elements: [TableNode] = []
}

private struct TOMLParser {
    private let bytes: [UInt8]
    private var index = 0
    private var line = 1
    private var lineStart = 0

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    // MARK: - Document

    mutating func parseDocument() throws(TOMLError) -> TOMLTable {
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { index = 3; lineStart = 3 }
        let root = TableNode(line: 1)
        var current = root
        while true {
            skipSpaces()
            guard let byte = peek() else { break }
            switch byte {
            case UInt8(ascii: "#"), UInt8(ascii: "\n"), UInt8(ascii: "\r"):
                break
            case UInt8(ascii: "["):
                current = try parseHeader(root: root)
            default:
                try parseKeyValue(into: current)
            }
            try endOfLine()
        }
        return root.table
    }

    /// After a header or a key/value pair: only spaces and a comment may follow on the line.
    private mutating func endOfLine() throws(TOMLError) {
        skipSpaces()
        if peek() == UInt8(ascii: "#") { try skipComment() }
        guard let byte = peek() else { return }
        if byte == UInt8(ascii: "\n") {
            advanceLine()
        } else if byte == UInt8(ascii: "\r"), peek(1) == UInt8(ascii: "\n") {
            index += 1
            advanceLine()
        } else {
            throw error("expected the end of the line, found \(describe(byte))")
        }
    }

    private mutating func parseHeader(root: TableNode) throws(TOMLError) -> TableNode {
        let headerLine = line
        let headerColumn = column
        index += 1
        let isArray = peek() == UInt8(ascii: "[")
        if isArray { index += 1 }
        skipSpaces()
        let path = try parseKey()
        skipSpaces()
        try expect("]", "expected ] to close the table header")
        if isArray { try expect("]", "expected ]] to close the array of tables header") }
        let name = path.map(Self.quoteIfNeeded).joined(separator: ".")
        let failure = { (reason: String) in TOMLError(line: headerLine, column: headerColumn, reason: reason) }

        var node = root
        for key in path.dropLast() {
            switch node.slots[key] {
            case nil:
                let child = TableNode(line: headerLine)
                node.insert(key, .table(child), line: headerLine)
                node = child
            case .table(let child):
                node = child
            case .tables(let array):
                node = array.elements.last!
            case .value:
                throw failure("cannot define [\(name)]: \(Self.quoteIfNeeded(key)) is already a value")
            }
        }
        let last = path.last!
        if isArray {
            let element = TableNode(line: headerLine)
            element.hasHeader = true
            switch node.slots[last] {
            case nil:
                let array = TableArrayNode()
                array.elements.append(element)
                node.insert(last, .tables(array), line: headerLine)
            case .tables(let array):
                array.elements.append(element)
            case .table, .value:
                throw failure("cannot define [[\(name)]]: \(Self.quoteIfNeeded(last)) is already defined and not an array of tables")
            }
            return element
        }
        switch node.slots[last] {
        case nil:
            let child = TableNode(line: headerLine)
            child.hasHeader = true
            node.insert(last, .table(child), line: headerLine)
            return child
        case .table(let child) where !child.hasHeader && !child.madeByDottedKey:
            child.hasHeader = true
            return child
        case .table:
            throw failure("table [\(name)] is defined twice")
        case .tables, .value:
            throw failure("cannot define [\(name)]: it is already defined as a value or an array of tables")
        }
    }

    // MARK: - Keys

    /// `key = value`, where key may be dotted; intermediate tables are made as needed.
    private mutating func parseKeyValue(into table: TableNode) throws(TOMLError) {
        let keyLine = line
        let keyColumn = column
        let path = try parseKey()
        skipSpaces()
        try expect("=", "expected = after the key")
        skipSpaces()
        let value = try parseValue()
        let name = path.map(Self.quoteIfNeeded).joined(separator: ".")
        let failure = { (reason: String) in TOMLError(line: keyLine, column: keyColumn, reason: reason) }

        var node = table
        for key in path.dropLast() {
            switch node.slots[key] {
            case nil:
                let child = TableNode(line: keyLine)
                child.madeByDottedKey = true
                node.insert(key, .table(child), line: keyLine)
                node = child
            case .table(let child) where child.madeByDottedKey:
                node = child
            case .table, .tables, .value:
                throw failure("cannot set \(name): \(Self.quoteIfNeeded(key)) is already defined")
            }
        }
        let last = path.last!
        guard node.slots[last] == nil else { throw failure("duplicate key \(name)") }
        node.insert(last, .value(value), line: keyLine)
    }

    /// A bare, quoted or dotted key, as its parts.
    private mutating func parseKey() throws(TOMLError) -> [String] {
        var parts: [String] = []
        while true {
            guard let byte = peek() else { throw error("expected a key") }
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                if peek() == UInt8(ascii: "\""), peek(1) == UInt8(ascii: "\"") { throw error("a key cannot be a multi-line string") }
                parts.append(try parseBasicString())
            case UInt8(ascii: "'"):
                index += 1
                parts.append(try parseLiteralString())
            default:
                let start = index
                while let byte = peek(), Self.isBareKeyByte(byte) { index += 1 }
                guard index > start else { throw error("expected a key, found \(describe(byte))") }
                parts.append(String(decoding: bytes[start..<index], as: UTF8.self))
            }
            skipSpaces()
            guard peek() == UInt8(ascii: ".") else { return parts }
            index += 1
            skipSpaces()
        }
    }

    private static func isBareKeyByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "-"):
            true
        default:
            false
        }
    }

    private static func quoteIfNeeded(_ key: String) -> String {
        !key.isEmpty && key.utf8.allSatisfy(isBareKeyByte) ? key : "\"\(key)\""
    }

    // MARK: - Values

    private mutating func parseValue() throws(TOMLError) -> TOMLValue {
        guard let byte = peek() else { throw error("expected a value") }
        switch byte {
        case UInt8(ascii: "\""):
            index += 1
            if peek() == UInt8(ascii: "\""), peek(1) == UInt8(ascii: "\"") {
                throw error("multi-line strings are not supported")
            }
            return .string(try parseBasicString())
        case UInt8(ascii: "'"):
            index += 1
            if peek() == UInt8(ascii: "'"), peek(1) == UInt8(ascii: "'") {
                throw error("multi-line strings are not supported")
            }
            return .string(try parseLiteralString())
        case UInt8(ascii: "["):
            index += 1
            return try parseArray()
        case UInt8(ascii: "{"):
            let tableLine = line
            index += 1
            return .table(try parseInlineTable(line: tableLine))
        case UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "#"):
            throw error("expected a value")
        default:
            return try parseScalar()
        }
    }

    /// After the opening `"`.
    private mutating func parseBasicString() throws(TOMLError) -> String {
        var result: [UInt8] = []
        while true {
            guard let byte = peek() else { throw error("unterminated string") }
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                return String(decoding: result, as: UTF8.self)
            case UInt8(ascii: "\\"):
                index += 1
                guard let escape = peek() else { throw error("unterminated string") }
                index += 1
                switch escape {
                case UInt8(ascii: "\""): result.append(UInt8(ascii: "\""))
                case UInt8(ascii: "\\"): result.append(UInt8(ascii: "\\"))
                case UInt8(ascii: "b"): result.append(0x08)
                case UInt8(ascii: "t"): result.append(0x09)
                case UInt8(ascii: "n"): result.append(0x0A)
                case UInt8(ascii: "f"): result.append(0x0C)
                case UInt8(ascii: "r"): result.append(0x0D)
                case UInt8(ascii: "u"): result.append(contentsOf: try parseUnicodeEscape(digits: 4))
                case UInt8(ascii: "U"): result.append(contentsOf: try parseUnicodeEscape(digits: 8))
                default:
                    index -= 1
                    throw error("invalid escape \\\(describe(escape, quoted: false)) in a string")
                }
            case UInt8(ascii: "\n"), UInt8(ascii: "\r"):
                throw error("unterminated string (a basic string ends on its line)")
            default:
                guard !Self.isForbiddenControl(byte) else { throw error("control character \(describe(byte)) in a string: escape it") }
                result.append(byte)
                index += 1
            }
        }
    }

    private mutating func parseUnicodeEscape(digits: Int) throws(TOMLError) -> [UInt8] {
        guard index + digits <= bytes.count,
            let value = UInt32(String(decoding: bytes[index..<index + digits], as: UTF8.self), radix: 16),
            bytes[index..<index + digits].allSatisfy({ $0 != UInt8(ascii: "+") && $0 != UInt8(ascii: "-") })
        else { throw error("expected \(digits) hexadecimal digits after \\\(digits == 4 ? "u" : "U")") }
        guard let scalar = Unicode.Scalar(value) else {
            throw error("\\\(digits == 4 ? "u" : "U") escape is not a Unicode scalar value")
        }
        index += digits
        return Array(String(Character(scalar)).utf8)
    }

    /// After the opening `'`.
    private mutating func parseLiteralString() throws(TOMLError) -> String {
        let start = index
        while true {
            guard let byte = peek() else { throw error("unterminated string") }
            if byte == UInt8(ascii: "'") {
                index += 1
                return String(decoding: bytes[start..<index - 1], as: UTF8.self)
            }
            if byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r") {
                throw error("unterminated string (a literal string ends on its line)")
            }
            guard !Self.isForbiddenControl(byte) else { throw error("control character \(describe(byte)) in a string") }
            index += 1
        }
    }

    /// Control characters other than tab are not allowed in strings and comments.
    private static func isForbiddenControl(_ byte: UInt8) -> Bool {
        (byte < 0x20 && byte != 0x09) || byte == 0x7F
    }

    /// After the opening `[`: values separated by commas, over any number of lines, with comments.
    private mutating func parseArray() throws(TOMLError) -> TOMLValue {
        var elements: [TOMLValue] = []
        while true {
            try skipSpacesNewlinesAndComments()
            if peek() == UInt8(ascii: "]") {
                index += 1
                return .array(elements)
            }
            elements.append(try parseValue())
            try skipSpacesNewlinesAndComments()
            guard let byte = peek() else { throw error("unterminated array") }
            if byte == UInt8(ascii: ",") {
                index += 1
            } else if byte == UInt8(ascii: "]") {
                index += 1
                return .array(elements)
            } else {
                throw error("expected , or ] in an array, found \(describe(byte))")
            }
        }
    }

    /// After the opening `{`. A finished inline table cannot be extended later.
    private mutating func parseInlineTable(line tableLine: Int) throws(TOMLError) -> TOMLTable {
        let node = TableNode(line: tableLine)
        while true {
            try skipSpacesNewlinesAndComments()
            if peek() == UInt8(ascii: "}") {
                index += 1
                return node.table
            }
            try parseKeyValue(into: node)
            try skipSpacesNewlinesAndComments()
            guard let byte = peek() else { throw error("unterminated inline table") }
            if byte == UInt8(ascii: ",") {
                index += 1
            } else if byte == UInt8(ascii: "}") {
                index += 1
                return node.table
            } else {
                throw error("expected , or } in an inline table, found \(describe(byte))")
            }
        }
    }

    /// Booleans, integers and floats: one token up to the next delimiter.
    private mutating func parseScalar() throws(TOMLError) -> TOMLValue {
        let start = index
        let startColumn = column
        while let byte = peek(), !Self.isDelimiter(byte) { index += 1 }
        let token = String(decoding: bytes[start..<index], as: UTF8.self)
        let tokenLine = line
        let failure = { (reason: String) in TOMLError(line: tokenLine, column: startColumn, reason: reason) }
        guard !token.isEmpty else { throw error("expected a value, found \(describe(bytes[start]))") }
        switch token {
        case "true": return .bool(true)
        case "false": return .bool(false)
        case "inf", "+inf": return .float(.infinity)
        case "-inf": return .float(-.infinity)
        case "nan", "+nan", "-nan": return .float(.nan)
        default: break
        }
        if let value = Self.integer(token) { return .integer(value) }
        if let value = Self.float(token) { return .float(value) }
        if token.utf8.count >= 10, token.utf8.dropFirst(4).first == UInt8(ascii: "-"), token.utf8.first.map(Self.isDigit) == true {
            throw failure("dates and times are not supported")
        }
        if Self.integerShape(token) {
            let unsigned = token.drop { $0 == "+" || $0 == "-" }
            if unsigned.count > 1, unsigned.hasPrefix("0") { throw failure("leading zeros are not allowed in \(token)") }
            throw failure("integer \(token) is out of range")
        }
        if token.first == "\"" || token.first == "'" { throw failure("unterminated string") }
        throw failure("invalid value \(token) (strings need quotes)")
    }

    private static func isDelimiter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"),
            UInt8(ascii: ","), UInt8(ascii: "]"), UInt8(ascii: "}"), UInt8(ascii: "#"):
            true
        default:
            false
        }
    }

    private static func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }

    /// Removes `_` when each one stands between two digits of `radix`; nil otherwise.
    private static func digits(_ text: Substring, radix: Int) -> String? {
        let isDigit = { (character: Character) in character.isASCII && character.hexDigitValue.map { $0 < radix } == true }
        guard let first = text.first, let last = text.last, isDigit(first), isDigit(last) else { return nil }
        var previousWasDigit = false
        var result = ""
        for character in text {
            if character == "_" {
                guard previousWasDigit else { return nil }
                previousWasDigit = false
            } else {
                guard isDigit(character) else { return nil }
                previousWasDigit = true
                result.append(character)
            }
        }
        return result
    }

    private static func integerShape(_ token: String) -> Bool {
        var body = Substring(token)
        if body.first == "+" || body.first == "-" { body = body.dropFirst() }
        return digits(body, radix: 10) != nil
    }

    private static func integer(_ token: String) -> Int64? {
        for (prefix, radix) in [("0x", 16), ("0o", 8), ("0b", 2)] where token.hasPrefix(prefix) {
            guard let digits = digits(token.dropFirst(2), radix: radix) else { return nil }
            return Int64(digits, radix: radix)
        }
        var body = Substring(token)
        var sign = ""
        if body.first == "+" || body.first == "-" {
            sign = body.first == "-" ? "-" : ""
            body = body.dropFirst()
        }
        guard let digits = digits(body, radix: 10) else { return nil }
        guard digits == "0" || !digits.hasPrefix("0") else { return nil }  // no leading zeros
        return Int64(sign + digits)
    }

    private static func float(_ token: String) -> Double? {
        var body = Substring(token)
        var sign = ""
        if body.first == "+" || body.first == "-" {
            sign = body.first == "-" ? "-" : ""
            body = body.dropFirst()
        }
        let exponentIndex = body.firstIndex { $0 == "e" || $0 == "E" }
        let mantissa = body[..<(exponentIndex ?? body.endIndex)]
        var text = sign
        let parts = mantissa.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        guard let integerPart = digits(parts[0], radix: 10), integerPart == "0" || !integerPart.hasPrefix("0") else { return nil }
        text += integerPart
        if parts.count == 2 {
            guard let fraction = digits(parts[1], radix: 10) else { return nil }
            text += "." + fraction
        } else if exponentIndex == nil {
            return nil  // an integer, not a float
        }
        if let exponentIndex {
            var exponent = body[body.index(after: exponentIndex)...]
            var exponentSign = ""
            if exponent.first == "+" || exponent.first == "-" {
                exponentSign = String(exponent.first!)
                exponent = exponent.dropFirst()
            }
            guard let exponentDigits = digits(exponent, radix: 10) else { return nil }
            text += "e" + exponentSign + exponentDigits
        }
        return Double(text)
    }

    // MARK: - Bytes

    private var column: Int { index - lineStart + 1 }

    private func peek(_ offset: Int = 0) -> UInt8? {
        index + offset < bytes.count ? bytes[index + offset] : nil
    }

    private mutating func advanceLine() {
        index += 1
        line += 1
        lineStart = index
    }

    private mutating func expect(_ character: Unicode.Scalar, _ reason: String) throws(TOMLError) {
        guard peek() == UInt8(ascii: character) else { throw error(reason) }
        index += 1
    }

    private mutating func skipSpaces() {
        while let byte = peek(), byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") { index += 1 }
    }

    /// From `#` to the end of the line (the newline stays).
    private mutating func skipComment() throws(TOMLError) {
        while let byte = peek(), byte != UInt8(ascii: "\n") {
            if byte == UInt8(ascii: "\r"), peek(1) == UInt8(ascii: "\n") { return }
            guard !Self.isForbiddenControl(byte) else { throw error("control character \(describe(byte)) in a comment") }
            index += 1
        }
    }

    private mutating func skipSpacesNewlinesAndComments() throws(TOMLError) {
        while true {
            skipSpaces()
            switch peek() {
            case UInt8(ascii: "#"):
                try skipComment()
            case UInt8(ascii: "\n"):
                advanceLine()
            case UInt8(ascii: "\r") where peek(1) == UInt8(ascii: "\n"):
                index += 1
                advanceLine()
            default:
                return
            }
        }
    }

    private func error(_ reason: String) -> TOMLError {
        TOMLError(line: line, column: column, reason: reason)
    }

    private func describe(_ byte: UInt8, quoted: Bool = true) -> String {
        let text: String
        switch byte {
        case UInt8(ascii: "\n"): text = "\\n"
        case UInt8(ascii: "\r"): text = "\\r"
        case UInt8(ascii: "\t"): text = "\\t"
        case 0x20..<0x7F: text = String(UnicodeScalar(byte))
        default: text = "\\u{\(String(byte, radix: 16, uppercase: true))}"
        }
        return quoted ? "'\(text)'" : text
    }
}
