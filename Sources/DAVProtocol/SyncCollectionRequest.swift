import DAVXML

/// The body of a `sync-collection` REPORT (RFC 6578 section 3.2):
/// `<!ELEMENT sync-collection (sync-token, sync-level, limit?, prop)>`.
public struct SyncCollectionRequest: Sendable, Equatable {
    /// The token of the client's last sync; empty for a first sync.
    public var token: String
    /// `infinite` reports changes anywhere below the collection, `1` only
    /// among its members.
    public var infinite: Bool
    /// `DAV:limit/DAV:nresults` (RFC 5323 section 5.17): at most this many
    /// responses in one answer.
    public var limit: Int?
    /// The properties to report for each changed member.
    public var properties: [XMLName]

    public init(token: String, infinite: Bool, limit: Int?, properties: [XMLName]) {
        self.token = token
        self.infinite = infinite
        self.limit = limit
        self.properties = properties
    }

    /// Interprets a parsed REPORT body whose root is `DAV:sync-collection`.
    /// - Throws: ``DAVRequestError/missing(_:)`` without `sync-token`,
    ///   `sync-level` or `prop`; ``DAVRequestError/invalid(_:)`` for a level
    ///   other than `1` or `infinite`, or a limit that is not a positive number.
    public static func parse(_ root: XMLElement) throws(DAVRequestError) -> SyncCollectionRequest {
        guard root.name == .dav("sync-collection") else { throw .unexpectedRoot(root.name) }
        guard let token = root.first(.dav("sync-token")) else { throw .missing("sync-token") }
        guard let level = root.first(.dav("sync-level")) else { throw .missing("sync-level") }
        let infinite: Bool
        switch level.trimmedText {
        case "1": infinite = false
        case "infinite", "infinity": infinite = true
        default: throw .invalid("sync-level must be 1 or infinite")
        }
        var limit: Int?
        if let limitElement = root.first(.dav("limit")) {
            guard let count = limitElement.first(.dav("nresults")).flatMap({ Int($0.trimmedText) }),
                  count > 0 else {
                throw .invalid("limit must hold nresults, a positive number")
            }
            limit = count
        }
        guard let prop = root.first(.dav("prop")) else { throw .missing("prop") }
        return SyncCollectionRequest(token: token.trimmedText, infinite: infinite,
                                     limit: limit, properties: prop.elements.map(\.name))
    }
}

extension XMLElement {
    /// The text content without the XML whitespace (space, tab, CR, LF) around it.
    public var trimmedText: String {
        String(text.trimming { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" || $0 == "\r\n" })
    }
}
