import Dispatch
import HummingbirdBcrypt

/// Runs bcrypt away from Swift's cooperative thread pool.
///
/// One bcrypt verify at cost 12 takes about 250 ms of CPU; on the cooperative pool (one thread per
/// core) a handful of logins would stall every request. A concurrent Dispatch queue runs them on
/// Dispatch's own worker threads, at most about one per core, and the caller awaits a continuation.
enum BcryptRunner {
    /// The work factor of every verifier davgate writes (2^12 rounds).
    static let cost: UInt8 = 12

    private static let queue = DispatchQueue(label: "davgate.users.bcrypt", qos: .userInitiated, attributes: .concurrent)

    /// A verifier of a random password nobody knows, checked when the user does not exist so that
    /// an unknown name costs as much time as a wrong password (no timing oracle for user names).
    /// Computed lazily, on the bcrypt queue, the first time an unknown user is tried.
    static let dummyHash: String = Bcrypt.hash(PasswordGenerator.random(length: 32), cost: cost)

    /// `Bcrypt.verify` on the bcrypt queue.
    /// - Parameter hash: a verifier; nil spends the same time against ``dummyHash`` and fails.
    static func verify(_ password: String, hash: String?) async -> Bool {
        await withCheckedContinuation { continuation in
            queue.async {
                let result = Bcrypt.verify(password, hash: hash ?? dummyHash)
                continuation.resume(returning: hash != nil && result)
            }
        }
    }

    /// `Bcrypt.hash` on the caller's thread (the write path is synchronous; see ``UserStore/add(_:password:)``).
    static func hash(_ password: String) -> String {
        Bcrypt.hash(password, cost: cost)
    }
}
