import Crypto
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOSSL

/// The TLS certificate chain and key the server presents, replaceable while
/// it runs: a renewed certificate (Let's Encrypt renews every 60-90 days)
/// is taken by the next handshake, and the connections already open keep
/// the one they were made with. Nothing is cut.
///
/// The listener's TLS context is made once, at start. Each handshake asks
/// `handshakeOverride` (NIOSSL's per-hello callback, the hook servers use
/// for SNI) which pair to use; until the first reload the answer is "no
/// change", so a server never reloaded pays nothing for it.
public final class ServerCertificate: Sendable {
    private struct Pair {
        var chain: [NIOSSLCertificate]
        var key: NIOSSLPrivateKey
        var fingerprint: String
        /// 0 for the pair the context was made with.
        var generation: Int
    }
    private let current: NIOLockedValueBox<Pair>

    /// Reads and checks the pair (see `load`).
    public init(certificate: String, privateKey: String) throws(ServerCertificateError) {
        current = NIOLockedValueBox(try Self.load(certificate: certificate, privateKey: privateKey, generation: 0))
    }

    /// The SHA-256 fingerprint of the leaf certificate now presented, as
    /// `openssl x509 -fingerprint -sha256` prints it.
    public var fingerprint: String { current.withLockedValue { $0.fingerprint } }

    /// Reads the pair again (the same paths, or new ones from a reloaded
    /// configuration) and presents it from the next handshake on. A pair
    /// that cannot be read, does not parse or does not match is refused
    /// and the running one stays.
    /// - Returns: the new leaf's fingerprint.
    @discardableResult
    public func reload(certificate: String, privateKey: String) throws(ServerCertificateError) -> String {
        let generation = current.withLockedValue { $0.generation } + 1
        let pair = try Self.load(certificate: certificate, privateKey: privateKey, generation: generation)
        current.withLockedValue { $0 = pair }
        return pair.fingerprint
    }

    /// The server's TLS configuration: TLS 1.2 and later, the pair read at
    /// start, and the per-handshake hook that presents a reloaded pair.
    func serverConfiguration() -> TLSConfiguration {
        let pair = current.withLockedValue { $0 }
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: pair.chain.map { .certificate($0) }, privateKey: .privateKey(pair.key))
        configuration.minimumTLSVersion = .tlsv12
        configuration.sslContextCallback = { [self] _, promise in
            promise.succeed(handshakeOverride())
        }
        return configuration
    }

    private func handshakeOverride() -> NIOSSLContextConfigurationOverride {
        let pair = current.withLockedValue { $0 }
        guard pair.generation > 0 else { return .noChanges }
        var override = NIOSSLContextConfigurationOverride()
        override.certificateChain = pair.chain.map { .certificate($0) }
        override.privateKey = .privateKey(pair.key)
        return override
    }

    /// Reads a PEM chain and its key and proves they belong together by
    /// making a TLS context of them (BoringSSL refuses a key that does not
    /// match the leaf), so a bad pair is refused here and never reaches a
    /// handshake.
    private static func load(certificate: String, privateKey: String, generation: Int) throws(ServerCertificateError) -> Pair {
        let chain: [NIOSSLCertificate]
        do {
            chain = try NIOSSLCertificate.fromPEMFile(certificate)
        } catch {
            throw .unreadable(file: certificate, reason: "\(error)")
        }
        guard let leaf = chain.first else { throw .unreadable(file: certificate, reason: "no certificate in the file") }
        let key: NIOSSLPrivateKey
        do {
            key = try NIOSSLPrivateKey(file: privateKey, format: .pem)
        } catch {
            throw .unreadable(file: privateKey, reason: "\(error)")
        }
        var check = TLSConfiguration.makeServerConfiguration(certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key))
        check.minimumTLSVersion = .tlsv12
        do {
            _ = try NIOSSLContext(configuration: check)
        } catch {
            throw .mismatch(certificate: certificate, privateKey: privateKey, reason: "\(error)")
        }
        let der: [UInt8]
        do {
            der = try leaf.toDERBytes()
        } catch {
            throw .unreadable(file: certificate, reason: "\(error)")
        }
        let fingerprint = SHA256.hash(data: der).map { String(format: "%02X", $0) }.joined(separator: ":")
        return Pair(chain: chain, key: key, fingerprint: fingerprint, generation: generation)
    }
}

/// Why a certificate pair was refused.
public enum ServerCertificateError: Error, CustomStringConvertible {
    case unreadable(file: String, reason: String)
    case mismatch(certificate: String, privateKey: String, reason: String)

    public var description: String {
        switch self {
        case .unreadable(let file, let reason):
            "cannot read \(file) as PEM (\(reason)); check the path and that the file holds a PEM certificate or key"
        case .mismatch(let certificate, let privateKey, let reason):
            "the private key \(privateKey) does not belong to the certificate \(certificate) (\(reason)); install the key issued with that certificate"
        }
    }
}
