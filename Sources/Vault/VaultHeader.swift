/// The clear-text start of a vault file, everything before the ciphertext; all of it is the
/// AES-GCM authenticated data, so no byte of it can change without the vault being refused.
///
/// Layout (integers big-endian), format 1:
///
/// | offset | size | field |
/// |---|---|---|
/// | 0 | 8 | magic `DGVAULT\0` |
/// | 8 | 2 | format version (1) |
/// | 10 | 1 | KDF id: 0 = raw key file, 1 = scrypt |
/// | 11 | 1 | scrypt log2 N (0 for a key file) |
/// | 12 | 4 | scrypt r (0 for a key file) |
/// | 16 | 4 | scrypt p (0 for a key file) |
/// | 20 | 1 | salt length S: 32 for scrypt (16 also read), 0 for a key file |
/// | 21 | S | salt |
/// | 21+S | 12 | AES-256-GCM nonce |
///
/// Then the ciphertext of the entries (JSON, see ``VaultPayload``) and the 16-byte GCM tag.
struct VaultHeader: Equatable, Sendable {
    /// How the key is obtained, with what the derivation needs.
    enum KDF: Equatable, Sendable {
        case rawKey
        case scrypt(ScryptParameters, salt: [UInt8])
    }

    static let magic: [UInt8] = Array("DGVAULT\0".utf8)
    static let currentVersion: UInt16 = 1
    static let nonceCount = 12
    static let tagCount = 16
    static let saltCount = 32
    /// Bytes before the salt.
    static let fixedCount = 21

    var kdf: KDF
    var nonce: [UInt8]

    /// The header's bytes, exactly as written and as authenticated.
    var bytes: [UInt8] {
        var out = Self.magic
        out.append(contentsOf: bigEndian(Self.currentVersion))
        switch kdf {
        case .rawKey:
            out.append(0)
            out.append(0)
            out.append(contentsOf: bigEndian(UInt32(0)))
            out.append(contentsOf: bigEndian(UInt32(0)))
            out.append(0)
        case .scrypt(let parameters, let salt):
            out.append(1)
            out.append(parameters.log2N)
            out.append(contentsOf: bigEndian(parameters.r))
            out.append(contentsOf: bigEndian(parameters.p))
            out.append(UInt8(salt.count))
            out.append(contentsOf: salt)
        }
        out.append(contentsOf: nonce)
        return out
    }

    /// Parses the header at the start of `file`, returning it and its length.
    ///
    /// Every read is preceded by a length check: a truncated file is refused, never sliced past
    /// its end. Anything that is not a plausible format-1 header is `wrongKeyOrDamaged`, except a
    /// wrong magic (`notAVault`) and a higher version (`newerFormat`).
    static func parse(_ file: [UInt8], path: String) throws(VaultError) -> (header: VaultHeader, count: Int) {
        if file.count < magic.count {
            // A prefix of the magic (the empty file included) is a truncated vault; anything else is not one.
            guard file.elementsEqual(magic.prefix(file.count)) else { throw .notAVault(path: path) }
            throw .wrongKeyOrDamaged(path: path)
        }
        guard file.prefix(magic.count).elementsEqual(magic) else { throw .notAVault(path: path) }
        guard file.count >= 10 else { throw .wrongKeyOrDamaged(path: path) }
        let version = readUInt16(file, at: 8)
        guard version <= currentVersion else { throw .newerFormat(path: path, version: Int(version)) }
        guard version == currentVersion, file.count >= fixedCount else { throw .wrongKeyOrDamaged(path: path) }

        let kdfID = file[10], log2N = file[11]
        let r = readUInt32(file, at: 12), p = readUInt32(file, at: 16)
        let saltCount = Int(file[20])
        let kdf: KDF
        switch kdfID {
        case 0:
            guard log2N == 0, r == 0, p == 0, saltCount == 0 else { throw .wrongKeyOrDamaged(path: path) }
            kdf = .rawKey
        case 1:
            let parameters = ScryptParameters(log2N: log2N, r: r, p: p)
            guard parameters.isAcceptable, saltCount == 16 || saltCount == 32 else { throw .wrongKeyOrDamaged(path: path) }
            guard file.count >= fixedCount + saltCount else { throw .wrongKeyOrDamaged(path: path) }
            kdf = .scrypt(parameters, salt: Array(file[fixedCount..<fixedCount + saltCount]))
        default:
            throw .wrongKeyOrDamaged(path: path)
        }
        let nonceStart = fixedCount + saltCount
        let count = nonceStart + nonceCount
        // A header must be followed by at least a tag; anything shorter is truncated.
        guard file.count >= count + tagCount else { throw .wrongKeyOrDamaged(path: path) }
        return (VaultHeader(kdf: kdf, nonce: Array(file[nonceStart..<count])), count)
    }
}

private func bigEndian(_ value: UInt16) -> [UInt8] {
    [UInt8(value >> 8), UInt8(value & 0xFF)]
}

private func bigEndian(_ value: UInt32) -> [UInt8] {
    [UInt8(value >> 24), UInt8((value >> 16) & 0xFF), UInt8((value >> 8) & 0xFF), UInt8(value & 0xFF)]
}

private func readUInt16(_ bytes: [UInt8], at offset: Int) -> UInt16 {
    UInt16(bytes[offset]) << 8 | UInt16(bytes[offset + 1])
}

private func readUInt32(_ bytes: [UInt8], at offset: Int) -> UInt32 {
    (0..<4).reduce(UInt32(0)) { $0 << 8 | UInt32(bytes[offset + $1]) }
}
