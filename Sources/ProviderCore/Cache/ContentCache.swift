import Foundation

/// The local content of materialized items: one file per item, named by the
/// item's id and never by a client path, so no client string ever reaches the
/// file system here. Writes in progress live in `tmp/` and only become
/// visible by rename, so a crash or a cut connection leaves nothing partial.
struct ContentCache: Sendable {
    let folder: URL
    /// `folder` as a path, kept: building a file URL costs more than the
    /// read of a small file it names.
    let folderPath: String
    let temporary: URL
    private let temporaryPath: String

    /// Acknowledged writes waiting for their upload (write-back): kept
    /// across restarts, each named in a journal row.
    let outbox: URL
    private let outboxFolderPath: String
    private let outboxSync: GroupSync

    init(folder: URL) throws {
        self.folder = folder
        folderPath = folder.path
        temporary = folder.appendingPathComponent("tmp", isDirectory: true)
        outbox = folder.appendingPathComponent("outbox", isDirectory: true)
        temporaryPath = temporary.path
        outboxFolderPath = outbox.path
        outboxSync = GroupSync { [outbox] in try Self.sync(outbox) }
        let fm = FileManager.default
        try fm.createDirectory(at: temporary, withIntermediateDirectories: true)
        try fm.createDirectory(at: outbox, withIntermediateDirectories: true)
        // The owner's alone, whatever the files' own modes: a directory
        // upstream shares inodes with the cache (hard links) and gives
        // them the modes its other readers need.
        guard chmod(folder.path, 0o700) == 0 else {
            throw ProviderError.local("cannot make the cache folder \(folder.path) private: \(String(cString: strerror(errno)))")
        }
        // Leftovers of a crash are partial by definition.
        for name in (try? fm.contentsOfDirectory(atPath: temporary.path)) ?? [] {
            try? fm.removeItem(at: temporary.appendingPathComponent(name))
        }
    }

    func file(for id: Int64) -> URL {
        URL(fileURLWithPath: path(for: id), isDirectory: false)
    }

    func path(for id: Int64) -> String {
        folderPath + "/" + String(id, radix: 16)
    }

    func hasFile(for id: Int64) -> Bool {
        access(path(for: id), F_OK) == 0
    }

    /// A fresh name for a write or fetch in progress.
    func temporaryFile(_ purpose: String) -> URL {
        URL(fileURLWithPath: temporaryPath + "/" + UniqueName.make(purpose), isDirectory: false)
    }

    /// Makes completed bytes the item's content, atomically.
    func install(_ temporaryFile: URL, for id: Int64) throws {
        try install(path: temporaryFile.path, for: id)
    }

    private func install(path temporaryFile: String, for id: Int64) throws {
        guard rename(temporaryFile, path(for: id)) == 0 else {
            throw ProviderError.local("cannot install cache file: \(String(cString: strerror(errno)))")
        }
    }

    func outboxFile(_ name: String) -> URL {
        URL(fileURLWithPath: outboxPath(name), isDirectory: false)
    }

    /// The path of the outbox file `name`, for the system calls that take
    /// one (a URL costs more to build than they take to run).
    private func outboxPath(_ name: String) -> String {
        outboxFolderPath + "/" + name
    }

    /// A fresh name in the outbox for a write-back body to be written to,
    /// so that it need not be moved there: a rename from tmp/ locks both
    /// folders, and on a disk whose inode allocation is slow every other
    /// writer spins on those locks (issue 14's small-PUT profile). Until a
    /// journal row names it the file is a leftover like any in tmp/: the
    /// writer discards it, or the next start does (`removeOutbox(except:)`).
    func outboxWriteFile() -> URL {
        outboxFile(UniqueName.make("w"))
    }

    /// Takes a complete file written in the outbox (every write-back body
    /// that is not kept in the journal is: `outboxWriteFile`), or the name
    /// of one not made (a body in the journal), as an outbox file; returns
    /// its name there.
    /// `durable`: the file was fsynced and its name is made durable too
    /// (one folder fsync for every writer waiting); otherwise the journal
    /// holds the bytes and there is no file yet (`writeOutbox` makes it for
    /// the upload).
    func adoptInOutbox(_ file: URL, durable: Bool) async throws -> String {
        let path = file.path, folder = outboxFolderPath + "/"
        guard path.hasPrefix(folder), case let name = path.dropFirst(folder.utf8.count), !name.contains("/") else {
            throw ProviderError.local("a write-back body must be written in the outbox (Provider.newWriteFile), not at \(path)")
        }
        if durable { try await outboxSync.sync() }
        return String(name)
    }

    /// Whether the outbox file `name` holds exactly `content`.
    func outboxHolds(_ name: String, _ content: Data) -> Bool {
        FileManager.default.contents(atPath: outboxPath(name)) == content
    }

    /// Makes the outbox file `name` of a small write's bytes, until now in
    /// its journal row alone, for its upload: not fsynced (the row keeps
    /// them; `recoverJournal` removes what a crash left of the file).
    func writeOutbox(_ name: String, content: Data, modified: Date) throws {
        try createFile(outboxPath(name), holding: content, modified: modified)
    }

    /// Makes a small write's bytes, kept in its journal row, the item's
    /// content: a new file in tmp/ renamed over the item's, not fsynced.
    func installJournaled(_ content: Data, modified: Date, for id: Int64) throws {
        let temporary = temporaryPath + "/" + UniqueName.make("journaled")
        try createFile(temporary, holding: content, modified: modified)
        do {
            try install(path: temporary, for: id)
        } catch {
            unlink(temporary)
            throw error
        }
    }

    /// Makes the outbox file `name` the item's content too (a hard link:
    /// the outbox keeps the bytes to upload whatever the cache does next).
    /// An item that had no content file (`new`: just created) gets the link
    /// straight under its name, one system call; one that may have one gets
    /// it by a second name and a rename, which replaces the old content
    /// atomically.
    func installFromOutbox(_ name: String, for id: Int64, new: Bool = false) throws {
        if new {
            if link(outboxPath(name), path(for: id)) == 0 { return }
            guard errno == EEXIST else { throw linkFailed(name) }
        }
        try install(path: try outboxLink(name), for: id)
    }

    /// The error of a failed link of the outbox file `name` (errno).
    private func linkFailed(_ name: String) -> ProviderError {
        .local("cannot link the journaled write \(name) into the cache: \(String(cString: strerror(errno)))")
    }

    /// A second name in tmp/ for the outbox file `name`, for a caller that
    /// consumes the file it is handed (renames it into the cache) while a
    /// journal row still names the outbox file: a crash before that row goes
    /// then finds its file where the row says.
    func outboxLink(_ name: String) throws -> String {
        let staging = temporaryPath + "/" + UniqueName.make("link")
        guard link(outboxPath(name), staging) == 0 else { throw linkFailed(name) }
        return staging
    }

    /// Whether the outbox still has the file `name`.
    func outboxHas(_ name: String) -> Bool {
        access(outboxPath(name), F_OK) == 0
    }

    /// Whether the item's cache file is the outbox file `name` (same inode).
    func holds(_ name: String, for id: Int64) -> Bool {
        var a = stat(), b = stat()
        return lstat(path(for: id), &a) == 0 && lstat(outboxPath(name), &b) == 0 && a.st_ino == b.st_ino
    }

    /// Outbox files no journal row names: leftovers of a crash between the
    /// move and the journal's commit.
    func removeOutbox(except kept: Set<String>) {
        for name in (try? FileManager.default.contentsOfDirectory(atPath: outbox.path)) ?? [] where !kept.contains(name) {
            unlink(outboxPath(name))
        }
    }

    func removeOutbox(_ names: [String]) {
        for name in names { unlink(outboxPath(name)) }
    }

    /// fsync(2) of a file or folder that must be there.
    static func sync(_ url: URL) throws {
        guard try fsync(path: url.path) else { throw ProviderError.local("cannot sync \(url.path): it is gone") }
    }

    func remove(_ ids: [Int64]) {
        for id in ids { unlink(file(for: id).path) }
    }

    /// Removes the content files of items the index no longer holds and the
    /// outbox files no journal row names any more, on the blocking pool,
    /// without the caller waiting (its answer goes out meanwhile). Safe to
    /// leave for later because nothing can reach them: item ids are never
    /// reused, outbox names are unique. An unlink that frees an inode is
    /// the slow part of removing a file (its blocks are freed, and
    /// discarded on an SSD mounted so): a DELETE of 10,000 files spent most
    /// of its time here, on the event loop, answering after all of them
    /// (issue 14's profile). What a stop or a crash leaves goes at the
    /// next start: outbox files in `recoverJournal`, content files in
    /// `removeOrphanedContent`.
    func removeLater(items ids: [Int64] = [], outbox names: [String] = []) {
        guard !ids.isEmpty || !names.isEmpty else { return }
        blockingLater {
            remove(ids)
            removeOutbox(names)
        }
    }

    func discard(_ temporaryFile: URL) {
        unlink(temporaryFile.path)
    }

    /// Puts a file moved aside back as the item's content, unless a newer
    /// one was installed meanwhile (then the aside one is stale and goes).
    func restore(_ aside: URL, for id: Int64) {
        link(aside.path, file(for: id).path)
        unlink(aside.path)
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
        Self.usage(of: folder)
    }

    /// The same for a cache folder nobody opened: only reads it (a running
    /// server's cache must not be touched by `davgate status --offline`).
    static func usage(of folder: URL) -> (bytes: Int64, files: Int) {
        var bytes: Int64 = 0, files = 0
        // An outbox file and the cache file of a dirty item are one inode.
        var seen = Set<UInt>()
        for folder in [folder, folder.appendingPathComponent("tmp"), folder.appendingPathComponent("outbox")] {
            for name in (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? [] {
                var st = stat()
                guard lstat(folder.appendingPathComponent(name).path, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG,
                      seen.insert(UInt(st.st_ino)).inserted else { continue }
                bytes += Int64(st.st_blocks) * 512
                files += 1
            }
        }
        return (bytes, files)
    }
}
