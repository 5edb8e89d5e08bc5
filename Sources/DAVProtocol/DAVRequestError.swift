import DAVXML

/// A request body that is well-formed XML but not the WebDAV document the
/// method expects; answered with `400 Bad Request` (or `422` where the server
/// prefers it).
public enum DAVRequestError: Error, Sendable, Equatable {
    /// The document element is not the one the method takes.
    case unexpectedRoot(XMLName)
    /// A required element is absent; the associated value names it (`lockscope`).
    case missing(String)
    /// An element is present but its content is not allowed; the value says which.
    case invalid(String)
}

