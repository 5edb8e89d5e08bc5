import CResolveBeneath
import Foundation
import ProviderCore

#if canImport(Glibc)
import Glibc
#endif

/// The embedded default upstream: a folder on the local disk.
///
/// Nothing outside the folder can be reached through it, whatever links
/// inside say and whatever races with them: see `DirectoryStore+beneath.swift`.
///
/// A store on the local disk may take shortcuts the core cannot see: content
/// moves between the cache and the folder by hard link when both are on one
/// file system, so materializing a file and uploading a PUT copy nothing.
/// Every write into the folder goes through a hidden temporary name and a
/// rename, so a reader of the folder never sees half a file.
public struct DirectoryStore: UpstreamStore {
    public let root: URL
    /// Permission bits of new files and folders (`upstream_file_mode`,
    /// `upstream_folder_mode`), exact whatever the process's umask: another
    /// program serving the same folder (Samba, nginx, a backup job under
    /// another user) must be able to read what arrives here. The cache's
    /// copy stays private all the same: its folder is the owner's alone.
    public let fileMode: mode_t
    public let folderMode: mode_t
    public var displayName: String { "file:\(root.path)" }

    /// One name of the path within 255 bytes (NAME_MAX), the whole path
    /// within what one openat2 call takes (PATH_MAX less its NUL).
    public var nameRules: NameRules { NameRules(maxNameBytes: Int(NAME_MAX), maxPathBytes: Int(PATH_MAX) - 1) }

    /// Names of our own in-progress files, hidden from listings.
    static let temporaryPrefix = ".davgate-tmp-"

    public init(root: URL, fileMode: mode_t = 0o644, folderMode: mode_t = 0o755) {
        self.root = root.standardizedFileURL
        self.fileMode = fileMode
        self.folderMode = folderMode
    }

    public func list(_ folder: ItemPath) async throws -> [UpstreamEntry] {
        try await blocking {
            let top = try openRoot()
            let dir = try open(folder, below: top, flags: O_RDONLY | O_DIRECTORY)
            var ancestors = AncestorFolders(of: folder)
            return try Self.names(in: dir).compactMap { name in
                visibleEntry(name, in: dir, at: folder + [name], below: top, ancestors: &ancestors)
            }
        }
    }

    public func stat(_ path: ItemPath) async throws -> UpstreamEntry? {
        try await blocking {
            let top = try openRoot()
            guard let name = path.last else { return try Self.entry(name: "", of: try open([], below: top, flags: DAVGATE_O_PATH)) }
            let parent: ParentFolder
            do {
                parent = try openParent(of: path, below: top)
            } catch UpstreamError.conflict {
                return nil   // no folder to hold it, so nothing there
            }
            var ancestors = AncestorFolders(of: Array(path.dropLast()))
            return visibleEntry(name, in: parent.folder, at: path, below: top, ancestors: &ancestors)
        }
    }

    public func fetch(_ path: ItemPath, range: ClosedRange<Int64>?, into destination: URL,
                      observer: FetchObserver) async throws -> UpstreamEntry {
        let name = path.last ?? ""
        // O_NONBLOCK: opening a FIFO planted in the folder must not hang.
        let (source, entry) = try await blocking {
            let top = try openRoot()
            let source = try open(path, below: top, flags: O_RDONLY | O_NONBLOCK)
            let entry = try Self.entry(name: name, of: source)
            guard !entry.isFolder else { throw UpstreamError.conflict }
            return (OpenFile(source), entry)
        }
        if let range {
            try await observer.began(entry)
            try await blocking {
                let output = try Descriptor(Glibc.open(destination.path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o600))
                try source.withDescriptor { fd in
                    try Self.pump(fd.raw, output.raw, range)
                    // Rewritten in place during the copy: the bytes may mix two versions.
                    guard try Self.entry(name: name, of: fd).version == entry.version else { throw UpstreamError.versionMismatch }
                }
            }
            observer.progressed(Int64(range.count))
            return entry
        }
        let linked = try await blocking {
            try source.withDescriptor { fd in
                let folder = try Descriptor(Glibc.open(destination.deletingLastPathComponent().path, O_RDONLY | O_DIRECTORY | O_CLOEXEC))
                if try Self.link(fd, as: destination.lastPathComponent, in: folder.raw) { return entry }
                try Self.writeCopy(of: fd, named: destination.lastPathComponent, in: folder, mode: 0o600)
                // The entry of what was copied, not of what was listed.
                return try Self.entry(name: name, of: fd)
            }
        }
        do {
            try await observer.began(linked)
        } catch {
            unlink(destination.path)
            throw error
        }
        observer.progressed(linked.size)
        return linked
    }

    public func upload(_ file: URL, to path: ItemPath, expecting: UpstreamExpectation, progress: UploadProgress?) async throws -> UpstreamEntry {
        let entry = try await blocking {
            let top = try openRoot()
            let target = try openParent(of: path, below: top)
            let (parent, name) = (target.folder.raw, target.name)
            try check(expecting, name, in: target.folder, at: path, below: top)
            let mode = Self.existingFileMode(name, in: target.folder) ?? fileMode
            let temporary = Self.temporaryName()
            let local = try Descriptor(Glibc.open(file.path, O_RDONLY | O_CLOEXEC))
            if try Self.link(local, as: temporary, in: parent) {
                // One inode for the cache and the folder: its mode serves
                // both. Its bytes must be on the disk before the rename
                // publishes it, as a copy's are (`writeCopy`): a small
                // write-back body's outbox file was never fsynced (its
                // journal row held the bytes), the row goes once the upload
                // is recorded, and a power loss then left an empty file
                // upstream with nothing to repair it from. For a file on
                // the disk already the fsync costs little.
                guard fsync(local.raw) == 0, fchmodat(parent, temporary, mode, 0) == 0 else {
                    let code = errno
                    unlinkat(parent, temporary, 0)
                    throw Self.error(code)
                }
            } else {
                try Self.writeCopy(of: local, named: temporary, in: target.folder, mode: mode)
            }
            guard renameat(parent, temporary, parent, name) == 0 else {
                let code = errno
                unlinkat(parent, temporary, 0)
                throw Self.error(code)
            }
            // rename(2) does nothing when both names are links to one inode
            // (the upstream already holds this very file, as after an upload
            // cut off before davgate recorded it): the temporary name stays.
            unlinkat(parent, temporary, 0)
            Self.syncFolder(target.folder)
            var st = Glibc.stat()
            guard fstatat(parent, name, &st, AT_SYMLINK_NOFOLLOW) == 0 else { throw Self.error(errno) }
            return Self.entry(name: name, st)
        }
        // A link or a copy: all at once, as far as anyone watching can tell.
        progress?.add(entry.size)
        return entry
    }

    public func makeFolder(_ path: ItemPath) async throws -> UpstreamEntry {
        try await blocking {
            let top = try openRoot()
            let parent: ParentFolder
            do {
                parent = try openParent(of: path, below: top)
            } catch UpstreamError.conflict {
                throw UpstreamError.notFound   // the contract's word for mkdir's ENOENT
            }
            return try makeFolder(parent.name, in: parent.folder)
        }
    }

    public func delete(_ path: ItemPath) async throws {
        try await blocking {
            let top = try openRoot()
            let parent = try openParent(of: path, below: top)
            try Self.removeTree(Array(parent.name.utf8CString), in: parent.folder)
            Self.syncFolder(parent.folder)
        }
    }

    public func move(_ source: ItemPath, to destination: ItemPath) async throws -> UpstreamEntry {
        try await blocking {
            let top = try openRoot()
            let from = try openParent(of: source, below: top)
            let to = try openParent(of: destination, below: top)
            try Self.renameNoReplace(from.name, in: from.folder, to: to.name, in: to.folder)
            Self.syncFolder(from.folder)
            Self.syncFolder(to.folder)
            var ancestors = AncestorFolders(of: Array(destination.dropLast()))
            if let entry = visibleEntry(to.name, in: to.folder, at: destination, below: top, ancestors: &ancestors) { return entry }
            // A link moved to where it leads out of the root: the link itself,
            // which the next listing hides.
            var st = Glibc.stat()
            guard fstatat(to.folder.raw, to.name, &st, AT_SYMLINK_NOFOLLOW) == 0 else { throw Self.error(errno) }
            return Self.entry(name: to.name, st)
        }
    }

    public func copy(_ source: ItemPath, to destination: ItemPath, recursive: Bool) async throws -> UpstreamEntry {
        try await blocking {
            let top = try openRoot()
            let from = try open(source, below: top, flags: O_RDONLY | O_NONBLOCK)
            let to = try openParent(of: destination, below: top)
            let ancestors = AncestorFolders(of: Array(source.dropLast()))
            let entry = try copyItem(from, at: source, named: to.name, into: to.folder, recursive: recursive, below: top, ancestors: ancestors)
            Self.syncFolder(to.folder)
            return entry
        }
    }

    /// Makes every missing folder on the way to `path`'s last name (the
    /// keep-local store's folders, which mirror the upstream's on demand).
    func makeParents(of path: ItemPath) throws(UpstreamError) {
        let top = try openRoot()
        for depth in 1..<max(path.count, 1) {
            let folder = Array(path.prefix(depth))
            if (try? open(folder, below: top, flags: O_RDONLY | O_DIRECTORY)) != nil { continue }
            let parent = try openParent(of: folder, below: top)
            do {
                _ = try makeFolder(parent.name, in: parent.folder)
            } catch .exists {
                // Made by a concurrent call meanwhile.
            }
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
    /// Anything at the name counts as present for `.absent`, a link leading
    /// out of the root included: it is never silently replaced.
    func check(_ expecting: UpstreamExpectation, _ name: String, in folder: borrowing Descriptor,
               at path: ItemPath, below root: borrowing Descriptor) throws(UpstreamError) {
        switch expecting {
        case .any:
            return
        case .absent:
            var st = Glibc.stat()
            if fstatat(folder.raw, name, &st, AT_SYMLINK_NOFOLLOW) == 0 { throw UpstreamError.versionMismatch }
        case .version(let version):
            guard let current = try? Self.entry(name: name, of: try open(path, below: root, flags: DAVGATE_O_PATH)),
                  current.version == version else {
                throw UpstreamError.versionMismatch
            }
        }
    }

    /// A new folder `name` in `parent` with exactly `folderMode`.
    func makeFolder(_ name: String, in parent: borrowing Descriptor) throws(UpstreamError) -> UpstreamEntry {
        guard mkdirat(parent.raw, name, folderMode) == 0 else { throw Self.error(errno) }
        let made = try Descriptor(openat(parent.raw, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC))
        guard fchmod(made.raw, folderMode) == 0 else { throw Self.error(errno) }
        Self.syncFolder(parent)
        return try Self.entry(name: name, of: made)
    }

    /// Renames without ever replacing what is at the destination, atomically
    /// where the file system can (RENAME_NOREPLACE), else checked just before.
    static func renameNoReplace(_ name: String, in from: borrowing Descriptor, to newName: String, in to: borrowing Descriptor) throws(UpstreamError) {
        if davgate_rename_noreplace(from.raw, name, to.raw, newName) == 0 { return }
        guard errno == EINVAL else { throw error(errno) }
        var st = Glibc.stat()
        guard fstatat(to.raw, newName, &st, AT_SYMLINK_NOFOLLOW) != 0 else { throw UpstreamError.exists }
        guard renameat(from.raw, name, to.raw, newName) == 0 else { throw error(errno) }
    }

    /// Copies the open file or folder `source` (reached as `path`) to `name`
    /// in `folder`. A file keeps its permission bits, as `cp` does; folders
    /// get `folderMode`. Members are read as a listing reads them: links
    /// inside the root followed, links out of it and cycles left out.
    func copyItem(_ source: borrowing Descriptor, at path: ItemPath, named name: String, into folder: borrowing Descriptor,
                  recursive: Bool, below root: borrowing Descriptor, ancestors: AncestorFolders) throws(UpstreamError) -> UpstreamEntry {
        var st = Glibc.stat()
        guard fstat(source.raw, &st) == 0 else { throw Self.error(errno) }
        switch st.st_mode & S_IFMT {
        case S_IFREG:
            let temporary = Self.temporaryName()
            try Self.writeCopy(of: source, named: temporary, in: folder, mode: st.st_mode & 0o7777)
            do {
                try Self.renameNoReplace(temporary, in: folder, to: name, in: folder)
            } catch {
                unlinkat(folder.raw, temporary, 0)
                throw error
            }
            guard fstatat(folder.raw, name, &st, AT_SYMLINK_NOFOLLOW) == 0 else { throw Self.error(errno) }
            return Self.entry(name: name, st)
        case S_IFDIR:
            let made = try makeFolder(name, in: folder)
            guard recursive else { return made }
            let target = try Descriptor(openat(folder.raw, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC))
            var madeStat = Glibc.stat()
            fstat(target.raw, &madeStat)
            // Below here, this folder and the copy are ancestors too.
            var inner = ancestors.adding(st).adding(madeStat)
            for member in try Self.names(in: source) {
                let memberPath = path + [member]
                guard visibleEntry(member, in: source, at: memberPath, below: root, ancestors: &inner) != nil,
                      let memberSource = try? open(memberPath, below: root, flags: O_RDONLY | O_NONBLOCK) else { continue }
                _ = try copyItem(memberSource, at: memberPath, named: member, into: target, recursive: true, below: root, ancestors: inner)
            }
            Self.syncFolder(target)
            return made
        default:
            throw UpstreamError.notFound
        }
    }
}

/// A descriptor carried from one blocking step of a fetch to the next,
/// closed when the last step is done with it.
final class OpenFile: Sendable {
    private let raw: Int32

    init(_ descriptor: consuming Descriptor) {
        raw = dup(descriptor.raw)
    }

    deinit { if raw >= 0 { close(raw) } }

    func withDescriptor<T>(_ body: (borrowing Descriptor) throws -> T) throws -> T {
        let copy = try Descriptor(dup(raw))
        return try body(copy)
    }
}
