import Testing
@testable import Vault

/// The passphrase KDF's cost is a security floor: scrypt with the default parameters must take at
/// least 100 ms, so an offline guesser pays at least that per guess per core.
@Suite("scrypt cost")
struct ScryptCostTests {
    @Test("the default scrypt parameters take at least 100 ms (one derivation)")
    func defaultCost() throws {
        let clock = ContinuousClock()
        let elapsed = try clock.measure {
            _ = try VaultKey.scrypt("a passphrase to time", parameters: .default, salt: VaultKey.randomBytes(32))
        }
        #expect(elapsed >= .milliseconds(100), "scrypt N=2^\(ScryptParameters.default.log2N), r=\(ScryptParameters.default.r), p=\(ScryptParameters.default.p) took \(elapsed)")
    }

    /// A debug build compiles BoringSSL without optimisation (about 3x slower: 1.2 s against
    /// 0.37 s here), so the clock alone would not notice N dropping to 2^14; pin the parameters too.
    @Test("the default parameters are at least N=2^16, r=8, p=1 and inside what open accepts; absurd ones are not")
    func bounds() {
        #expect(ScryptParameters.default.log2N >= 16)
        #expect(ScryptParameters.default.r >= 8)
        #expect(ScryptParameters.default.p >= 1)
        #expect(ScryptParameters.default.isAcceptable)
        #expect(!ScryptParameters(log2N: 40, r: 8, p: 1).isAcceptable)
        #expect(!ScryptParameters(log2N: 20, r: 32, p: 1).isAcceptable, "4 GiB of memory")
        #expect(!ScryptParameters(log2N: 16, r: 0, p: 1).isAcceptable)
        #expect(!ScryptParameters(log2N: 16, r: 8, p: 0).isAcceptable)
    }
}
