/// The cost of turning a passphrase into the vault key: scrypt's N (as log2), r and p (RFC 7914).
///
/// The parameters are recorded in every vault's header, so a vault written with today's cost opens
/// on any later davgate even after the default grows.
struct ScryptParameters: Equatable, Sendable {
    /// log2 of scrypt's CPU/memory cost N.
    var log2N: UInt8
    /// The block size r.
    var r: UInt32
    /// The parallelism p.
    var p: UInt32

    /// N = 2^16, r = 8, p = 1: 64 MiB of memory, about 0.37 s per derivation on the reference
    /// machine (2-core AMD EPYC, release build), well above the 100 ms floor; N = 2^15 measured
    /// 0.17 s, too close to the floor for a faster CPU. `VaultTests` checks the floor.
    static let `default` = ScryptParameters(log2N: 16, r: 8, p: 1)

    /// Bounds accepted when opening: enough for any vault davgate writes, small enough that a
    /// tampered header cannot make davgate allocate gigabytes or spin for minutes before the
    /// authentication tag refuses it.
    var isAcceptable: Bool {
        guard (10...20).contains(log2N), (1...32).contains(r), (1...16).contains(p) else { return false }
        let memory = 128 * (UInt64(1) << log2N) * UInt64(r)
        let work = (UInt64(1) << log2N) * UInt64(r) * UInt64(p)
        return memory <= 512 << 20 && work <= 1 << 24
    }
}
