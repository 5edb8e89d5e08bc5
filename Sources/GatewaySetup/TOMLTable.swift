/// A TOML table: values by key, in the order the document gave them, with the line of each key.
///
/// Equality compares keys, order and values; line numbers are where the table came from, not what it says.
public struct TOMLTable: Sendable, Equatable {
    /// The keys in document order.
    public private(set) var keys: [String] = []
    private var values: [String: TOMLValue] = [:]
    private var lines: [String: Int] = [:]
    /// The line where the table begins: its `[header]`, the key of an inline table, 1 for the root.
    public var line: Int

    /// An empty table.
    public init(line: Int = 1) {
        self.line = line
    }

    /// A table of these pairs, in this order (for building expected values in tests).
    public init(_ pairs: KeyValuePairs<String, TOMLValue>) {
        self.line = 1
        for (key, value) in pairs { self[key] = value }
    }

    /// The value of `key`; assigning appends a new key at the end, or replaces the value in place.
    public subscript(key: String) -> TOMLValue? {
        get { values[key] }
        set {
            if let newValue {
                if values.updateValue(newValue, forKey: key) == nil { keys.append(key) }
            } else if values.removeValue(forKey: key) != nil {
                keys.removeAll { $0 == key }
                lines[key] = nil
            }
        }
    }

    /// The line on which `key` was defined, when the table came from a document.
    public func line(of key: String) -> Int? {
        lines[key]
    }

    mutating func set(_ key: String, _ value: TOMLValue, line: Int) {
        self[key] = value
        lines[key] = line
    }

    public static func == (lhs: TOMLTable, rhs: TOMLTable) -> Bool {
        lhs.keys == rhs.keys && lhs.values == rhs.values
    }
}
