import Foundation

/// The local content of materialized items: one file per item, named by the
/// item's id and never by a client path, so no client string ever reaches the
/// file system here. Writes in progress live in `tmp/` and only become
/// visible by rename, so a crash or a cut connection leaves nothing partial.
public struct ContentCache: Sendable {
    public let folder: URL
    let temporary: URL

    public init(folder: URL) throws {
        self.folder = folder
        temporary = folder.appendingPathComponent("tmp", isDirectory: true)
        let fm = FileManager.default
        try fm.createDirectory(at: temporary, withIntermediateDirectories: true)
        // Leftovers of a crash are partial by definition.
        for name in (try? fm.contentsOfDirectory(atPath: temporary.path)) ?? [] {
            try? fm.removeItem(at: temporary.appendingPathComponent(name))
        }
    }

    public func file(for id: Int64) -> URL {
        folder.appendingPathComponent(String(id, radix: 16))
    }

    public func hasFile(for id: Int64) -> Bool {
        access(file(for: id).path, F_OK) == 0
    }

    /// A fresh name for a write or fetch in progress.
    public func temporaryFile(_ purpose: String) -> URL {
        temporary.appendingPathComponent("\(purpose)-\(UUID().uuidString)")
    }

    /// Makes completed bytes the item's content, atomically.
    public func install(_ temporaryFile: URL, for id: Int64) throws {
        guard rename(temporaryFile.path, file(for: id).path) == 0 else {
            throw ProviderError.local("cannot install cache file: \(String(cString: strerror(errno)))")
        }
    }

    public func remove(_ ids: [Int64]) {
        for id in ids { unlink(file(for: id).path) }
    }

    public func discard(_ temporaryFile: URL) {
        unlink(temporaryFile.path)
    }

    /// One content file: whose it is, its bytes on disk, when it was written.
    struct ContentFile: Sendable {
        var id: Int64
        var bytes: Int64
        var modified: Date
    }

    /// The content files (not those in progress), for eviction.
    func contentFiles() -> [ContentFile] {
        var files: [ContentFile] = []
        for name in (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? [] {
            guard let id = Int64(name, radix: 16) else { continue }
            var st = stat()
            guard lstat(folder.appendingPathComponent(name).path, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { continue }
            files.append(ContentFile(id: id, bytes: Int64(st.st_blocks) * 512,
                                     modified: Date(timeIntervalSince1970: TimeInterval(st.st_mtim.tv_sec))))
        }
        return files
    }

    /// Free bytes on the cache's file system for unprivileged writers.
    func freeBytes() -> Int64? {
        var s = statvfs()
        guard statvfs(folder.path, &s) == 0 else { return nil }
        return Int64(s.f_bavail) * Int64(s.f_frsize)
    }

    /// Bytes on disk (allocated blocks, so a sparse file counts what it
    /// holds) and the count of files, in progress ones included.
    func usage() -> (bytes: Int64, files: Int) {
        var bytes: Int64 = 0, files = 0
        for folder in [folder, temporary] {
            for name in (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? [] {
                var st = stat()
                guard lstat(folder.appendingPathComponent(name).path, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { continue }
                bytes += Int64(st.st_blocks) * 512
                files += 1
            }
        }
        return (bytes, files)
    }
}
