/// Why ``DevelopmentCertificate/ensure(certificate:privateKey:)`` refused.
public enum CertificateSetupError: Error, CustomStringConvertible, Equatable {
    /// The certificate exists without its private key.
    case missingPrivateKey(certificate: String, privateKey: String)
    /// The private key exists without its certificate.
    case missingCertificate(certificate: String, privateKey: String)
    /// A file exists but is not what it should be (not PEM, not a certificate, not a key...).
    case unreadable(path: String, reason: String)
    /// The private key is not the key of the certificate.
    case keyMismatch(certificate: String, privateKey: String)
    /// Making or writing the pair failed.
    case cannotWrite(path: String, reason: String)

    public var description: String {
        switch self {
        case .missingPrivateKey(let certificate, let privateKey):
            "the certificate \(certificate) exists but its private key \(privateKey) does not; restore the key, or remove both to have a development pair made"
        case .missingCertificate(let certificate, let privateKey):
            "the private key \(privateKey) exists but its certificate \(certificate) does not; restore the certificate, or remove both to have a development pair made"
        case .unreadable(let path, let reason):
            "\(path): \(reason)"
        case .keyMismatch(let certificate, let privateKey):
            "the private key \(privateKey) does not belong to the certificate \(certificate)"
        case .cannotWrite(let path, let reason):
            "\(path): cannot write: \(reason)"
        }
    }
}
