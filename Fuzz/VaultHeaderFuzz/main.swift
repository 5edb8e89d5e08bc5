// libFuzzer target for the clear-text header of a vault file:
// Sources/Vault/VaultHeader.swift, compiled by scripts/fuzz into one module
// with this file and the two it needs (ScryptParameters.swift,
// VaultError.swift), so neither swift-crypto nor Foundation is involved.

/// Checks, for any input used as the start of a vault file:
/// - an accepted header is exactly the bytes it was read from (so all of it
///   is authenticated), is followed by at least a GCM tag, has a 12-byte
///   nonce, and for scrypt acceptable parameters and a 16- or 32-byte salt;
/// - written out again it reads back the same, and bytes after it change nothing;
/// - one byte short of header plus tag is refused as damaged;
/// - a refusal is the right one: `notAVault` exactly when the file does not
///   start with the magic or a prefix of it, `newerFormat` with the version
///   the file states, and every refusal names the file.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzVaultHeader(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let file = Array(UnsafeBufferPointer(start: data, count: size))
    let path = "/fuzz/vault"
    let magicLike = VaultHeader.magic.starts(with: file.prefix(VaultHeader.magic.count))
    switch parse(file, path) {
    case .success(let (header, count)):
        check(header.bytes == Array(file[..<count]), "header \(header) is not the \(count) bytes it came from")
        check(file.count >= count + VaultHeader.tagCount, "header of \(count) bytes in a file of \(file.count)")
        check(header.nonce.count == VaultHeader.nonceCount, "nonce of \(header.nonce.count) bytes")
        switch header.kdf {
        case .rawKey:
            check(count == VaultHeader.fixedCount + VaultHeader.nonceCount, "raw-key header of \(count) bytes")
        case .scrypt(let parameters, let salt):
            check(parameters.isAcceptable, "scrypt \(parameters) accepted")
            check(salt.count == 16 || salt.count == 32, "salt of \(salt.count) bytes")
        }
        let tag = [UInt8](repeating: 0xA5, count: VaultHeader.tagCount)
        guard case .success(let again) = parse(header.bytes + tag, path), again.header == header, again.count == count else {
            fail("written header \(header) reads back differently")
        }
        check(parse(file + [0x00, 0xFF], path).map { $0.header } == .success(header), "trailing bytes changed the header")
        let short = Array(file[..<(count + VaultHeader.tagCount - 1)])
        check(parse(short, path).map { $0.header } == .failure(.wrongKeyOrDamaged(path: path)), "a truncated file was accepted")
    case .failure(.notAVault(let named)):
        check(named == path && !magicLike, "\(file.prefix(8)) refused as not a vault")
    case .failure(.newerFormat(let named, let version)):
        check(named == path && file.starts(with: VaultHeader.magic) && file.count >= 10, "newer format without a version")
        check(version == Int(file[8]) << 8 | Int(file[9]) && version > Int(VaultHeader.currentVersion), "newer format \(version)")
    case .failure(.wrongKeyOrDamaged(let named)):
        check(named == path && magicLike, "\(file.prefix(8)) refused as damaged, not as not a vault")
    case .failure(let other):
        fail("parsing a header failed with \(other)")
    }
    return 0
}

private func parse(_ file: [UInt8], _ path: String) -> Result<(header: VaultHeader, count: Int), VaultError> {
    Result { () throws(VaultError) in try VaultHeader.parse(file, path: path) }
}
