import Crypto
import DurableFiles
import Foundation
import SwiftASN1
import X509

/// The self-signed certificate davgate makes on first start, so that TLS works out of the box.
///
/// Made in process with swift-crypto and swift-certificates (no openssl): a P-256 key and an X.509 v3
/// certificate for `localhost`, `127.0.0.1` and `::1`, valid for 825 days (the longest a TLS client
/// such as Safari accepts for a server certificate).
public enum DevelopmentCertificate {
    /// How long a development certificate is valid, counted from an hour before it is made.
    static let validity: TimeInterval = 825 * 24 * 60 * 60

    /// Makes a certificate and key when neither file exists; otherwise checks the pair that is there.
    ///
    /// - Parameters:
    ///   - certificate: the PEM certificate (chain) file; written with mode 0644.
    ///   - privateKey: the PEM private key file; written as PKCS#8 (`PRIVATE KEY`) with mode 0600.
    /// - Returns: whether a pair was made, and the SHA-256 fingerprint of the (first) certificate's DER,
    ///   as upper-case hex pairs joined by ":" (what browsers and `openssl x509 -fingerprint -sha256` show).
    /// - Throws: ``CertificateSetupError`` when only one of the two files exists, when they cannot be
    ///   read or do not belong together, or when the new pair cannot be written.
    public static func ensure(certificate: URL, privateKey: URL) throws -> (created: Bool, sha256Fingerprint: String) {
        let manager = FileManager.default
        switch (manager.fileExists(atPath: certificate.path), manager.fileExists(atPath: privateKey.path)) {
        case (true, true):
            return (false, try checkPair(certificate: certificate, privateKey: privateKey))
        case (true, false):
            throw CertificateSetupError.missingPrivateKey(certificate: certificate.path, privateKey: privateKey.path)
        case (false, true):
            throw CertificateSetupError.missingCertificate(certificate: certificate.path, privateKey: privateKey.path)
        case (false, false):
            return (true, try make(certificate: certificate, privateKey: privateKey))
        }
    }

    /// SHA-256 of `der` as `AB:CD:...`.
    static func fingerprint(of der: [UInt8]) -> String {
        SHA256.hash(data: der).map { byte in
            let hex = String(byte, radix: 16, uppercase: true)
            return byte < 0x10 ? "0" + hex : hex
        }.joined(separator: ":")
    }

    private static func checkPair(certificate: URL, privateKey: URL) throws(CertificateSetupError) -> String {
        let certificatePEM = try readText(certificate)
        let documents: [PEMDocument]
        do {
            documents = try PEMDocument.parseMultiple(pemString: certificatePEM)
        } catch {
            throw .unreadable(path: certificate.path, reason: "not a PEM file (\(error))")
        }
        guard let first = documents.first(where: { $0.discriminator == "CERTIFICATE" }) else {
            throw .unreadable(path: certificate.path, reason: "no CERTIFICATE in the PEM file")
        }
        let parsed: Certificate
        do {
            parsed = try Certificate(pemDocument: first)
        } catch {
            throw .unreadable(path: certificate.path, reason: "not an X.509 certificate (\(error))")
        }
        let key: Certificate.PrivateKey
        do {
            key = try Certificate.PrivateKey(pemEncoded: try readText(privateKey))
        } catch let error as CertificateSetupError {
            throw error
        } catch {
            throw .unreadable(path: privateKey.path, reason: "not a PEM private key this server can use (\(error))")
        }
        guard key.publicKey == parsed.publicKey else {
            throw .keyMismatch(certificate: certificate.path, privateKey: privateKey.path)
        }
        return fingerprint(of: first.derBytes)
    }

    private static func make(certificate: URL, privateKey: URL) throws -> String {
        let key = P256.Signing.PrivateKey()
        let issuerKey = Certificate.PrivateKey(key)
        let publicKey = issuerKey.publicKey
        let name = try DistinguishedName {
            OrganizationName("davgate development")
            CommonName("localhost")
        }
        let notBefore = Date().addingTimeInterval(-3600)  // tolerate a client clock a little behind
        let loopbackV4: [UInt8] = [127, 0, 0, 1]
        let loopbackV6: [UInt8] = Array(repeating: 0, count: 15) + [1]
        // No KeyUsage extension on purpose: BoringSSL (inside swift-nio-ssl,
        // hence AsyncHTTPClient and another davgate) does not accept a
        // certificate as its own issuer when KeyUsage lacks keyCertSign, so
        // clients could not pin this certificate as a trust root.
        let extensions = try Certificate.Extensions {
            Critical(BasicConstraints.notCertificateAuthority)
            try ExtendedKeyUsage([.serverAuth])
            SubjectKeyIdentifier(hash: publicKey)
            SubjectAlternativeNames([
                .dnsName("localhost"),
                .ipAddress(ASN1OctetString(contentBytes: loopbackV4[...])),
                .ipAddress(ASN1OctetString(contentBytes: loopbackV6[...])),
            ])
        }
        let made = try Certificate(
            version: .v3,
            serialNumber: Certificate.SerialNumber(),
            publicKey: publicKey,
            notValidBefore: notBefore,
            notValidAfter: notBefore.addingTimeInterval(validity),
            issuer: name,
            subject: name,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: extensions,
            issuerPrivateKey: issuerKey
        )
        let document = try made.serializeAsPEM()

        // The key first: a crash in between leaves a key without a certificate, which the next start reports.
        try createFolder(privateKey.deletingLastPathComponent())
        try createFolder(certificate.deletingLastPathComponent())
        try write(Data(key.pemRepresentation.utf8) + Data("\n".utf8), to: privateKey, mode: 0o600)
        try write(Data(document.pemString.utf8) + Data("\n".utf8), to: certificate, mode: 0o644)
        return fingerprint(of: document.derBytes)
    }

    private static func readText(_ file: URL) throws(CertificateSetupError) -> String {
        do {
            return try String(contentsOf: file, encoding: .utf8)
        } catch {
            throw .unreadable(path: file.path, reason: "cannot read (\(error.localizedDescription))")
        }
    }

    private static func createFolder(_ folder: URL) throws(CertificateSetupError) {
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        } catch {
            throw .cannotWrite(path: folder.path, reason: error.localizedDescription)
        }
    }

    /// Durable and atomic, created with its final mode, so a private key is never readable by
    /// others, not even briefly.
    private static func write(_ data: Data, to file: URL, mode: Int) throws(CertificateSetupError) {
        do {
            try AtomicFile.replace(file.path, with: data, mode: mode_t(mode))
        } catch {
            // The message names the file already; the reason names the call, and "folder" when
            // it was the fsync of the folder that failed.
            let call = error.path == file.deletingLastPathComponent().path ? error.call + " folder" : error.call
            throw .cannotWrite(path: file.path, reason: "\(call) failed: \(error.reason)")
        }
    }
}
