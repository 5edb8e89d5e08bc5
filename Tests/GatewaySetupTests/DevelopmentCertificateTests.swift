import Crypto
import Foundation
import GatewaySetup
import SwiftASN1
import Testing
import X509

@Suite("DevelopmentCertificate")
struct DevelopmentCertificateTests {
    @Test("makes a pair that parses back, with the SANs, and whose key matches")
    func makesPair() throws {
        let folder = try TemporaryFolder()
        let certificateFile = folder.path("certs/davgate.pem")
        let keyFile = folder.path("certs/davgate-key.pem")

        let first = try DevelopmentCertificate.ensure(certificate: certificateFile, privateKey: keyFile)
        #expect(first.created)
        #expect(try folder.posixMode("certs/davgate.pem") == 0o644)
        #expect(try folder.posixMode("certs/davgate-key.pem") == 0o600)

        let certificatePEM = try String(contentsOf: certificateFile, encoding: .utf8)
        let keyPEM = try String(contentsOf: keyFile, encoding: .utf8)
        #expect(keyPEM.hasPrefix("-----BEGIN PRIVATE KEY-----"), "PKCS#8")
        let certificate = try Certificate(pemEncoded: certificatePEM)

        #expect(certificate.version == .v3)
        #expect(certificate.issuer == certificate.subject, "self-signed")
        let subject = certificate.subject.description
        #expect(subject.contains("CN=localhost"))
        #expect(subject.contains("O=davgate development"))
        let sans = try #require(try certificate.extensions.subjectAlternativeNames)
        #expect(Array(sans) == [
            .dnsName("localhost"),
            .ipAddress(ASN1OctetString(contentBytes: [127, 0, 0, 1])),
            .ipAddress(ASN1OctetString(contentBytes: ArraySlice(Array(repeating: 0, count: 15) + [1]))),
        ])
        #expect(try certificate.extensions.basicConstraints == .notCertificateAuthority)
        // No KeyUsage: BoringSSL (swift-nio-ssl, so AsyncHTTPClient) does not
        // treat a certificate as self-issued when its KeyUsage lacks
        // keyCertSign, and then cannot use it as its own trust anchor.
        #expect(try certificate.extensions.keyUsage == nil)
        #expect(try certificate.extensions.extendedKeyUsage == ExtendedKeyUsage([.serverAuth]))
        #expect(try certificate.extensions.subjectKeyIdentifier == SubjectKeyIdentifier(hash: certificate.publicKey))
        let now = Date()
        #expect(certificate.notValidBefore < now)
        #expect(certificate.notValidBefore > now.addingTimeInterval(-2 * 3600))
        let days = certificate.notValidAfter.timeIntervalSince(certificate.notValidBefore) / 86_400
        #expect(abs(days - 825) < 0.01)
        #expect(certificate.publicKey.isValidSignature(certificate.signature, for: certificate), "self-signed by its own key")

        // The private key is the certificate's: what it signs, the certificate's public key verifies.
        let key = try P256.Signing.PrivateKey(pemRepresentation: keyPEM)
        let message = Data("davgate".utf8)
        let signature = try key.signature(for: message)
        let publicKey = try #require(P256.Signing.PublicKey(certificate.publicKey))
        #expect(publicKey.isValidSignature(signature, for: message))

        // The fingerprint is SHA-256 of the DER, as AB:CD:...
        let der = try PEMDocument(pemString: certificatePEM).derBytes
        let expected = SHA256.hash(data: der).map { String(format: "%02X", $0) }.joined(separator: ":")
        #expect(first.sha256Fingerprint == expected)
        #expect(first.sha256Fingerprint.count == 32 * 3 - 1)

        // Again: nothing made, same fingerprint, files untouched.
        let second = try DevelopmentCertificate.ensure(certificate: certificateFile, privateKey: keyFile)
        #expect(!second.created)
        #expect(second.sha256Fingerprint == first.sha256Fingerprint)
        #expect(try String(contentsOf: keyFile, encoding: .utf8) == keyPEM)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: folder.path("certs").path)
        #expect(leftovers.sorted() == ["davgate-key.pem", "davgate.pem"], "no temporary files left")
    }

    @Test("each pair is new: a fresh key and serial")
    func pairsDiffer() throws {
        let folder = try TemporaryFolder()
        let a = try DevelopmentCertificate.ensure(certificate: folder.path("a/cert.pem"), privateKey: folder.path("a/key.pem"))
        let b = try DevelopmentCertificate.ensure(certificate: folder.path("b/cert.pem"), privateKey: folder.path("b/key.pem"))
        #expect(a.sha256Fingerprint != b.sha256Fingerprint)
    }

    @Test("a certificate without its key, or a key without its certificate, is refused naming both")
    func halfPairs() throws {
        let folder = try TemporaryFolder()
        let certificateFile = folder.path("certs/davgate.pem")
        let keyFile = folder.path("certs/davgate-key.pem")
        _ = try DevelopmentCertificate.ensure(certificate: certificateFile, privateKey: keyFile)
        let keyPEM = try Data(contentsOf: keyFile)

        try FileManager.default.removeItem(at: keyFile)
        #expect(throws: CertificateSetupError.missingPrivateKey(certificate: certificateFile.path, privateKey: keyFile.path)) {
            try DevelopmentCertificate.ensure(certificate: certificateFile, privateKey: keyFile)
        }
        #expect(!FileManager.default.fileExists(atPath: keyFile.path), "nothing made")

        try keyPEM.write(to: keyFile)
        try FileManager.default.removeItem(at: certificateFile)
        do {
            _ = try DevelopmentCertificate.ensure(certificate: certificateFile, privateKey: keyFile)
            Issue.record("a key without a certificate was accepted")
        } catch {
            let message = String(describing: error)
            #expect(message.contains(certificateFile.path) && message.contains(keyFile.path), "\(message)")
        }
    }

    @Test("a key that is not the certificate's is refused")
    func mismatchedKey() throws {
        let folder = try TemporaryFolder()
        let certificateFile = folder.path("certs/davgate.pem")
        let keyFile = folder.path("certs/davgate-key.pem")
        _ = try DevelopmentCertificate.ensure(certificate: certificateFile, privateKey: keyFile)
        try Data(P256.Signing.PrivateKey().pemRepresentation.utf8).write(to: keyFile)
        #expect(throws: CertificateSetupError.keyMismatch(certificate: certificateFile.path, privateKey: keyFile.path)) {
            try DevelopmentCertificate.ensure(certificate: certificateFile, privateKey: keyFile)
        }
        try Data("not a certificate".utf8).write(to: certificateFile)
        #expect(throws: CertificateSetupError.self) {
            try DevelopmentCertificate.ensure(certificate: certificateFile, privateKey: keyFile)
        }
    }
}
