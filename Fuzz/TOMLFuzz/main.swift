// libFuzzer target for the configuration file's TOML reader:
// Sources/GatewaySetup/TOML*.swift, which need nothing else, compiled together
// with this file into one module by scripts/fuzz.

/// Checks, for any input used as a document:
/// - an error points inside the document: a line that exists and a column
///   at most one past that line's end;
/// - every key's and table's line exists;
/// - a parsed document written back as TOML (one `"key" = value` line per
///   root key, nested tables inline, strings escaped) reads back equal, NaN
///   equal to NaN.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTOML(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    let text = String(decoding: bytes, as: UTF8.self)
    // Byte lengths of the lines (split at LF, as the reader counts them).
    let lines = text.utf8.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map(\.count)
    let document: TOMLTable
    do throws(TOMLError) {
        document = try TOML.parse(text)
    } catch {
        check((1...lines.count).contains(error.line), "\(error) is past the last line \(lines.count)")
        check((1...lines[error.line - 1] + 1).contains(error.column), "\(error) is outside its line of \(lines[error.line - 1]) bytes")
        return 0
    }
    checkLines(document, lineCount: lines.count)
    let written = write(document)
    guard let again = try? TOML.parse(written) else { fail("written document does not parse:\n\(written)") }
    check(same(.table(again), .table(document)), "written document reads back differently:\n\(written)")
    return 0
}

private func checkLines(_ table: TOMLTable, lineCount: Int) {
    check((1...lineCount).contains(table.line), "table on line \(table.line) of \(lineCount)")
    for key in table.keys {
        guard let line = table.line(of: key), (1...lineCount).contains(line) else {
            fail("key \(key) on line \(String(describing: table.line(of: key))) of \(lineCount)")
        }
        visitTables(table[key]!) { checkLines($0, lineCount: lineCount) }
    }
}

private func visitTables(_ value: TOMLValue, _ body: (TOMLTable) -> Void) {
    switch value {
    case .table(let table): body(table)
    case .array(let elements): for element in elements { visitTables(element, body) }
    case .string, .integer, .float, .bool: break
    }
}

private func write(_ document: TOMLTable) -> String {
    document.keys.map { "\(quoted($0)) = \(inline(document[$0]!))\n" }.joined()
}

private func inline(_ value: TOMLValue) -> String {
    switch value {
    case .string(let s): quoted(s)
    case .integer(let i): String(i)
    case .float(let d): d.isNaN ? "nan" : d.isInfinite ? (d < 0 ? "-inf" : "inf") : "\(d)"
    case .bool(let b): b ? "true" : "false"
    case .array(let elements): "[" + elements.map(inline).joined(separator: ", ") + "]"
    case .table(let t): "{" + t.keys.map { "\(quoted($0)) = \(inline(t[$0]!))" }.joined(separator: ", ") + "}"
    }
}

/// A TOML basic string: quote, backslash and control characters escaped.
private func quoted(_ s: String) -> String {
    var out = "\""
    for scalar in s.unicodeScalars {
        switch scalar {
        case "\"": out += "\\\""
        case "\\": out += "\\\\"
        case "\u{0}"..."\u{1F}", "\u{7F}":
            let hex = String(scalar.value, radix: 16, uppercase: true)
            out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
        default: out.unicodeScalars.append(scalar)
        }
    }
    return out + "\""
}

/// Equality with NaN equal to itself (`Double`'s `==` says otherwise).
private func same(_ a: TOMLValue, _ b: TOMLValue) -> Bool {
    switch (a, b) {
    case (.float(let x), .float(let y)): x == y || (x.isNaN && y.isNaN)
    case (.array(let xs), .array(let ys)): xs.count == ys.count && zip(xs, ys).allSatisfy(same)
    case (.table(let x), .table(let y)): x.keys == y.keys && x.keys.allSatisfy { same(x[$0]!, y[$0]!) }
    default: a == b
    }
}
