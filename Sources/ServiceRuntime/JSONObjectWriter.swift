import Logging

/// Writes one JSON object (RFC 8259) field by field, for log lines: no
/// intermediate dictionary, no Foundation, keys in the order given.
struct JSONObjectWriter {
    private var text = "{"
    private var empty = true

    mutating func field(_ key: String, string: String) {
        self.key(key)
        Self.appendString(string, to: &text)
    }

    mutating func field(_ key: String, _ value: Logger.MetadataValue) {
        self.key(key)
        Self.append(value, to: &text)
    }

    consuming func finished() -> String {
        text + "}"
    }

    private mutating func key(_ key: String) {
        if !empty { text += "," }
        empty = false
        Self.appendString(key, to: &text)
        text += ":"
    }

    /// Numbers and booleans logged as values stay numbers and booleans, so
    /// a shipper can sum `bytes` or compare `status` without parsing text.
    private static func append(_ value: Logger.MetadataValue, to text: inout String) {
        switch value {
        case .string(let string):
            appendString(string, to: &text)
        case .stringConvertible(let convertible):
            switch convertible {
            case let number as Int: text += String(number)
            case let number as Int64: text += String(number)
            case let number as UInt: text += String(number)
            case let number as UInt64: text += String(number)
            case let number as Int32: text += String(number)
            case let number as Double where number.isFinite: text += String(number)
            case let flag as Bool: text += flag ? "true" : "false"
            default: appendString(convertible.description, to: &text)
            }
        case .array(let values):
            text += "["
            for (index, element) in values.enumerated() {
                if index > 0 { text += "," }
                append(element, to: &text)
            }
            text += "]"
        case .dictionary(let values):
            var nested = JSONObjectWriter()
            for (key, element) in values.sorted(by: { $0.key < $1.key }) { nested.field(key, element) }
            text += nested.finished()
        }
    }

    /// A JSON string: quotes, backslashes and control characters escaped
    /// (RFC 8259 section 7); everything else, including non-ASCII, as is.
    static func appendString(_ string: String, to text: inout String) {
        text += "\""
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": text += "\\\""
            case "\\": text += "\\\\"
            case "\n": text += "\\n"
            case "\r": text += "\\r"
            case "\t": text += "\\t"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                let hex = String(scalar.value, radix: 16, uppercase: false)
                text += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default:
                text.unicodeScalars.append(scalar)
            }
        }
        text += "\""
    }
}
