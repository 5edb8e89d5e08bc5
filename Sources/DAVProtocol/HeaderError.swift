/// A request header whose value does not follow its grammar; answered with
/// `400 Bad Request`.
public enum HeaderError: Error, Sendable, Equatable {
    case invalid(header: String, value: String)
}
