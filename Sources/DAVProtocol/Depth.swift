/// The `Depth` header (RFC 4918 section 10.2).
public enum Depth: Sendable, Equatable {
    case zero, one, infinity

    /// Parses `0`, `1` or `infinity` (case-insensitive, surrounding spaces allowed).
    /// - Returns: `nil` when the header is absent; each method picks its own default.
    /// - Throws: ``HeaderError/invalid(header:value:)`` for anything else.
    public static func parse(_ header: String?) throws(HeaderError) -> Depth? {
        guard let header else { return nil }
        switch header.trimmingSpaces().lowercased() {
        case "0": return .zero
        case "1": return .one
        case "infinity": return .infinity
        default: throw .invalid(header: "Depth", value: header)
        }
    }
}
