import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// What `stat` says about a file, enough to notice that another process replaced it.
///
/// A rename over the file changes the inode even when size and mtime happen to match.
struct FileStamp: Equatable, Sendable {
    var device: UInt64
    var inode: UInt64
    var size: Int64
    var modifiedSeconds: Int64
    var modifiedNanoseconds: Int64

    /// The stamp of the file at `path`, or nil when there is no such file.
    static func of(_ path: String) throws(SystemCallError) -> FileStamp? {
        var info = stat()
        guard stat(path, &info) == 0 else {
            if errno == ENOENT { return nil }
            throw SystemCallError("stat", path)
        }
        return FileStamp(info)
    }

    /// The stamp of an open file.
    static func of(descriptor: Int32, path: String) throws(SystemCallError) -> FileStamp {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw SystemCallError("fstat", path) }
        return FileStamp(info)
    }

    private init(_ info: stat) {
        #if canImport(Darwin)
        let modified = info.st_mtimespec
        #else
        let modified = info.st_mtim
        #endif
        self.device = UInt64(info.st_dev)
        self.inode = UInt64(info.st_ino)
        self.size = Int64(info.st_size)
        self.modifiedSeconds = Int64(modified.tv_sec)
        self.modifiedNanoseconds = Int64(modified.tv_nsec)
    }
}

/// A failed system call, naming the call, the file and the system's reason.
struct SystemCallError: Error, CustomStringConvertible {
    var call: String
    var path: String
    var code: Int32

    init(_ call: String, _ path: String, code: Int32 = errno) {
        self.call = call
        self.path = path
        self.code = code
    }

    var description: String { "\(path): \(call) failed: \(String(cString: strerror(code)))" }
}

/// Durable whole-file replacement: temp file in the same folder, fsync, rename, fsync of the folder.
///
/// Readers see the old file or the new one, never a mix; after a crash the new content is either
/// fully there or not at all.
enum AtomicFile {
    /// Replaces `file` with `data`, created with exactly `mode` (not reduced by the umask).
    static func write(_ data: Data, to file: URL, mode: mode_t) throws(SystemCallError) {
        let folder = file.deletingLastPathComponent().path
        let suffix = String(UInt64.random(in: .min ... .max), radix: 16)
        let temporary = folder + "/." + file.lastPathComponent + ".tmp-" + suffix
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard descriptor >= 0 else { throw SystemCallError("open", temporary) }
        do throws(SystemCallError) {
            guard fchmod(descriptor, mode) == 0 else { throw SystemCallError("fchmod", temporary) }
            try writeAll(data, to: descriptor, path: temporary)
            guard fsync(descriptor) == 0 else { throw SystemCallError("fsync", temporary) }
        } catch {
            close(descriptor)
            unlink(temporary)
            throw error
        }
        guard close(descriptor) == 0 else {
            let failure = SystemCallError("close", temporary)
            unlink(temporary)
            throw failure
        }
        guard rename(temporary, file.path) == 0 else {
            let failure = SystemCallError("rename", file.path)
            unlink(temporary)
            throw failure
        }
        try syncFolder(folder)
    }

    private static func writeAll(_ data: Data, to descriptor: Int32, path: String) throws(SystemCallError) {
        let failure: SystemCallError? = data.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = Foundation.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    return SystemCallError("write", path)
                }
                offset += written
            }
            return nil
        }
        if let failure { throw failure }
    }

    /// Makes a rename in `folder` durable.
    static func syncFolder(_ folder: String) throws(SystemCallError) {
        let descriptor = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { throw SystemCallError("open", folder) }
        defer { close(descriptor) }
        guard fsync(descriptor) == 0 else { throw SystemCallError("fsync", folder) }
    }
}

/// An exclusive advisory lock (`flock`) on a lock file, held between processes for a read-modify-write.
///
/// Two `davgate user` commands run at once, or one beside the server, never lose each other's change.
enum FileLock {
    static func withExclusiveLock<T>(
        on lockFile: String,
        _ body: () throws(UserStoreError) -> T
    ) throws(UserStoreError) -> T {
        let descriptor = open(lockFile, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw .io(SystemCallError("open", lockFile).description) }
        defer { close(descriptor) }
        while flock(descriptor, LOCK_EX) != 0 {
            guard errno == EINTR else { throw .io(SystemCallError("flock", lockFile).description) }
        }
        defer { flock(descriptor, LOCK_UN) }
        return try body()
    }
}
