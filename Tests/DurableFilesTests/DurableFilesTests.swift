import DurableFiles
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs `body` in a fresh private folder, removed afterwards.
private func inScratchFolder(_ body: (URL) throws -> Void) throws {
    let folder = FileManager.default.temporaryDirectory
        .appendingPathComponent("davgate-durable-\(UUID().uuidString)", isDirectory: true)
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    defer { try? FileManager.default.removeItem(at: folder) }
    try body(folder)
}

private func names(in folder: URL) throws -> [String] {
    try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
}

private func permissions(of path: String) -> Int {
    var info = stat()
    guard stat(path, &info) == 0 else { return -1 }
    return Int(info.st_mode & 0o7777)
}

/// Bytes that, when the writer asks for them, note the temp files present in the folder and their
/// modes and sizes: the state just before the first byte is written.
private final class ObservedBytes: ContiguousBytes {
    let bytes: [UInt8]
    let folder: URL
    var seen: [(name: String, mode: Int, size: Int)] = []

    init(_ bytes: [UInt8], folder: URL) {
        self.bytes = bytes
        self.folder = folder
    }

    func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        for name in (try? names(in: folder)) ?? [] where name.contains(".tmp-") {
            var info = stat()
            if stat(folder.appendingPathComponent(name).path, &info) == 0 {
                seen.append((name, Int(info.st_mode & 0o7777), Int(info.st_size)))
            }
        }
        return try bytes.withUnsafeBytes(body)
    }
}

@Suite("DurableFiles")
struct DurableFilesTests {
    @Test("replace swaps in a new file whole and leaves no temp file, also when it fails")
    func replaceIsAtomic() throws {
        try inScratchFolder { folder in
            let path = folder.appendingPathComponent("data.json").path
            try AtomicFile.replace(path, with: Data("old".utf8), mode: 0o600)
            // A reader that opened the old file keeps reading the old file: it was not rewritten in place.
            let reader = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
            defer { try? reader.close() }
            let stamp = try AtomicFile.replace(path, with: Data("new content".utf8), mode: 0o600)
            #expect(try reader.readToEnd() == Data("old".utf8))
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data("new content".utf8))
            #expect(try FileStamp.of(path) == stamp)
            #expect(try names(in: folder) == ["data.json"])

            // A rename that fails (a folder is in the way) removes its temp file and changes nothing.
            let blocked = folder.appendingPathComponent("blocked")
            try FileManager.default.createDirectory(at: blocked.appendingPathComponent("inside"), withIntermediateDirectories: true)
            let error = #expect(throws: SystemCallError.self) {
                try AtomicFile.replace(blocked.path, with: Data("x".utf8), mode: 0o600)
            }
            #expect(error?.call == "rename")
            #expect(error?.path == blocked.path)
            #expect(error?.description.hasPrefix("\(blocked.path): rename failed: ") == true)
            #expect(try names(in: folder) == ["blocked", "data.json"])
        }
    }

    @Test("the temp file has its final mode before any data is written", arguments: [0o600, 0o640, 0o666])
    func modeBeforeData(mode: Int) throws {
        try inScratchFolder { folder in
            let path = folder.appendingPathComponent("key.pem").path
            let bytes = ObservedBytes(Array("private key".utf8), folder: folder)
            try AtomicFile.replace(path, with: bytes, mode: mode_t(mode))
            #expect(bytes.seen.count == 1, "exactly one temp file when the data is written")
            #expect(bytes.seen.first?.name.hasPrefix(".key.pem.tmp-") == true)
            #expect(bytes.seen.first?.mode == mode, "fchmod came first, and the umask took nothing off")
            #expect(bytes.seen.first?.size == 0)
            #expect(permissions(of: path) == mode)
            #expect(try names(in: folder) == ["key.pem"])
        }
    }

    @Test("an exclusive publish refuses an existing file and leaves it alone")
    func exclusiveRefusesExisting() throws {
        try inScratchFolder { folder in
            let path = folder.appendingPathComponent("vault.dgv").path
            try AtomicFile.replace(path, with: [1, 2, 3] as [UInt8], mode: 0o600, exclusive: true)
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data([1, 2, 3]))
            #expect(permissions(of: path) == 0o600)

            let error = #expect(throws: SystemCallError.self) {
                try AtomicFile.replace(path, with: [9, 9] as [UInt8], mode: 0o600, exclusive: true)
            }
            #expect(error?.refusedExistingFile == true)
            #expect(error?.call == "link")
            #expect(error?.code == EEXIST)
            #expect(error?.path == path)
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data([1, 2, 3]))
            #expect(try names(in: folder) == ["vault.dgv"])
        }
    }

    @Test("the stamp changes on replace even when size and mtime are the same")
    func stampChangesOnReplace() throws {
        try inScratchFolder { folder in
            let path = folder.appendingPathComponent("users.json").path
            #expect(try FileStamp.of(path) == nil)
            let first = try AtomicFile.replace(path, with: Data("aaaa".utf8), mode: 0o600)
            #expect(try FileStamp.of(path) == first)
            try AtomicFile.replace(path, with: Data("bbbb".utf8), mode: 0o600)
            // Put the old mtime back: only the inode is left to tell the files apart.
            let time = timespec(tv_sec: Int(first.modifiedSeconds), tv_nsec: Int(first.modifiedNanoseconds))
            let times = [time, time]
            #expect(utimensat(AT_FDCWD, path, times, 0) == 0)
            let second = try #require(try FileStamp.of(path))
            #expect(second.size == first.size)
            #expect(second.modifiedSeconds == first.modifiedSeconds)
            #expect(second.modifiedNanoseconds == first.modifiedNanoseconds)
            #expect(second != first)

            let descriptor = open(path, O_RDONLY | O_CLOEXEC)
            defer { close(descriptor) }
            #expect(try FileStamp.of(descriptor: descriptor, path: path) == second)
        }
    }

    @Test("a private read refuses a file group or others can read, naming it")
    func privateReadRefusesReadable() throws {
        try inScratchFolder { folder in
            let path = folder.appendingPathComponent("vault.key").path
            let written = try AtomicFile.replace(path, with: [7, 7, 7] as [UInt8], mode: 0o600)
            let (bytes, stamp) = try PrivateFile.read(path, maximumSize: 1 << 20)
            #expect(bytes == [7, 7, 7])
            #expect(stamp == written)

            chmod(path, 0o644)
            let error = #expect(throws: PrivateFileError.readableByOthers(path: path, mode: 0o644)) {
                try PrivateFile.read(path, maximumSize: 1 << 20)
            }
            #expect(error?.description.hasPrefix("\(path): ") == true)
            #expect(error?.description.contains("chmod 600 \(path)") == true)
            #expect(permissions(of: path) == 0o644, "the mode is the owner's to fix")
        }
    }

    @Test("a private read tells a missing file, a folder and a file over the limit apart")
    func privateReadOtherRefusals() throws {
        try inScratchFolder { folder in
            let path = folder.appendingPathComponent("vault.dgv").path
            #expect(throws: PrivateFileError.missing(path: path)) { try PrivateFile.read(path, maximumSize: 16) }
            chmod(folder.path, 0o700)
            #expect(throws: PrivateFileError.notRegularFile(path: folder.path)) { try PrivateFile.read(folder.path, maximumSize: 16) }
            try AtomicFile.replace(path, with: [UInt8](repeating: 1, count: 17), mode: 0o600)
            #expect(throws: PrivateFileError.tooLarge(path: path, maximumSize: 16)) { try PrivateFile.read(path, maximumSize: 16) }
        }
    }

    @Test("the lock runs the body, and a lock file that cannot be opened is the caller's error")
    func exclusiveLock() throws {
        struct Refused: Error, Equatable { var message: String }
        try inScratchFolder { folder in
            let lockFile = folder.appendingPathComponent("users.json.lock").path
            let value = try FileLock.withExclusiveLock(on: lockFile, failure: { Refused(message: $0.description) }) { () throws(Refused) in 42 }
            #expect(value == 42)
            #expect(permissions(of: lockFile) == 0o600)

            let unreachable = folder.appendingPathComponent("missing/users.json.lock").path
            #expect(throws: Refused(message: "\(unreachable): open failed: No such file or directory")) {
                try FileLock.withExclusiveLock(on: unreachable, failure: { Refused(message: $0.description) }) { () throws(Refused) in 0 }
            }
        }
    }
}
