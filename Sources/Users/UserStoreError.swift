/// Why a ``UserStore`` refused an operation.
public enum UserStoreError: Error, CustomStringConvertible, Equatable {
    /// A user with this name already exists.
    case exists(String)
    /// No user has this name.
    case notFound(String)
    /// The name is not 1-64 of ASCII letters, digits and `._-@`, or starts with `.`.
    case invalidName(String)
    /// The password is empty.
    case emptyPassword
    /// The password cannot be stored faithfully as a bcrypt verifier (it contains NUL, or is over 72 bytes).
    case invalidPassword(String)
    /// The users file could not be read or written; the string says which file and why.
    case io(String)

    public var description: String {
        switch self {
        case .exists(let name): "user \"\(name)\" already exists"
        case .notFound(let name): "no user named \"\(name)\""
        case .invalidName(let name):
            "invalid user name \"\(name)\": use 1-64 of letters, digits, '.', '_', '-', '@', not starting with '.'"
        case .emptyPassword: "the password is empty"
        case .invalidPassword(let reason): "invalid password: \(reason)"
        case .io(let reason): reason
        }
    }
}
