/// A value of the TOML subset davgate reads (see ``TOML``).
public enum TOMLValue: Sendable, Equatable {
    case string(String)
    case integer(Int64)
    case float(Double)
    case bool(Bool)
    case array([TOMLValue])
    case table(TOMLTable)

    /// The TOML name of the value's type, for error messages ("expected a string, got an integer").
    public var typeName: String {
        switch self {
        case .string: "a string"
        case .integer: "an integer"
        case .float: "a float"
        case .bool: "a boolean"
        case .array: "an array"
        case .table: "a table"
        }
    }
}
