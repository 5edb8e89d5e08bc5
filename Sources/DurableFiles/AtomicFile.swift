import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Durable whole-file replacement: temp file in the same folder, fsync, rename, fsync of the folder.
///
/// Readers see the old file or the new one, never a mix; after a crash the new content is either
/// fully there or not at all. The temp file is created with the final mode (O_EXCL, then `fchmod`
/// before a byte is written), so a private file is never readable by others, not even briefly.
public enum AtomicFile {
    /// Replaces (or creates) `path` with `bytes`, with exactly `mode` (not reduced by the umask).
    ///
    /// With `exclusive`, the new file is published only when nothing is at `path` yet: `link()`
    /// fails when the name exists, so of two writers at once exactly one wins, and an existing
    /// file is never overwritten. The loser gets a `link` failure with `EEXIST`
    /// (``SystemCallError/refusedExistingFile``). `link()` rather than `renameat2(RENAME_NOREPLACE)`:
    /// it is POSIX on Linux and Darwin alike and does not depend on the file system supporting the
    /// flag, and it keeps the vault's behaviour (and its messages) as they were.
    ///
    /// On any failure the temp file is removed and the old file is untouched.
    /// - Returns: the stamp of the new file.
    @discardableResult
    public static func replace(
        _ path: String,
        with bytes: some ContiguousBytes,
        mode: mode_t,
        exclusive: Bool = false
    ) throws(SystemCallError) -> FileStamp {
        let url = URL(fileURLWithPath: path)
        let folder = url.deletingLastPathComponent().path
        let suffix = String(UInt64.random(in: .min ... .max), radix: 16)
        let temporary = folder + "/." + url.lastPathComponent + ".tmp-" + suffix
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard descriptor >= 0 else { throw SystemCallError("open", temporary) }
        let stamp: FileStamp
        do throws(SystemCallError) {
            // The umask may only remove bits; fchmod makes the mode exactly `mode` either way,
            // and before any data is in the file.
            guard fchmod(descriptor, mode) == 0 else { throw SystemCallError("fchmod", temporary) }
            try writeAll(bytes, to: descriptor, path: temporary)
            guard fsync(descriptor) == 0 else { throw SystemCallError("fsync", temporary) }
            stamp = try FileStamp.of(descriptor: descriptor, path: temporary)
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
        if exclusive {
            guard link(temporary, path) == 0 else {
                let failure = SystemCallError("link", path)
                unlink(temporary)
                throw failure
            }
            unlink(temporary)
        } else {
            guard rename(temporary, path) == 0 else {
                let failure = SystemCallError("rename", path)
                unlink(temporary)
                throw failure
            }
        }
        try syncFolder(folder)
        return stamp
    }

    /// Makes a rename (or link) in `folder` durable: without it a crash may forget the new name.
    public static func syncFolder(_ folder: String) throws(SystemCallError) {
        let descriptor = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { throw SystemCallError("open", folder) }
        defer { close(descriptor) }
        guard fsync(descriptor) == 0 else { throw SystemCallError("fsync", folder) }
    }

    /// Writes every byte, resuming after short writes and signals (`EINTR`).
    public static func writeAll(_ bytes: some ContiguousBytes, to descriptor: Int32, path: String) throws(SystemCallError) {
        let failure: SystemCallError? = bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
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
}

extension SystemCallError {
    /// Whether this is ``AtomicFile/replace(_:with:mode:exclusive:)`` with `exclusive` finding a
    /// file already at the path (and so leaving it alone).
    public var refusedExistingFile: Bool { call == "link" && code == EEXIST }
}

/// An exclusive advisory lock (`flock`) on a lock file, held between processes for a read-modify-write.
///
/// Two commands run at once, or one beside the server, never lose each other's change.
public enum FileLock {
    /// Runs `body` holding the lock on `lockFile` (created with mode 0600 when missing).
    /// - Parameter failure: maps a failure to open or lock the lock file into the caller's error type.
    public static func withExclusiveLock<T, Failure: Error>(
        on lockFile: String,
        failure: (SystemCallError) -> Failure,
        _ body: () throws(Failure) -> T
    ) throws(Failure) -> T {
        let descriptor = open(lockFile, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw failure(SystemCallError("open", lockFile)) }
        defer { close(descriptor) }
        while flock(descriptor, LOCK_EX) != 0 {
            guard errno == EINTR else { throw failure(SystemCallError("flock", lockFile)) }
        }
        defer { flock(descriptor, LOCK_UN) }
        return try body()
    }
}
