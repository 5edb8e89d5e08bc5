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
