import Crypto
import Foundation

/// Recently verified Basic auth credentials, so that a busy client does not pay bcrypt per request.
///
/// Keyed by HMAC-SHA256 of `name + "\0" + password` under a key made fresh for each process: the
/// password itself is never kept, and the keys mean nothing outside this process. Each entry
/// remembers the verifier it was checked against, so a password change or a removal (here or in
/// another process) makes it worthless at once. Only successes are cached.
///
/// An entry lives until it has gone unused for `lifetime`, not `lifetime` after its bcrypt: bcrypt
/// of the same password against the same verifier can only say yes again, so verifying anew gains
/// nothing, while it cost a busy client a request held for a bcrypt (about 250 ms, and as much CPU)
/// every minute. An entry in use exists in memory either way, renewed or made again.
struct VerifiedCredentials {
    /// How long a verified password is trusted without bcrypt once unused.
    static let lifetime: Duration = .seconds(60)
    /// Above this many entries, expired ones are dropped; if that is not enough, all of them.
    static let capacity = 4096

    struct Entry {
        var verifier: String
        var expires: ContinuousClock.Instant
    }

    private var entries: [Data: Entry] = [:]

    /// Makes cache keys: an HMAC keyed once with the process key. Keying
    /// pads the key and hashes both pads, two allocations of arrays and two
    /// SHA-256 blocks; done for every request, that was most of the
    /// authentication's share of a small GET (issue 14). Each key starts
    /// from a copy of the keyed state instead.
    struct KeyMaker: Sendable {
        private let keyed: HMAC<SHA256>

        init(secret: SymmetricKey) {
            keyed = HMAC(key: secret)
        }

        /// The cache key for a name and password.
        func key(name: String, password: String) -> Data {
            var mac = keyed
            var name = name, password = password
            name.withUTF8 { mac.update(data: UnsafeRawBufferPointer($0)) }
            withUnsafeBytes(of: UInt8(0)) { mac.update(data: $0) }
            password.withUTF8 { mac.update(data: UnsafeRawBufferPointer($0)) }
            return Data(mac.finalize())
        }
    }

    /// Whether `key` was verified against `verifier` and has not expired;
    /// a hit starts the entry's lifetime again.
    mutating func use(_ key: Data, verifier: String?, now: ContinuousClock.Instant) -> Bool {
        guard let verifier, let index = entries.index(forKey: key), entries.values[index].verifier == verifier,
              entries.values[index].expires > now else { return false }
        entries.values[index].expires = now + Self.lifetime
        return true
    }

    mutating func insert(_ key: Data, verifier: String, now: ContinuousClock.Instant) {
        if entries.count >= Self.capacity {
            entries = entries.filter { $0.value.expires > now }
            if entries.count >= Self.capacity { entries.removeAll(keepingCapacity: true) }
        }
        entries[key] = Entry(verifier: verifier, expires: now + Self.lifetime)
    }
}
