import CResolveBeneath
import Foundation
import ProviderCore

#if canImport(Glibc)
import Glibc
#endif

/// An open file descriptor, closed when it goes out of scope.
struct Descriptor: ~Copyable {
    let raw: Int32

    /// Takes ownership of `raw`, or throws the store's error for `errno`.
    init(_ raw: Int32, or mapping: (Int32) -> UpstreamError = DirectoryStore.error) throws(UpstreamError) {
        guard raw >= 0 else { throw mapping(errno) }
        self.raw = raw
    }

    deinit { close(raw) }
}

/// The open folder holding a path's last name, and that name.
struct ParentFolder: ~Copyable {
    let folder: Descriptor
    let name: String
}

/// How the directory store reaches anything in its folder: every path is
/// resolved by the kernel from a descriptor of the root with
/// `RESOLVE_BENEATH` (openat2(2)), and the last name of a path is then
/// created, renamed, linked or removed with the `*at` calls on its parent's
/// descriptor. No path string is ever checked first and opened later, so a
/// symbolic link swapped in between cannot lead out of the root.
///
/// The policy for symbolic links inside the folder (README, "Symbolic links
/// in a folder upstream"):
/// - a link whose target, read from the link's own folder, stays beneath the
///   root is followed: it is listed and served as what it points to;
/// - a link that leaves the root (an absolute link, or `..` above the root)
///   is not part of the share: hidden from listings, 404 when named, and
///   nothing is ever read, written, listed or created through it;
/// - a link to a folder that contains it (a cycle) is hidden, so a client
///   walking the tree cannot loop forever;
/// - DELETE, MOVE and an overwriting PUT act on a link itself, never on what
///   it points to (as `rm` and `mv` do).
/// Sockets, FIFOs and devices are never part of the share either.
extension DirectoryStore {
    /// The root folder, opened for one operation (so a replaced root folder
    /// is seen at once, and nothing stays open between operations).
    func openRoot() throws(UpstreamError) -> Descriptor {
        try Descriptor(Glibc.open(root.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC))
    }

    /// `path` below the root as the kernel reads it: names joined by `/`,
    /// `.` for the root itself. The names are checked once more here
    /// (the server normalises paths; this is the last line of defence).
    static func relative(_ path: ItemPath) throws(UpstreamError) -> String {
        for name in path {
            guard !name.isEmpty, name != ".", name != "..", !name.contains("/"), !name.contains("\0") else {
                throw UpstreamError.io("invalid name \(name.debugDescription)")
            }
        }
        return path.isEmpty ? "." : path.joined(separator: "/")
    }

    /// Opens `path` beneath the root, following links only while they stay
    /// inside. A path that would leave the root answers `.notFound`, like a
    /// name that is not there: from a client's side it is not.
    func open(_ path: ItemPath, below root: borrowing Descriptor, flags: Int32) throws(UpstreamError) -> Descriptor {
        let relative = try Self.relative(path)
        return try Descriptor(davgate_open_beneath(root.raw, relative, flags, 0)) { code in
            code == EXDEV || code == ELOOP ? .notFound : Self.error(code)
        }
    }

    /// The folder holding the last name of `path`, opened for the `*at`
    /// calls. A parent that is missing, a file, or leads out of the root is
    /// the same failure for a write: `.conflict` (409, "create the parent first").
    func openParent(of path: ItemPath, below root: borrowing Descriptor) throws(UpstreamError) -> ParentFolder {
        guard let name = path.last else { throw UpstreamError.io("the root has no parent") }
        _ = try Self.relative([name])
        let relative = try Self.relative(Array(path.dropLast()))
        let folder = try Descriptor(davgate_open_beneath(root.raw, relative, O_RDONLY | O_DIRECTORY, 0)) { code in
            switch code {
            case ENOENT, ENOTDIR, EXDEV, ELOOP: .conflict
            default: Self.error(code)
            }
        }
        return ParentFolder(folder: folder, name: name)
    }

    /// What a client sees at `name` inside the open folder `folder` (reached
    /// as `path` from the root): the entry itself for a file or folder, the
    /// entry of its target for a link that stays inside, nil for anything
    /// that is not part of the share (see the policy above).
    func visibleEntry(_ name: String, in folder: borrowing Descriptor, at path: ItemPath,
                      below root: borrowing Descriptor, ancestors: inout AncestorFolders) -> UpstreamEntry? {
        var st = Glibc.stat()
        guard fstatat(folder.raw, name, &st, AT_SYMLINK_NOFOLLOW) == 0 else { return nil }
        switch st.st_mode & S_IFMT {
        case S_IFREG, S_IFDIR:
            return Self.entry(name: name, st)
        case S_IFLNK:
            guard let target = try? open(path, below: root, flags: DAVGATE_O_PATH),
                  fstat(target.raw, &st) == 0 else { return nil }
            let kind = st.st_mode & S_IFMT
            if kind == S_IFDIR, ancestors.contains(st, store: self, root: root) { return nil }
            return kind == S_IFREG || kind == S_IFDIR ? Self.entry(name: name, st) : nil
        default:
            return nil
        }
    }
}

/// The folders a path passes through (the root included), by device and
/// inode: a link to one of them is a cycle. Found only when a link to a
/// folder needs them; a value, so a recursive copy hands each level its own.
struct AncestorFolders {
    let folder: ItemPath
    private var found: Set<FileIdentity>?
    private var added: Set<FileIdentity> = []

    struct FileIdentity: Hashable {
        var device: UInt
        var inode: UInt
        init(_ st: stat) {
            device = UInt(st.st_dev)
            inode = UInt(st.st_ino)
        }
    }

    init(of folder: ItemPath) {
        self.folder = folder
    }

    /// Whether `st` is one of the folders on the way to `folder` (inclusive)
    /// or one added since.
    mutating func contains(_ st: stat, store: DirectoryStore, root: borrowing Descriptor) -> Bool {
        let identity = FileIdentity(st)
        if added.contains(identity) { return true }
        if found == nil {
            var identities = Set<FileIdentity>()
            for depth in 0...folder.count {
                var ancestor = Glibc.stat()
                if let fd = try? store.open(Array(folder.prefix(depth)), below: root, flags: DAVGATE_O_PATH), fstat(fd.raw, &ancestor) == 0 {
                    identities.insert(FileIdentity(ancestor))
                }
            }
            found = identities
        }
        return found!.contains(identity)
    }

    /// These ancestors and one more folder (one level down a copy, or a
    /// folder the copy made), so a link to it is not followed into it.
    func adding(_ st: stat) -> AncestorFolders {
        var next = self
        next.added.insert(FileIdentity(st))
        return next
    }
}
