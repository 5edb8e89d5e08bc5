import Crypto
import DurableFiles
import Foundation
import NIOConcurrencyHelpers
import ProviderCore

#if canImport(Glibc)
import Glibc
#endif

/// The folders of Nextcloud chunked uploads on the gateway's disk
/// (`ChunkedUploadExchange`): one per user and upload id, named by a hash of
/// both so no client string reaches the file system, holding one file per
/// chunk under the chunk's own name, which must be a number (Nextcloud's
/// chunking v2) or `FIRST-LAST` byte offsets (rclone's). Each chunk is
/// fsynced before its PUT is answered. Folders nobody added to for
/// `expiry` are removed, looked for at most every ten minutes when the
/// uploads tree is used.
public final class ChunkFolders: Sendable {
    public let root: URL
    public let expiry: TimeInterval
    private let lastSweep = NIOLockedValueBox(Date.distantPast)

    public init(root: URL, expiry: TimeInterval = 86_400) throws {
        self.root = root
        self.expiry = expiry
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        // A join a crash cut short: its chunks go back to their upload.
        for name in (try? FileManager.default.contentsOfDirectory(atPath: root.path)) ?? [] {
            guard let mark = name.range(of: Self.joining) else { continue }
            let original = root.appendingPathComponent(String(name[..<mark.lowerBound])).path
            if access(original, F_OK) != 0 { rename(root.appendingPathComponent(name).path, original) }
        }
    }

    private static let joining = ".joining-"
    /// Where a folder keeps the length its client announced
    /// (`OC-Total-Length`), checked when the chunks are joined.
    private static let totalFile = ".total"

    func folder(user: String, id: String) -> URL {
        let digest = SHA256.hash(data: Data((user + "\0" + id).utf8))
        return root.appendingPathComponent(digest.prefix(16).hexEncoded(), isDirectory: true)
    }

    func exists(_ folder: URL) -> Bool {
        var st = stat()
        return lstat(folder.path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFDIR
    }

    /// Makes the folder; false when it exists. Blocking.
    func create(_ folder: URL) throws -> Bool {
        guard mkdir(folder.path, 0o700) == 0 else {
            if errno == EEXIST { return false }
            throw ProviderError.local("cannot make an upload folder: \(String(cString: strerror(errno)))")
        }
        try AtomicFile.syncFolder(root.path)
        return true
    }

    /// A chunk's name as Nextcloud (`00042`) or rclone
    /// (`000000000000000-000000010485759`) sends it.
    static func isChunkName(_ name: String) -> Bool {
        let parts = name.split(separator: "-", omittingEmptySubsequences: false)
        return (1...2).contains(parts.count) && parts.allSatisfy { (1...15).contains($0.count) && $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }
    }

    /// The chunks present, by name, with their sizes.
    func chunks(in folder: URL) -> [(name: String, size: Int64)] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return names.filter(Self.isChunkName).compactMap { name in
            var st = stat()
            guard lstat(folder.appendingPathComponent(name).path, &st) == 0 else { return nil }
            return (name, Int64(st.st_size))
        }.sorted { $0.name < $1.name }
    }

    /// Moves a received, synced chunk into the folder under its name, and
    /// marks the folder as used now (its expiry counts from the last chunk).
    /// Returns whether a chunk of that name was replaced.
    func install(_ file: URL, as name: String, in folder: URL) throws -> Bool {
        let target = folder.appendingPathComponent(name)
        let replaced = access(target.path, F_OK) == 0
        guard rename(file.path, target.path) == 0 else {
            throw ProviderError.local("cannot keep a chunk: \(String(cString: strerror(errno)))")
        }
        try AtomicFile.syncFolder(folder.path)
        utimes(folder.path, nil)
        return replaced
    }

    /// Blocking (a folder of gigabytes).
    func remove(_ folder: URL) {
        try? FileManager.default.removeItem(at: folder)
    }

    /// Takes the folder for the one `MOVE .file` that joins it: renamed
    /// aside, so a chunk sent meanwhile or a second MOVE finds no upload
    /// rather than having its bytes dropped with the folder. Nil when the
    /// folder is not there (joined, being joined, deleted or expired).
    func claim(_ folder: URL) -> URL? {
        let claimed = URL(fileURLWithPath: folder.path + Self.joining + UUID().uuidString, isDirectory: true)
        guard rename(folder.path, claimed.path) == 0 else { return nil }
        // Its expiry counts from now: a rename leaves the folder's time.
        utimes(claimed.path, nil)
        return claimed
    }

    /// Gives a claimed folder back after a MOVE that stored nothing, so
    /// the client can send what was missing and MOVE again. When the name
    /// was taken meanwhile (a new MKCOL), the claimed chunks are left to
    /// expire rather than deleted.
    func release(_ claimed: URL, to folder: URL) {
        _ = rename(claimed.path, folder.path)
    }

    /// Records the length the client announced for the whole file.
    func announce(total: Int64, in folder: URL) throws {
        try Data(String(total).utf8).write(to: folder.appendingPathComponent(Self.totalFile))
    }

    /// The length announced for the whole file, if any.
    func announcedTotal(in folder: URL) -> Int64? {
        (try? String(contentsOf: folder.appendingPathComponent(Self.totalFile), encoding: .utf8)).flatMap { Int64($0) }
    }

    /// Why a folder's chunks do not make one file.
    struct NotWhole: Error, CustomStringConvertible {
        let description: String
    }

    /// Writes the chunks one after the other into `file` (created), in
    /// their numbers' order, or checked to tile the file from byte 0 when
    /// named by offsets; returns the byte count and SHA-1. Blocking.
    func assemble(_ folder: URL, into file: URL) throws -> (count: Int64, sha1: String) {
        let chunks = try ordered(chunks(in: folder))
        let target = open(file.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard target >= 0 else { throw ProviderError.local("cannot create the assembled file: \(String(cString: strerror(errno)))") }
        defer { close(target) }
        var hash = Insecure.SHA1()
        var total: Int64 = 0
        let step = 1 << 20
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: step, alignment: 16)
        defer { buffer.deallocate() }
        for chunk in chunks {
            let source = open(folder.appendingPathComponent(chunk.name).path, O_RDONLY | O_CLOEXEC)
            guard source >= 0 else { throw NotWhole(description: "the chunk \(chunk.name) vanished") }
            defer { close(source) }
            while true {
                let got = read(source, buffer.baseAddress, step)
                if got < 0 && errno == EINTR { continue }
                guard got >= 0 else { throw ProviderError.local("cannot read a chunk: \(String(cString: strerror(errno)))") }
                if got == 0 { break }
                hash.update(bufferPointer: UnsafeRawBufferPointer(rebasing: buffer[0..<got]))
                var written = 0
                while written < got {
                    let n = write(target, buffer.baseAddress! + written, got - written)
                    if n < 0 {
                        if errno == EINTR { continue }
                        if errno == ENOSPC || errno == EDQUOT { throw ProviderError.localNoSpace }
                        throw ProviderError.local("cannot write the assembled file: \(String(cString: strerror(errno)))")
                    }
                    written += n
                }
                total += Int64(got)
            }
        }
        guard fsync(target) == 0 else { throw ProviderError.local("cannot sync the assembled file: \(String(cString: strerror(errno)))") }
        return (total, hash.finalize().hexEncoded())
    }

    /// The chunks in file order: numbered ones by number; offset-named ones
    /// by offset, each starting where the one before ended, from 0.
    private func ordered(_ chunks: [(name: String, size: Int64)]) throws -> [(name: String, size: Int64)] {
        guard !chunks.isEmpty else { throw NotWhole(description: "no chunks were uploaded") }
        let spans = chunks.map { chunk -> (first: Int64, last: Int64)? in
            let parts = chunk.name.split(separator: "-")
            guard parts.count == 2, let first = Int64(parts[0]), let last = Int64(parts[1]) else { return nil }
            return (first, last)
        }
        if spans.allSatisfy({ $0 == nil }) {
            // Numbered: one chunk per number, none missing.
            let numbered = chunks.map { (chunk: $0, number: Int64($0.name)!) }.sorted { $0.number < $1.number }
            guard numbered[0].number <= 1 else {
                throw NotWhole(description: "the chunks numbered \(numbered[0].number == 2 ? "1" : "1 to \(numbered[0].number - 1)") were never uploaded")
            }
            for (previous, next) in zip(numbered, numbered.dropFirst()) where next.number != previous.number + 1 {
                throw NotWhole(description: next.number == previous.number
                               ? "the chunks \(previous.chunk.name) and \(next.chunk.name) have the same number"
                               : "the chunks numbered \(previous.number + 1) to \(next.number - 1) were never uploaded")
            }
            return numbered.map(\.chunk)
        }
        guard spans.allSatisfy({ $0 != nil }) else { throw NotWhole(description: "numbered and offset-named chunks are mixed") }
        let sorted = zip(chunks, spans.map { $0! }).sorted { $0.1.first < $1.1.first }
        var next: Int64 = 0
        for (chunk, span) in sorted {
            guard span.first == next else {
                throw NotWhole(description: span.first > next ? "bytes \(next)-\(span.first - 1) were never uploaded"
                                                              : "the chunk \(chunk.name) overlaps the one before")
            }
            guard span.last >= span.first, chunk.size == span.last - span.first + 1 else {
                throw NotWhole(description: "the chunk \(chunk.name) holds \(chunk.size) bytes, not the \(span.last - span.first + 1) its name says")
            }
            next = span.last + 1
        }
        return sorted.map(\.0)
    }

    /// Removes folders nobody added to for `expiry`, at most every ten minutes.
    func sweepIfDue(now: Date = Date()) {
        let due = lastSweep.withLockedValue { last in
            guard now.timeIntervalSince(last) >= 600 else { return false }
            last = now
            return true
        }
        if due { expire(before: now.addingTimeInterval(-expiry)) }
    }

    /// Removes the folders last used before `cutoff`; returns how many.
    @discardableResult
    func expire(before cutoff: Date) -> Int {
        var removed = 0
        for name in (try? FileManager.default.contentsOfDirectory(atPath: root.path)) ?? [] {
            let folder = root.appendingPathComponent(name)
            var st = stat()
            guard lstat(folder.path, &st) == 0, TimeInterval(st.st_mtim.tv_sec) < cutoff.timeIntervalSince1970 else { continue }
            remove(folder)
            removed += 1
        }
        return removed
    }
}
