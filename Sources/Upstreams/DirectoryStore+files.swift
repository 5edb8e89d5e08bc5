import DAVProtocol
import Foundation
import ProviderCore

#if canImport(Glibc)
import Glibc
#endif

/// The directory store's file work, all on open descriptors (see
/// `DirectoryStore+beneath.swift` for how they are reached).
extension DirectoryStore {
    /// An entry from `stat` data: inode + size + mtime in ns make the version,
    /// so any rewrite or replacement changes it.
    static func entry(name: String, _ st: stat) -> UpstreamEntry {
        let isFolder = (st.st_mode & S_IFMT) == S_IFDIR
        let modified = Date(timeIntervalSince1970: TimeInterval(st.st_mtim.tv_sec) + TimeInterval(st.st_mtim.tv_nsec) / 1e9)
        let version = "\(st.st_ino)-\(st.st_size)-\(st.st_mtim.tv_sec).\(st.st_mtim.tv_nsec)"
        return UpstreamEntry(name: name, isFolder: isFolder, size: Int64(st.st_size), modified: modified,
                             version: version, executable: !isFolder && (st.st_mode & S_IXUSR) != 0)
    }

    /// The entry of an open file or folder; `.notFound` for anything that is
    /// neither (a FIFO, socket or device is never part of the share).
    static func entry(name: String, of fd: borrowing Descriptor) throws(UpstreamError) -> UpstreamEntry {
        var st = Glibc.stat()
        guard fstat(fd.raw, &st) == 0 else { throw error(errno) }
        let kind = st.st_mode & S_IFMT
        guard kind == S_IFREG || kind == S_IFDIR else { throw UpstreamError.notFound }
        return entry(name: name, st)
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

    /// Makes the names in a folder durable (after a create, rename or unlink).
    static func syncFolder(_ folder: borrowing Descriptor) {
        fsync(folder.raw)
    }

    /// The permission bits of `name` in `folder` when it is a regular file
    /// (an overwrite keeps them, as an editor's save does), else nil.
    static func existingFileMode(_ name: String, in folder: borrowing Descriptor) -> mode_t? {
        var st = Glibc.stat()
        guard fstatat(folder.raw, name, &st, AT_SYMLINK_NOFOLLOW) == 0, (st.st_mode & S_IFMT) == S_IFREG else { return nil }
        return st.st_mode & 0o7777
    }

    /// Copies bytes between open files at the same offsets: `range`, or
    /// everything to the end of the input. One loop for copies and ranges.
    static func pump(_ input: Int32, _ output: Int32, _ range: ClosedRange<Int64>?) throws(UpstreamError) {
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

    /// Writes a new file `name` in `folder` (which must not exist) holding
    /// the bytes of the open file `source`, with exactly `mode`, the
    /// source's modification time (as the hard link it stands in for would
    /// have), and fsynced. Nothing is left behind when it fails.
    static func writeCopy(of source: borrowing Descriptor, named name: String, in folder: borrowing Descriptor, mode: mode_t) throws(UpstreamError) {
        let output = try Descriptor(openat(folder.raw, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode))
        do throws(UpstreamError) {
            try pump(source.raw, output.raw, nil)
            var st = Glibc.stat()
            if fstat(source.raw, &st) == 0 {
                var times = [st.st_atim, st.st_mtim]
                futimens(output.raw, &times)
            }
            // The umask may only have removed bits; this makes it exact.
            guard fchmod(output.raw, mode) == 0, fsync(output.raw) == 0 else { throw error(errno) }
        } catch {
            unlinkat(folder.raw, name, 0)
            throw error
        }
    }

    /// Makes `name` in `folder` a hard link to the open file `source`, by
    /// its descriptor (through /proc, which needs no privilege), so exactly
    /// the file that was opened beneath the root is linked, never whatever
    /// its name points to by now. False when a link cannot be made here
    /// (another file system, no /proc, a link count at its limit).
    static func link(_ source: borrowing Descriptor, as name: String, in folder: Int32) throws(UpstreamError) -> Bool {
        if linkat(AT_FDCWD, "/proc/self/fd/\(source.raw)", folder, name, AT_SYMLINK_FOLLOW) == 0 { return true }
        switch errno {
        case EXDEV, EPERM, EMLINK, ENOENT: return false
        default: throw error(errno)
        }
    }

    /// Removes `name` in `folder` and, for a folder, everything below it,
    /// never following a link (a link is removed, not what it points to).
    static func removeTree(_ name: [CChar], in folder: borrowing Descriptor) throws(UpstreamError) {
        var st = Glibc.stat()
        guard fstatat(folder.raw, name, &st, AT_SYMLINK_NOFOLLOW) == 0 else { throw error(errno) }
        if (st.st_mode & S_IFMT) == S_IFDIR {
            let inner = try Descriptor(openat(folder.raw, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC))
            for member in try rawNames(in: inner) {
                try removeTree(member, in: inner)
            }
            guard unlinkat(folder.raw, name, AT_REMOVEDIR) == 0 else { throw error(errno) }
        } else {
            guard unlinkat(folder.raw, name, 0) == 0 else { throw error(errno) }
        }
    }

    /// Every name in an open folder but `.` and `..`, byte for byte as the
    /// file system holds it (NUL-terminated, for the `*at` calls), so even a
    /// name that is not valid UTF-8 can be removed with its folder.
    static func rawNames(in folder: borrowing Descriptor) throws(UpstreamError) -> [[CChar]] {
        // fdopendir takes over the descriptor it is given: hand it a duplicate.
        let duplicate = dup(folder.raw)
        guard duplicate >= 0, let handle = fdopendir(duplicate) else {
            let code = errno
            if duplicate >= 0 { close(duplicate) }
            throw error(code)
        }
        defer { closedir(handle) }
        var names: [[CChar]] = []
        while let entry = readdir(handle) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                let bytes = raw.bindMemory(to: CChar.self)
                return Array(bytes.prefix { $0 != 0 }) + [0]
            }
            if name != [46, 0] && name != [46, 46, 0] { names.append(name) }
        }
        return names
    }

    /// The names in an open folder a client can address: valid UTF-8
    /// already in NFC (what a request path normalises to), and not one of
    /// our own files in progress.
    static func names(in folder: borrowing Descriptor) throws(UpstreamError) -> [String] {
        try rawNames(in: folder).compactMap { raw in
            guard let name = String(validating: raw.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self), !name.hasPrefix(temporaryPrefix),
                  DAVPath.isNFC(name) else { return nil }
            return name
        }
    }

    /// A fresh hidden name for a file or folder in progress.
    static func temporaryName() -> String {
        UniqueName.make(String(temporaryPrefix.dropLast()))
    }
}
