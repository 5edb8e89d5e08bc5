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
