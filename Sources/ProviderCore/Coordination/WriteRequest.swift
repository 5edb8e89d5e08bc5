import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// One write of a file's whole content, as a value: where, the fsynced
/// bytes, the facts the server learned while receiving them, and the
/// conditions under which the writer may commit.
public struct WriteRequest: Sendable {
    public var path: ItemPath
    /// A file from `Provider.newWriteFile()`, completely written and fsynced;
    /// the provider owns it from the call on (moves or deletes it). With
    /// `content` there need be no file: the bytes are `content`.
    public var file: URL
    /// The bytes received; the file must hold exactly these.
    public var size: Int64
    /// `SHA1:<hex>` of the bytes, computed while they arrived; recorded in
    /// the same transaction as the content it describes.
    public var checksum: String?
    /// The modification time the client asked for (ownCloud's
    /// `X-OC-Mtime`); nil: the time of the write.
    public var modified: Date?
    public var conditions: WriteConditions
    /// The bytes of a small write (at most `Provider.inlineWriteLimit`),
    /// received without a file: the journal keeps them durable in its
    /// grouped commit, and write-back makes no file of them before their
    /// upload or their first read (`Provider.materializeJournaled`). Making
    /// and linking a file was a quarter of a small PUT's CPU (issue 14).
    public var content: Data?
    /// Write-back: the name `file` was moved to in the outbox, before the
    /// commit (set by the provider).
    var outbox: String?
    /// A lock granted on the written item in the same coordination as the
    /// write (a LOCK of an unmapped URL); its item id is filled in then.
    var lock: Lock?

    public init(path: ItemPath, file: URL, size: Int64, checksum: String? = nil, modified: Date? = nil,
                conditions: WriteConditions, content: Data? = nil) {
        self.path = path
        self.content = content
        self.file = file
        self.size = size
        self.checksum = checksum
        self.modified = modified
        self.conditions = conditions
    }

    /// Checks the file (or `content`) holds `size` bytes and gives the file
    /// its modification time, which is returned: the stores read it from
    /// the inode (a file made later of `content` gets it then), the index
    /// takes the value.
    func stampModificationTime(now: Date = Date()) throws -> Date {
        if let content {
            guard content.count == size else {
                throw ProviderError.local("the write holds \(content.count) bytes, not the \(size) received")
            }
            return modified ?? now
        }
        var st = stat()
        guard lstat(file.path, &st) == 0 else { throw ProviderError.local("the written file vanished") }
        guard Int64(st.st_size) == size else {
            throw ProviderError.local("the written file holds \(st.st_size) bytes, not the \(size) received")
        }
        let modified = modified ?? now
        try setModificationTime(of: file.path, to: modified)
        return modified
    }
}
