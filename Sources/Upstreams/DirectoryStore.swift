import Foundation
import ProviderCore

#if canImport(Glibc)
import Glibc
#endif

/// The embedded default upstream: a folder on the local disk.
///
/// A store on the local disk may take shortcuts the core cannot see: content
/// moves between the cache and the folder by hard link when both are on one
/// file system, so materializing a file and uploading a PUT copy nothing.
/// Every write into the folder goes through a hidden temporary name and a
/// rename, so a reader of the folder never sees half a file.
public struct DirectoryStore: UpstreamStore {
    public let root: URL
    public var displayName: String { "file:\(root.path)" }

    /// Names of our own in-progress files, hidden from listings.
    static let temporaryPrefix = ".davgate-tmp-"

    public init(root: URL) {
        self.root = root.standardizedFileURL
    }

    func url(_ path: ItemPath) throws -> URL {
        var url = root
        for name in path {
            // The server normalises paths; this is the last line of defence.
            guard !name.isEmpty, name != ".", name != "..", !name.contains("/"), !name.contains("\0") else {
                throw UpstreamError.io("invalid name \(name.debugDescription)")
            }
            url.appendPathComponent(name)
        }
        return url
    }

    public func list(_ folder: ItemPath) async throws -> [UpstreamEntry] {
        let dir = try url(folder)
        return try await blocking {
            guard let handle = opendir(dir.path) else { throw Self.error(errno) }
            defer { closedir(handle) }
            var entries: [UpstreamEntry] = []
            while let entry = readdir(handle) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                    String(cString: raw.bindMemory(to: CChar.self).baseAddress!)
                }
                if name == "." || name == ".." || name.hasPrefix(Self.temporaryPrefix) { continue }
                // Names must be valid UTF-8 and in NFC to be addressable.
                guard name.utf8.elementsEqual(name.precomposedStringWithCanonicalMapping.utf8) else { continue }
                if let e = try? Self.entry(name: name, path: dir.appendingPathComponent(name).path) {
                    entries.append(e)
                }
            }
            return entries
        }
    }

    public func stat(_ path: ItemPath) async throws -> UpstreamEntry? {
        let target = try url(path)
        return try await blocking {
            do {
                return try Self.entry(name: path.last ?? "", path: target.path)
            } catch UpstreamError.notFound {
                return nil
            }
        }
    }

    public func fetch(_ path: ItemPath, range: ClosedRange<Int64>?, into destination: URL,
                      observer: FetchObserver) async throws -> UpstreamEntry {
        let source = try url(path)
        let name = path.last ?? ""
        if let range {
            let entry = try await blocking { try Self.entry(name: name, path: source.path) }
            try await observer.began(entry)
            try await blocking {
                try Self.copyRange(source.path, destination.path, range)
                // Rewritten during the copy: the bytes may mix two versions.
                guard try Self.entry(name: name, path: source.path).version == entry.version else {
                    throw UpstreamError.versionMismatch
                }
            }
            observer.progressed(Int64(range.count))
            return entry
        }
        let entry = try await blocking {
            if link(source.path, destination.path) != 0 {
                guard errno == EXDEV || errno == EPERM || errno == EMLINK else { throw Self.error(errno) }
                try Self.copyFile(source.path, destination.path)
            }
            // The entry of what was linked or copied, not of what was listed.
            return try Self.entry(name: name, path: destination.path)
        }
        do {
            try await observer.began(entry)
        } catch {
            unlink(destination.path)
            throw error
        }
        observer.progressed(entry.size)
        return entry
    }

    public func upload(_ file: URL, to path: ItemPath, expecting: UpstreamExpectation, progress: UploadProgress?) async throws -> UpstreamEntry {
        let target = try url(path)
        let entry = try await blocking {
            try Self.check(expecting, at: target.path)
            let parent = target.deletingLastPathComponent()
            let temporary = parent.appendingPathComponent(Self.temporaryPrefix + UUID().uuidString)
            if link(file.path, temporary.path) != 0 {
                if errno == ENOENT || errno == ENOTDIR { throw UpstreamError.conflict }
                guard errno == EXDEV || errno == EPERM || errno == EMLINK else { throw Self.error(errno) }
                try Self.copyFile(file.path, temporary.path)
            }
            guard rename(temporary.path, target.path) == 0 else {
                let code = errno
                unlink(temporary.path)
                throw Self.error(code)
            }
            Self.syncFolder(parent.path)
            return try Self.entry(name: path.last ?? "", path: target.path)
        }
        // A link or a copy: all at once, as far as anyone watching can tell.
        progress?.add(entry.size)
        return entry
    }

    public func makeFolder(_ path: ItemPath) async throws -> UpstreamEntry {
        let target = try url(path)
        return try await blocking {
            guard mkdir(target.path, 0o755) == 0 else { throw Self.error(errno) }
            Self.syncFolder(target.deletingLastPathComponent().path)
            return try Self.entry(name: path.last ?? "", path: target.path)
        }
    }

    public func delete(_ path: ItemPath) async throws {
        let target = try url(path)
        try await blocking {
            var st = Glibc.stat()
            guard lstat(target.path, &st) == 0 else { throw Self.error(errno) }
            if (st.st_mode & S_IFMT) == S_IFDIR {
                do {
                    try FileManager.default.removeItem(atPath: target.path)
                } catch {
                    throw UpstreamError.io("cannot delete folder: \(error.localizedDescription)")
                }
            } else if unlink(target.path) != 0 {
                throw Self.error(errno)
            }
            Self.syncFolder(target.deletingLastPathComponent().path)
        }
    }

    public func move(_ source: ItemPath, to destination: ItemPath) async throws -> UpstreamEntry {
        let from = try url(source), to = try url(destination)
        return try await blocking {
            guard access(to.path, F_OK) != 0 else { throw UpstreamError.exists }
            guard rename(from.path, to.path) == 0 else { throw Self.error(errno) }
            Self.syncFolder(from.deletingLastPathComponent().path)
            Self.syncFolder(to.deletingLastPathComponent().path)
            return try Self.entry(name: destination.last ?? "", path: to.path)
        }
    }

    public func copy(_ source: ItemPath, to destination: ItemPath, recursive: Bool) async throws -> UpstreamEntry {
        let from = try url(source), to = try url(destination)
        return try await blocking {
            guard access(to.path, F_OK) != 0 else { throw UpstreamError.exists }
            try Self.copyTree(from.path, to.path, recursive: recursive)
            Self.syncFolder(to.deletingLastPathComponent().path)
            return try Self.entry(name: destination.last ?? "", path: to.path)
        }
    }

    public func quota() async throws -> UpstreamQuota? {
        let path = root.path
        return try await blocking {
            var s = statvfs()
            guard statvfs(path, &s) == 0 else { throw Self.error(errno) }
            let block = Int64(s.f_frsize)
            return UpstreamQuota(available: Int64(s.f_bavail) * block,
                                 used: Int64(s.f_blocks - s.f_bfree) * block)
        }
    }
}

extension DirectoryStore {
    /// Conditional writes on a local folder: compare the version now. (The
    /// window between this check and the rename is as small as it gets
    /// without a lock every other writer of the folder would have to honour.)
    static func check(_ expecting: UpstreamExpectation, at path: String) throws {
        switch expecting {
        case .any:
            return
        case .absent:
            if access(path, F_OK) == 0 { throw UpstreamError.versionMismatch }
        case .version(let version):
            guard let current = try? entry(name: "", path: path), current.version == version else {
                throw UpstreamError.versionMismatch
            }
        }
    }

    /// Copies `range` of `source` into `destination` at the same offsets.
    static func copyRange(_ source: String, _ destination: String, _ range: ClosedRange<Int64>) throws {
        let input = open(source, O_RDONLY)
        guard input >= 0 else { throw error(errno) }
        defer { close(input) }
        let output = open(destination, O_WRONLY | O_CREAT, 0o600)
        guard output >= 0 else { throw error(errno) }
        defer { close(output) }
        try pump(input, output, range)
    }

    /// Copies bytes between open files at the same offsets: `range`, or
    /// everything to the end of the input. One loop for copies and ranges.
    static func pump(_ input: Int32, _ output: Int32, _ range: ClosedRange<Int64>?) throws {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
        defer { buffer.deallocate() }
        var offset = range?.lowerBound ?? 0
        let end = range.map { $0.upperBound + 1 } ?? .max
        while offset < end {
            let n = pread(input, buffer.baseAddress, Int(min(Int64(buffer.count), end - offset)), off_t(offset))
            if n < 0 {
                if errno == EINTR { continue }
                throw error(errno)
            }
            if n == 0 {
                guard range == nil else { throw UpstreamError.io("file ended before the requested range") }
                return
            }
            var written = 0
            while written < n {
                let w = pwrite(output, buffer.baseAddress! + written, n - written, off_t(offset) + off_t(written))
                if w < 0 {
                    if errno == EINTR { continue }
                    throw error(errno)
                }
                written += w
            }
            offset += Int64(n)
        }
    }

    static func entry(name: String, path: String) throws -> UpstreamEntry {
        var st = Glibc.stat()
        guard statPath(path, &st) == 0 else { throw error(errno) }
        let isFolder = (st.st_mode & S_IFMT) == S_IFDIR
        let modified = Date(timeIntervalSince1970: TimeInterval(st.st_mtim.tv_sec) + TimeInterval(st.st_mtim.tv_nsec) / 1e9)
        // inode + size + mtime in ns: any rewrite or replacement changes it.
        let version = "\(st.st_ino)-\(st.st_size)-\(st.st_mtim.tv_sec).\(st.st_mtim.tv_nsec)"
        return UpstreamEntry(name: name, isFolder: isFolder, size: Int64(st.st_size), modified: modified,
                             version: version, executable: !isFolder && (st.st_mode & S_IXUSR) != 0)
    }

    static func error(_ code: Int32) -> UpstreamError {
        switch code {
        case ENOENT: .notFound
        case EEXIST, ENOTEMPTY: .exists
        case ENOTDIR: .conflict
        case ENOSPC, EDQUOT: .noSpace
        case EACCES, EPERM, EROFS: .forbidden(String(cString: strerror(code)))
        default: .io(String(cString: strerror(code)))
        }
    }

    static func syncFolder(_ path: String) {
        let fd = open(path, O_RDONLY | O_DIRECTORY)
        guard fd >= 0 else { return }
        fsync(fd)
        close(fd)
    }

    /// Copies a file's bytes through a 1 MiB buffer, then fsyncs. Only used
    /// when a hard link is impossible (cache and upstream on two file systems).
    static func copyFile(_ source: String, _ destination: String) throws {
        let input = open(source, O_RDONLY)
        guard input >= 0 else { throw error(errno) }
        defer { close(input) }
        var st = Glibc.stat()
        fstat(input, &st)
        let output = open(destination, O_WRONLY | O_CREAT | O_EXCL, st.st_mode & 0o777)
        guard output >= 0 else { throw error(errno) }
        var ok = false
        defer {
            close(output)
            if !ok { unlink(destination) }
        }
        try pump(input, output, nil)
        // A copy keeps the modification time, as the hard link it stands in for does.
        var times = [st.st_atim, st.st_mtim]
        futimens(output, &times)
        guard fsync(output) == 0 else { throw error(errno) }
        ok = true
    }

    static func copyTree(_ source: String, _ destination: String, recursive: Bool) throws {
        var st = Glibc.stat()
        guard statPath(source, &st) == 0 else { throw error(errno) }
        guard (st.st_mode & S_IFMT) == S_IFDIR else {
            let temporary = (destination as NSString).deletingLastPathComponent + "/" + temporaryPrefix + UUID().uuidString
            try copyFile(source, temporary)
            guard rename(temporary, destination) == 0 else {
                let code = errno
                unlink(temporary)
                throw error(code)
            }
            return
        }
        guard mkdir(destination, 0o755) == 0 else { throw error(errno) }
        guard recursive else { return }
        let names = try FileManager.default.contentsOfDirectory(atPath: source)
        for name in names where !name.hasPrefix(temporaryPrefix) {
            try copyTree(source + "/" + name, destination + "/" + name, recursive: true)
        }
    }
}

/// `stat(2)`; a free function because inside the store `stat` names the
/// protocol method.
func statPath(_ path: String, _ st: inout stat) -> Int32 {
    stat(path, &st)
}
