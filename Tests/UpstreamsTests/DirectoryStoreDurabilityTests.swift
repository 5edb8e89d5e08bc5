import CPageCacheState
import Foundation
import ProviderCore
import Testing
import Upstreams

#if canImport(Glibc)
import Glibc
#endif

/// A folder upstream's upload is on the disk when `upload` returns, its
/// bytes as well as its name, however the file handed to it was written.
@Suite("DirectoryStore durability")
struct DirectoryStoreDurabilityTests {
    /// A folder on a disk, not tmpfs (whose pages are never written back,
    /// so they never read as clean), with the file to upload beside the
    /// store's root on the same file system, so that the upload links it.
    private static let disk: URL? = [FileManager.default.temporaryDirectory, URL(fileURLWithPath: "/var/tmp")]
        .first { davgate_on_tmpfs($0.path) == 0 }

    /// Whether this machine can tell: a disk folder, and cachestat(2)
    /// (Linux 6.5; this machine's kernel has it, Debian 12's own 6.1 not).
    static let canTell: Bool = {
        guard disk != nil else { return false }
        let fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC)
        defer { if fd >= 0 { close(fd) } }
        return fd >= 0 && davgate_dirty_pages(fd) >= 0
    }()

    private static func diskFolder() throws -> URL {
        let folder = try #require(disk).appendingPathComponent("durable-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    /// write(2) alone, as `BodyFileWriter` writes a small body (Foundation's
    /// `Data.write`, no page of the file read as dirty).
    private static func writeWithoutSync(_ data: Data, to url: URL) throws {
        let fd = open(url.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        try #require(fd >= 0, "cannot create \(url.path)")
        defer { close(fd) }
        let written = data.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        try #require(written == data.count)
    }

    private static func dirtyPages(_ url: URL) throws -> Int64 {
        let fd = open(url.path, O_RDONLY | O_CLOEXEC)
        try #require(fd >= 0, "cannot open \(url.path)")
        defer { close(fd) }
        let dirty = davgate_dirty_pages(fd)
        try #require(dirty >= 0, "cachestat(2) failed (errno \(errno)); this test needs Linux 6.5 or later")
        return dirty
    }

    @Test("a linked upload of a file never fsynced (a small write-back body's outbox file) reaches the disk before upload returns",
          .enabled(if: canTell, "needs a folder on a disk and cachestat(2), Linux 6.5"))
    func linkedUploadIsSynced() async throws {
        let folder = try Self.diskFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let root = folder.appendingPathComponent("root")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        let source = folder.appendingPathComponent("outbox-file")
        // Written, not fsynced: its pages stay dirty for the kernel's
        // expiry (30 s), far longer than this test.
        try Self.writeWithoutSync(Data(repeating: 0x5A, count: 16 * 1024), to: source)
        try #require(try Self.dirtyPages(source) > 0, "the file's pages should be dirty before the upload")

        let store = DirectoryStore(root: root)
        let entry = try await store.upload(source, to: ["f.bin"], expecting: .absent, progress: nil)
        #expect(entry.size == 16 * 1024)

        let uploaded = root.appendingPathComponent("f.bin")
        var a = stat(), b = stat()
        try #require(lstat(source.path, &a) == 0 && lstat(uploaded.path, &b) == 0)
        // The link path, the one that had no fsync of the bytes.
        #expect(a.st_ino == b.st_ino, "the upload should have linked the file, not copied it")
        #expect(try Self.dirtyPages(uploaded) == 0, "the uploaded file's bytes are still only in memory")
    }

    @Test("a copied upload (another file system) reaches the disk before upload returns",
          .enabled(if: canTell, "needs a folder on a disk and cachestat(2), Linux 6.5"))
    func copiedUploadIsSynced() async throws {
        let folder = try Self.diskFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        // /dev/shm is another file system than the disk folder: no link.
        let source = URL(fileURLWithPath: "/dev/shm/durable-source-\(UUID().uuidString)")
        defer { unlink(source.path) }
        try Self.writeWithoutSync(Data(repeating: 0xA5, count: 16 * 1024), to: source)
        let store = DirectoryStore(root: folder)
        _ = try await store.upload(source, to: ["g.bin"], expecting: .absent, progress: nil)
        #expect(try Self.dirtyPages(folder.appendingPathComponent("g.bin")) == 0)
    }
}
