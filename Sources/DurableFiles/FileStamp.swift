import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// What `stat` says about a file, enough to notice that another process replaced or rewrote it.
///
/// A rename over the file changes the inode even when size and mtime happen to match; a rewrite in
/// place changes the size or the mtime.
public struct FileStamp: Equatable, Hashable, Sendable {
    public var device: UInt64
    public var inode: UInt64
    public var size: Int64
    public var modifiedSeconds: Int64
    public var modifiedNanoseconds: Int64

    /// The stamp of the file at `path`, or nil when there is no such file.
    public static func of(_ path: String) throws(SystemCallError) -> FileStamp? {
        var info = stat()
        guard stat(path, &info) == 0 else {
            if errno == ENOENT { return nil }
            throw SystemCallError("stat", path)
        }
        return FileStamp(info)
    }

    /// The stamp of an open file; `path` only names it in an error.
    public static func of(descriptor: Int32, path: String) throws(SystemCallError) -> FileStamp {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw SystemCallError("fstat", path) }
        return FileStamp(info)
    }

    init(_ info: stat) {
        #if canImport(Darwin)
        let modified = info.st_mtimespec
        #else
        let modified = info.st_mtim
        #endif
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
        size = Int64(info.st_size)
        modifiedSeconds = Int64(modified.tv_sec)
        modifiedNanoseconds = Int64(modified.tv_nsec)
    }
}

/// A failed system call, naming the call, the file and the system's reason.
///
/// Each module maps it into its own error type, so that its messages stay its own.
public struct SystemCallError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The call that failed: `open`, `write`, `rename`, ...
    public var call: String
    /// The file (or folder) it was called on.
    public var path: String
    /// The `errno` it set.
    public var code: Int32

    /// Captures `errno` now, before a clean-up call can overwrite it.
    public init(_ call: String, _ path: String, code: Int32 = errno) {
        self.call = call
        self.path = path
        self.code = code
    }

    /// The system's reason (`strerror`), such as "Permission denied".
    public var reason: String { String(cString: strerror(code)) }

    public var description: String { "\(path): \(call) failed: \(reason)" }
}
