/// The `Overwrite` header of COPY and MOVE (RFC 4918 section 10.6).
public enum Overwrite {
    /// Parses `T` or `F` (either case, surrounding spaces allowed).
    /// - Returns: `true` when absent: "If the Overwrite header is not included in
    ///   a COPY or MOVE request, then the resource MUST treat the request as if it
    ///   has an Overwrite header of value T".
    /// - Throws: ``HeaderError/invalid(header:value:)`` for anything else.
    public static func parse(_ header: String?) throws(HeaderError) -> Bool {
        guard let header else { return true }
        switch header.trimmingSpaces() {
        case "T", "t": return true
        case "F", "f": return false
        default: throw .invalid(header: "Overwrite", value: header)
        }
    }
}
