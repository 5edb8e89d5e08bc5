import Foundation

/// One deleted item in a domain's trash, as its sidecar upstream records it
/// (the same JSON in the index's row), so the trash can be read back from
/// the upstream alone by a gateway that never saw the DELETE.
public struct TrashEntry: Sendable, Equatable, Codable {
    /// The entry's name in the trash folder (`NAME.dMILLISECONDS`), which
    /// the WebDAV view and the CLI use to address it.
    public var name: String
    /// Where the item was, below the domain's root.
    public var originalPath: ItemPath
    public var isFolder: Bool
    /// Bytes of the file, or of the files the index knew below the folder.
    public var size: Int64
    public var deletedAt: Date
    /// The user whose DELETE it was; nil when not known.
    public var deletedBy: String?

    public init(name: String, originalPath: ItemPath, isFolder: Bool, size: Int64, deletedAt: Date, deletedBy: String?) {
        self.name = name
        self.originalPath = originalPath
        self.isFolder = isFolder
        self.size = size
        self.deletedAt = deletedAt
        self.deletedBy = deletedBy
    }

    /// The name the item had.
    public var originalName: String { originalPath.last ?? name }

    /// The sidecar's bytes.
    func encoded() throws -> Data {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .millisecondsSince1970
        encoder.outputFormatting = [.sortedKeys]
        return try encoder.encode(self)
    }

    static func decoded(_ data: Data) throws -> TrashEntry {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .millisecondsSince1970
        return try decoder.decode(TrashEntry.self, from: data)
    }
}
