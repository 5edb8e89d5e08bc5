import Foundation

/// `count` random bytes from /dev/urandom: content no layer can compress or
/// guess, and a misplaced range never matches by chance.
///
/// Test content comes from here rather than from mapping an index range to
/// bytes: in a debug build that map costs tens of nanoseconds a byte, and
/// a 64 MiB file held one of the test process's two cooperative threads for
/// half a minute, stalling every other test's timeouts and start-ups.
public func randomData(_ count: Int) throws -> Data {
    let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: "/dev/urandom"))
    defer { try? handle.close() }
    var data = Data()
    while data.count < count {
        data.append(try handle.read(upToCount: count - data.count) ?? Data())
    }
    return data
}

/// A new file at `url` of `size` random bytes, written 1 MiB at a time.
public func writeRandomFile(at url: URL, size: Int) throws {
    _ = FileManager.default.createFile(atPath: url.path, contents: nil)
    let handle = try FileHandle(forWritingTo: url)
    defer { try? handle.close() }
    var written = 0
    while written < size {
        let chunk = try randomData(min(1 << 20, size - written))
        try handle.write(contentsOf: chunk)
        written += chunk.count
    }
}
