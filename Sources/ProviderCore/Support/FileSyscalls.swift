import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// fsync(2) of the file or folder at `path`, blocking; false when there is
/// nothing at `path`.
@discardableResult
func fsync(path: String) throws -> Bool {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else {
        if errno == ENOENT { return false }
        throw ProviderError.local("cannot open \(path) to sync it: \(String(cString: strerror(errno)))")
    }
    defer { close(fd) }
    guard fsync(fd) == 0 else { throw ProviderError.local("cannot sync \(path): \(String(cString: strerror(errno)))") }
    return true
}

/// Sets the access and modification times of the file at `path` to `date`,
/// to the nanosecond: the stores read a write's time from its inode.
func setModificationTime(of path: String, to date: Date) throws {
    let seconds = date.timeIntervalSince1970, whole = seconds.rounded(.down)
    let time = timespec(tv_sec: time_t(whole), tv_nsec: Int((seconds - whole) * 1e9))
    var times = [time, time]
    guard utimensat(AT_FDCWD, path, &times, 0) == 0 else {
        throw ProviderError.local("cannot set the modification time of \(path): \(String(cString: strerror(errno)))")
    }
}
