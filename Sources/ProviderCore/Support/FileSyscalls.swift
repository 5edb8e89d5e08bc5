import DurableFiles
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// fsync(2) of the file or folder at `path`, blocking; false when there is
/// nothing at `path`.
/// - Parameter dataOnly: fdatasync(2), for a file whose bytes and size
///   matter but not its times: a file system may then leave a new
///   modification time unwritten (ext4 without a journal writes the
///   inode's block all the same).
@discardableResult
func fsync(path: String, dataOnly: Bool = false) throws -> Bool {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else {
        if errno == ENOENT { return false }
        throw ProviderError.local("cannot open \(path) to sync it: \(String(cString: strerror(errno)))")
    }
    defer { close(fd) }
    guard (dataOnly ? fdatasync(fd) : fsync(fd)) == 0 else { throw ProviderError.local("cannot sync \(path): \(String(cString: strerror(errno)))") }
    return true
}

/// Sets the access and modification times of the file at `path` to `date`,
/// to the nanosecond: the stores read a write's time from its inode.
func setModificationTime(of path: String, to date: Date) throws {
    var times = fileTimes(date)
    guard utimensat(AT_FDCWD, path, &times, 0) == 0 else {
        throw ProviderError.local("cannot set the modification time of \(path): \(String(cString: strerror(errno)))")
    }
}

/// `date` as the access and modification times utimensat(2) and
/// futimens(2) take.
func fileTimes(_ date: Date) -> [timespec] {
    let seconds = date.timeIntervalSince1970, whole = seconds.rounded(.down)
    let time = timespec(tv_sec: time_t(whole), tv_nsec: Int((seconds - whole) * 1e9))
    return [time, time]
}

/// Writes `content` to a new file at `path` (which must not exist), with
/// the modification time `modified`, blocking; `synced`: fsynced before it
/// returns. A failed write leaves no file.
func createFile(_ path: String, holding content: Data, modified: Date, synced: Bool = false) throws {
    let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
    guard fd >= 0 else { throw ProviderError.local("cannot create \(path): \(String(cString: strerror(errno)))") }
    var failure: SystemCallError?
    do {
        try AtomicFile.writeAll(content, to: fd, path: path)
    } catch {
        failure = error
    }
    var times = fileTimes(modified)
    if failure == nil, futimens(fd, &times) != 0 { failure = SystemCallError("futimens", path) }
    if failure == nil, synced, fsync(fd) != 0 { failure = SystemCallError("fsync", path) }
    close(fd)
    if let failure {
        unlink(path)
        throw ProviderError.local("cannot create \(failure)")
    }
}

/// Copies `count` bytes of the file open as `source` from `sourceOffset`
/// into the file open as `target` at `targetOffset`, in 1 MiB steps,
/// blocking. Throws when the source ends early.
func copyBytes(from source: Int32, at sourceOffset: Int64, to target: Int32, at targetOffset: Int64, count: Int64) throws {
    let step = 1 << 20
    let buffer = UnsafeMutableRawPointer.allocate(byteCount: step, alignment: 16)
    defer { buffer.deallocate() }
    var done: Int64 = 0
    while done < count {
        let want = Int(min(Int64(step), count - done))
        let got = pread(source, buffer, want, off_t(sourceOffset + done))
        if got < 0 && errno == EINTR { continue }
        guard got > 0 else {
            throw ProviderError.local(got == 0 ? "the source file ended early" : "cannot read: \(String(cString: strerror(errno)))")
        }
        var written = 0
        while written < got {
            let n = pwrite(target, buffer + written, got - written, off_t(targetOffset + done) + off_t(written))
            if n < 0 {
                if errno == EINTR { continue }
                if errno == ENOSPC || errno == EDQUOT { throw ProviderError.localNoSpace }
                throw ProviderError.local("cannot write: \(String(cString: strerror(errno)))")
            }
            written += n
        }
        done += Int64(got)
    }
}

/// A file descriptor for `path` (`flags` as open(2)), closed by the caller.
func openFile(_ path: String, _ flags: Int32) throws -> Int32 {
    let fd = open(path, flags | O_CLOEXEC, 0o600)
    guard fd >= 0 else { throw ProviderError.local("cannot open \(path): \(String(cString: strerror(errno)))") }
    return fd
}

/// Whether the files at `a` and `b` hold the same bytes, read a MiB at a
/// time (never whole), blocking.
func sameContents(_ a: URL, _ b: URL) throws -> Bool {
    let (first, second) = (try FileHandle(forReadingFrom: a), try FileHandle(forReadingFrom: b))
    defer { try? first.close(); try? second.close() }
    while true {
        let (x, y) = (try first.read(upToCount: 1 << 20) ?? Data(), try second.read(upToCount: 1 << 20) ?? Data())
        guard x == y else { return false }
        if x.isEmpty { return true }
    }
}
