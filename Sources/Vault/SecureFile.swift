import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Reading and writing the files that hold key material: the vault and the key file.
///
/// Reads check the permissions of the descriptor actually read (not of a path looked up before),
/// so a file swapped in between cannot slip past the check. Writes replace the whole file
/// atomically with mode 0600.
enum SecureFile {
    /// Identifies one version of a file: a rename over it changes the inode, a rewrite the size or mtime.
    struct Stamp: Equatable, Sendable {
        var device: UInt64
        var inode: UInt64
        var size: Int64
        var seconds: Int64
        var nanoseconds: Int64

        init(_ info: stat) {
            #if canImport(Darwin)
            let modified = info.st_mtimespec
            #else
            let modified = info.st_mtim
            #endif
            device = UInt64(info.st_dev)
            inode = UInt64(info.st_ino)
            size = Int64(info.st_size)
            seconds = Int64(modified.tv_sec)
            nanoseconds = Int64(modified.tv_nsec)
        }
    }

    /// The largest file read: far above any real vault, small enough that a wrong path (a disk
    /// image, a log) is refused instead of read into memory.
    static let maximumSize = 64 << 20

    /// Reads the whole private file at `path`, refusing it when group or others may read it.
    /// - Returns: the bytes and the stamp of the file read.
    static func readPrivate(_ path: String, missing: VaultError) throws(VaultError) -> (bytes: [UInt8], stamp: Stamp) {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY)
        guard descriptor >= 0 else {
            if errno == ENOENT { throw missing }
            throw failure("open", path)
        }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw failure("fstat", path) }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw .io(path: path, call: "open", reason: "not a regular file")
        }
        guard info.st_mode & 0o077 == 0 else { throw .readableByOthers(path: path, mode: Int(info.st_mode & 0o7777)) }
        guard Int(info.st_size) <= maximumSize else {
            throw .io(path: path, call: "read", reason: "larger than \(maximumSize >> 20) MiB, not a vault or key file")
        }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        defer { zeroize(&chunk) }
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw failure("read", path)
            }
            if count == 0 { break }
            bytes.append(contentsOf: chunk[0..<count])
            guard bytes.count <= maximumSize else {
                zeroize(&bytes)
                throw .io(path: path, call: "read", reason: "larger than \(maximumSize >> 20) MiB, not a vault or key file")
            }
        }
        return (bytes, Stamp(info))
    }

    /// The stamp of the file at `path`, or nil when there is none.
    static func stamp(_ path: String) throws(VaultError) -> Stamp? {
        var info = stat()
        guard stat(path, &info) == 0 else {
            if errno == ENOENT { return nil }
            throw failure("stat", path)
        }
        return Stamp(info)
    }

    /// Replaces (or creates) `path` with `bytes`, mode 0600: temp file in the same folder, fsync,
    /// rename, fsync of the folder. Readers see the old vault or the new one, never a mix; a crash
    /// leaves one or the other whole. With `exclusive`, refuses when `path` exists.
    /// - Returns: the stamp of the new file.
    @discardableResult
    static func replace(_ path: String, with bytes: [UInt8], exclusive: Bool = false) throws(VaultError) -> Stamp {
        let url = URL(fileURLWithPath: path)
        let folder = url.deletingLastPathComponent().path
        let temporary = folder + "/." + url.lastPathComponent + ".tmp-" + String(UInt64.random(in: .min ... .max), radix: 16)
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw failure("open", temporary) }
        var info = stat()
        do throws(VaultError) {
            // The umask may only remove bits; fchmod makes the mode exactly 0600 either way.
            guard fchmod(descriptor, 0o600) == 0 else { throw failure("fchmod", temporary) }
            try writeAll(bytes, to: descriptor, path: temporary)
            guard fsync(descriptor) == 0 else { throw failure("fsync", temporary) }
            guard fstat(descriptor, &info) == 0 else { throw failure("fstat", temporary) }
        } catch {
            close(descriptor)
            unlink(temporary)
            throw error
        }
        guard close(descriptor) == 0 else {
            let error = failure("close", temporary)
            unlink(temporary)
            throw error
        }
        if exclusive {
            // link() fails when the name exists, so two `vault init` at once cannot both win.
            guard link(temporary, path) == 0 else {
                let error: VaultError = errno == EEXIST ? .alreadyExists(path: path) : failure("link", path)
                unlink(temporary)
                throw error
            }
            unlink(temporary)
        } else {
            guard rename(temporary, path) == 0 else {
                let error = failure("rename", path)
                unlink(temporary)
                throw error
            }
        }
        let folderDescriptor = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard folderDescriptor >= 0 else { throw failure("open", folder) }
        defer { close(folderDescriptor) }
        guard fsync(folderDescriptor) == 0 else { throw failure("fsync", folder) }
        return Stamp(info)
    }

    private static func writeAll(_ bytes: [UInt8], to descriptor: Int32, path: String) throws(VaultError) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0 {
                if errno == EINTR { continue }
                throw failure("write", path)
            }
            offset += written
        }
    }

    private static func failure(_ call: String, _ path: String) -> VaultError {
        .io(path: path, call: call, reason: String(cString: strerror(errno)))
    }
}
