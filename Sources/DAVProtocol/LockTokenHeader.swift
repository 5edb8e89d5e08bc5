/// The `Lock-Token` request header of UNLOCK (RFC 4918 section 10.5):
/// `Lock-Token = Coded-URL`.
public enum LockTokenHeader {
    /// The lock token inside the header, without angle brackets.
    ///
    /// Accepts `<urn:uuid:...>` and, because the Windows Mini-Redirector sends it
    /// that way, the bare token; surrounding spaces are ignored.
    /// - Returns: `nil` when the header is absent or empty.
    public static func parse(_ header: String?) -> String? {
        guard let header else { return nil }
        var value = header.trimmingSpaces()
        if value.hasPrefix("<") && value.hasSuffix(">") && value.count >= 2 {
            value = value.dropFirst().dropLast().trimmingSpaces()
        }
        return value.isEmpty ? nil : String(value)
    }
}
