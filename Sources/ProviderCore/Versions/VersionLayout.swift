import Foundation

/// Where a domain keeps the contents its files held before an overwrite:
/// below davgate's reserved folder upstream, in a folder mirroring the
/// file's own path (`.davgate/versions/docs/report.txt/`), one file a
/// version named by when it was superseded (`1764163668123.v`, in
/// milliseconds). Mirroring the path lets a MOVE of a file or a folder
/// carry the versions with one more move, and lets anyone browsing the
/// upstream find them.
enum VersionLayout {
    static let folder: ItemPath = [TrashLayout.reservedName, "versions"]
    static let suffix = ".v"

    static func folder(of path: ItemPath) -> ItemPath { folder + path }

    static func name(at date: Date) -> String {
        "\(Int64((date.timeIntervalSince1970 * 1000).rounded(.down)))\(suffix)"
    }

    /// The id a version's name carries (its milliseconds), nil for anything else.
    static func id(ofName name: String) -> String? {
        guard name.hasSuffix(suffix) else { return nil }
        let digits = name.dropLast(suffix.count)
        return !digits.isEmpty && digits.allSatisfy({ $0.isASCII && $0.isNumber }) ? String(digits) : nil
    }

    static func path(of id: String, for path: ItemPath) -> ItemPath { folder(of: path) + [id + suffix] }
}

/// One earlier content of a file, or the other side of a conflict.
public struct FileVersion: Sendable, Equatable {
    /// Stable: the moment it was superseded, in milliseconds since 1970;
    /// for a conflict copy, the copy's name in the file's folder.
    public var id: String
    public var size: Int64
    /// When it was superseded (an overwrite or a restore replaced it), or
    /// when the conflict copy was written.
    public var savedAt: Date
    /// A conflict copy (`Provider.keepBoth`): our edit, kept beside the
    /// upstream's when both changed the file. It lives in the folder as a
    /// file of its own and is listed among the versions so that "the other
    /// side" is found where the file's history is.
    public var isConflictCopy: Bool

    public init(id: String, size: Int64, savedAt: Date, isConflictCopy: Bool = false) {
        self.id = id
        self.size = size
        self.savedAt = savedAt
        self.isConflictCopy = isConflictCopy
    }

    /// Whether a path segment may name a version: a stored one's
    /// milliseconds, or a conflict copy's name.
    public static func mayBeID(_ segment: String) -> Bool {
        segment.allSatisfy { $0.isASCII && $0.isNumber } || Provider.conflictOriginal(ofName: segment) != nil
    }
}

/// A version already kept: the file's path and the upstream version it had.
struct VersionKey: Hashable, Sendable {
    let path: ItemPath
    let basis: String
}

/// How many earlier contents a domain keeps of each file
/// (`versions_keep`; 0 keeps none), and how many bytes of them in all
/// (`versions_budget`; nil: no limit), the oldest purged first.
public struct VersionPolicy: Sendable, Equatable {
    public var keep: Int
    public var budget: Int64?
    public init(keep: Int = 10, budget: Int64? = nil) {
        self.keep = keep
        self.budget = budget
    }
}
