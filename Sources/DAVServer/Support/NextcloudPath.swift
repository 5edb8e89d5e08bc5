import DAVProtocol

/// Nextcloud's URL shape, which its clients and rclone's `nextcloud` vendor
/// need: `/remote.php/dav/files/USER/...` is the user's view of this
/// server's root (the domains), and `/remote.php/dav/uploads/USER/ID/...`
/// holds chunked uploads (`ChunkedUploadExchange`). rclone refuses a
/// `nextcloud` remote whose URL lacks `/dav/files/USER`, and sends its
/// chunks to the `uploads` tree beside it.
enum NextcloudPath: Equatable {
    case files(user: String, rest: DAVPath)
    case uploads(user: String, rest: [String])

    static let prefix = ["remote.php", "dav"]

    init?(_ path: DAVPath) {
        let segments = path.segments
        guard segments.count >= 4, Array(segments.prefix(2)) == Self.prefix else { return nil }
        switch segments[2] {
        case "files": self = .files(user: segments[3], rest: path.dropFirst(4))
        case "uploads": self = .uploads(user: segments[3], rest: Array(segments.dropFirst(4)))
        default: return nil
        }
    }

    var user: String {
        switch self {
        case .files(let user, _), .uploads(let user, _): user
        }
    }

    /// A path on this server as `user` names it: in their files tree, the
    /// path it stands for; any other (another user's tree included, which
    /// then names nothing of theirs) as it is.
    static func unmounted(_ path: DAVPath, user: String) -> DAVPath {
        guard case .files(let owner, let rest)? = NextcloudPath(path), owner == user else { return path }
        return rest
    }

    /// The encoded href prefix of a user's files tree.
    static func filesMount(of user: String) -> String {
        DAVPath(segments: prefix + ["files", user]).href(collection: false)
    }
}
