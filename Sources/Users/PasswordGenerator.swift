/// Random passwords for accounts davgate makes itself (the first `admin`).
public enum PasswordGenerator {
    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")

    /// A password of `length` characters drawn uniformly from `[A-Za-z0-9]`.
    ///
    /// Uses `SystemRandomNumberGenerator` (the kernel's CSPRNG); 20 characters carry about 119 bits.
    /// - Parameter length: number of characters, at least 1.
    /// - Returns: the password.
    public static func random(length: Int = 20) -> String {
        precondition(length > 0, "a password needs at least one character")
        var generator = SystemRandomNumberGenerator()
        return String((0..<length).map { _ in alphabet.randomElement(using: &generator)! })
    }
}
