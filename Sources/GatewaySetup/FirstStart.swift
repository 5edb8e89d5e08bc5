import Users

/// What happens once, on the first start of a fresh installation.
public enum FirstStart {
    /// The account made when there is none.
    public static let adminName = "admin"

    /// Makes the user `admin` with a random password when the store has no user at all.
    ///
    /// Computes a bcrypt verifier on the calling thread (about 250 ms); call it before the server starts.
    /// - Returns: the new password, to print once (it is stored only as a bcrypt verifier), or nil when
    ///   the store already had users.
    public static func ensureAdmin(in store: UserStore) throws -> String? {
        guard store.isEmpty else { return nil }
        let password = PasswordGenerator.random()
        try store.add(adminName, password: password)
        return password
    }
}
