#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Reading a file that holds key material, which only its owner may read.
///
/// The permissions checked are those of the descriptor actually read (not of a path looked up
/// before), so a file swapped in between cannot slip past the check.
public enum PrivateFile {
    /// Reads the whole private file at `path`, refusing it when group or others may read it.
    /// - Parameter maximumSize: the largest file read, so that a wrong path (a disk image, a log)
    ///   is refused instead of read into memory.
    /// - Returns: the bytes (the caller's to zeroize) and the stamp of the file read.
    public static func read(_ path: String, maximumSize: Int) throws(PrivateFileError) -> (bytes: [UInt8], stamp: FileStamp) {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY)
        guard descriptor >= 0 else {
            if errno == ENOENT { throw .missing(path: path) }
            throw .systemCall(SystemCallError("open", path))
        }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw .systemCall(SystemCallError("fstat", path)) }
        guard info.st_mode & S_IFMT == S_IFREG else { throw .notRegularFile(path: path) }
        guard info.st_mode & 0o077 == 0 else { throw .readableByOthers(path: path, mode: Int(info.st_mode & 0o7777)) }
        guard Int(info.st_size) <= maximumSize else { throw .tooLarge(path: path, maximumSize: maximumSize) }
        var bytes: [UInt8] = []
        // Sized up front: unless the file grows while read, the array is never moved, which would
        // leave an unzeroed copy of the secret in freed memory.
        bytes.reserveCapacity(Int(info.st_size))
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        defer { zeroize(&chunk) }
        while true {
            let count = chunk.withUnsafeMutableBytes { readSome(descriptor, into: $0) }
            if count < 0 {
                if errno == EINTR { continue }
                let failure = SystemCallError("read", path)
                zeroize(&bytes)
                throw .systemCall(failure)
            }
            if count == 0 { break }
            bytes.append(contentsOf: chunk[0..<count])
            guard bytes.count <= maximumSize else {
                zeroize(&bytes)
                throw .tooLarge(path: path, maximumSize: maximumSize)
            }
        }
        return (bytes, FileStamp(info))
    }
}

/// `read(2)` into `buffer`; outside ``PrivateFile``, whose own `read` would shadow it.
private func readSome(_ descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer) -> Int {
    read(descriptor, buffer.baseAddress, buffer.count)
}

/// Why ``PrivateFile/read(_:maximumSize:)`` refused; the caller words it in its own error type.
public enum PrivateFileError: Error, Equatable, Sendable, CustomStringConvertible {
    /// There is no file at the path.
    case missing(path: String)
    /// The path names a folder, a device or another non-regular file.
    case notRegularFile(path: String)
    /// Group or others may read the file (`mode & 0o077 != 0`).
    case readableByOthers(path: String, mode: Int)
    /// The file is larger than the caller's limit.
    case tooLarge(path: String, maximumSize: Int)
    /// A system call failed.
    case systemCall(SystemCallError)

    public var description: String {
        switch self {
        case .missing(let path): "\(path): no such file"
        case .notRegularFile(let path): "\(path): not a regular file"
        case .readableByOthers(let path, let mode):
            "\(path): group or others can read it (mode \(String(mode, radix: 8))); fix with: chmod 600 \(path)"
        case .tooLarge(let path, let maximumSize): "\(path): larger than \(maximumSize) bytes"
        case .systemCall(let failure): failure.description
        }
    }
}

/// Overwrites `buffer` with zeros in a way the optimizer may not drop as a dead store
/// (`explicit_bzero` on Linux, `memset_s` on Darwin), even right before the memory is freed.
public func zeroize(_ buffer: UnsafeMutableRawBufferPointer) {
    guard let base = buffer.baseAddress, buffer.count > 0 else { return }
    #if canImport(Darwin)
    _ = memset_s(base, buffer.count, 0, buffer.count)
    #else
    explicit_bzero(base, buffer.count)
    #endif
}

/// Zeroes an array of secret bytes in place (a passphrase, a raw key) before it is dropped.
public func zeroize(_ bytes: inout [UInt8]) {
    bytes.withUnsafeMutableBytes { zeroize($0) }
}
