import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Durable whole-file replacement: temp file in the same folder (created with the final mode, so a
/// private key is never readable by others, not even briefly), fsync, rename, fsync of the folder.
enum AtomicWrite {
    struct Failure: Error, CustomStringConvertible {
        var call: String
        var code: Int32
        var description: String { "\(call) failed: \(String(cString: strerror(code)))" }
    }

    static func replace(_ file: URL, with data: Data, mode: mode_t) throws(Failure) {
        let folder = file.deletingLastPathComponent().path
        let temporary = folder + "/." + file.lastPathComponent + ".tmp-" + String(UInt64.random(in: .min ... .max), radix: 16)
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard descriptor >= 0 else { throw Failure(call: "open", code: errno) }
        var failure: Failure?
        if fchmod(descriptor, mode) != 0 { failure = Failure(call: "fchmod", code: errno) }
        if failure == nil {
            failure = data.withUnsafeBytes { buffer -> Failure? in
                var offset = 0
                while offset < buffer.count {
                    let written = Foundation.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                    if written < 0 {
                        if errno == EINTR { continue }
                        return Failure(call: "write", code: errno)
                    }
                    offset += written
                }
                return nil
            }
        }
        if failure == nil, fsync(descriptor) != 0 { failure = Failure(call: "fsync", code: errno) }
        if close(descriptor) != 0, failure == nil { failure = Failure(call: "close", code: errno) }
        if failure == nil, rename(temporary, file.path) != 0 { failure = Failure(call: "rename", code: errno) }
        if let failure {
            unlink(temporary)
            throw failure
        }
        let folderDescriptor = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard folderDescriptor >= 0 else { throw Failure(call: "open folder", code: errno) }
        defer { close(folderDescriptor) }
        guard fsync(folderDescriptor) == 0 else { throw Failure(call: "fsync folder", code: errno) }
    }
}
