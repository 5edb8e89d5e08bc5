import Crypto
import Foundation
import Testing
@testable import Users

/// The remembered credentials' keys: HMAC-SHA256 of `name "\0" password`
/// under the process key, each made from a copy of the once-keyed state.
@Suite struct VerifiedCredentialsTests {
    static func plainKey(_ name: String, _ password: String, _ secret: SymmetricKey) -> Data {
        Data(HMAC<SHA256>.authenticationCode(for: Data(name.utf8) + [0] + Data(password.utf8), using: secret))
    }

    @Test("each key is the HMAC of its own name and password, however many were made before it")
    func keysAreIndependent() {
        let secret = SymmetricKey(size: .bits256)
        let maker = VerifiedCredentials.KeyMaker(secret: secret)
        let pairs = [("admin", "s3cret"), ("admin", "s3cret"), ("ädmin", "pässwörd"), ("a", ""), ("admin", "s3cret2")]
        for (name, password) in pairs {
            #expect(maker.key(name: name, password: password) == Self.plainKey(name, password, secret), "\(name):\(password)")
        }
        // The separator keeps name and password apart: "ab" + "c" is not "a" + "bc".
        #expect(maker.key(name: "ab", password: "c") != maker.key(name: "a", password: "bc"))
        // Another process key, other keys.
        #expect(VerifiedCredentials.KeyMaker(secret: SymmetricKey(size: .bits256)).key(name: "admin", password: "s3cret")
                != maker.key(name: "admin", password: "s3cret"))
    }
}

extension VerifiedCredentialsTests {
    @Test("a success stays trusted while in use and is forgotten once unused for the lifetime; another verifier never matches")
    func lifetimeSlidesWithUse() {
        var cache = VerifiedCredentials()
        let start = ContinuousClock.now
        func use(_ key: String, _ verifier: String?, at offset: Duration) -> Bool {
            cache.use(Data(key.utf8), verifier: verifier, now: start + offset)
        }
        cache.insert(Data("key".utf8), verifier: "v1", now: start)
        // Used every 20 s for five minutes: never expires, never asks bcrypt again.
        for step in 1...15 {
            let trusted = use("key", "v1", at: .seconds(20 * step))
            #expect(trusted, "use at \(20 * step) s")
        }
        let changed = use("key", "v2", at: .seconds(301)), removed = use("key", nil, at: .seconds(301))
        #expect(!changed && !removed, "a changed verifier, a removed user")
        // Last renewed at 300 s (refused uses renew nothing): still trusted
        // a second before the lifetime has passed, which renews it; gone
        // once unused for a second longer than the lifetime after that.
        let lastUse: Duration = .seconds(300) + VerifiedCredentials.lifetime - .seconds(1)
        let late = use("key", "v1", at: lastUse)
        let expired = use("key", "v1", at: lastUse + VerifiedCredentials.lifetime + .seconds(1))
        #expect(late && !expired)
        // Never used: the lifetime from its bcrypt.
        cache.insert(Data("other".utf8), verifier: "v1", now: start)
        let unused = use("other", "v1", at: VerifiedCredentials.lifetime)
        #expect(!unused)
    }
}
