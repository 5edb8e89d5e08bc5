/// The `If` request header (RFC 4918 section 10.4).
///
/// ```
/// If = "If" ":" ( 1*No-tag-list | 1*Tagged-list )
/// No-tag-list = List
/// Tagged-list = Resource-Tag 1*List
/// List = "(" 1*Condition ")"
/// Condition = ["Not"] (State-token | "[" entity-tag "]")
/// State-token = Coded-URL            ; <opaquelocktoken:..>, <urn:uuid:..>, <DAV:no-lock>
/// Resource-Tag = "<" Simple-ref ">"  ; absolute URL or absolute path
/// ```
/// The header is a disjunction of lists; a list is a conjunction of conditions.
public struct IfHeader: Sendable, Equatable {
    /// One condition of a list (RFC 4918 section 10.4.2).
    public struct Condition: Sendable, Equatable {
        public enum Kind: Sendable, Equatable {
            /// A state token, the URI inside the angle brackets (`urn:uuid:...`, `DAV:no-lock`).
            case token(String)
            /// An entity tag inside `[...]`, with its quotes and any `W/` prefix: `"\"abc\""`.
            case etag(String)
        }

        /// `Not` was given: the condition is true when the match fails.
        public var negated: Bool
        public var kind: Kind

        public init(negated: Bool = false, _ kind: Kind) {
            self.negated = negated
            self.kind = kind
        }
    }

    /// One parenthesised list (RFC 4918 section 10.4.2).
    public struct List: Sendable, Equatable {
        /// The tagged resource (RFC 4918 section 10.4.3); `nil` for an untagged
        /// list, which applies to the request-URI. A trailing slash on the tag is
        /// not significant.
        public var resource: DAVPath?
        public var conditions: [Condition]

        public init(resource: DAVPath?, conditions: [Condition]) {
            self.resource = resource
            self.conditions = conditions
        }
    }

    public var lists: [List]

    public init(lists: [List]) {
        self.lists = lists
    }

    /// Parses the header value.
    /// - Throws: ``HeaderError/invalid(header:value:)`` on any grammar violation:
    ///   an empty header or list, tagged and untagged lists mixed, a tag without a
    ///   list, an unterminated `<`, `[` or `(`, a tag that is not an acceptable
    ///   path or `http(s)` URL, or stray characters.
    public static func parse(_ header: String) throws(HeaderError) -> IfHeader {
        var parser = IfHeaderParser(header)
        guard let lists = parser.parse() else { throw .invalid(header: "If", value: header) }
        return IfHeader(lists: lists)
    }

    /// Evaluates the header (RFC 4918 sections 10.4.1 to 10.4.5).
    ///
    /// The header is true when at least one list is true. An untagged list is
    /// applied to `requestPath`, a tagged one to its resource. A list is true when
    /// all its conditions are. A state token is true when it is one of the
    /// resource's lock tokens (so `<DAV:no-lock>` is never true, and
    /// `Not <DAV:no-lock>` always is). An entity tag is true when it equals the
    /// resource's current ETag: strong comparison, or weak when the tag is `W/`.
    /// A missing resource has no ETag and no tokens.
    ///
    /// A false header means `412 Precondition Failed`. A true header says
    /// nothing about locks: check ``submittedTokens(for:requestPath:)`` against
    /// the locks on the resource for `423 Locked` separately (litmus
    /// `cond_put_corrupt_token`).
    public func evaluate(requestPath: DAVPath, state: (DAVPath) -> ResourceState) -> Bool {
        var cache: [DAVPath: ResourceState] = [:]
        for list in lists {
            let path = list.resource ?? requestPath
            let current: ResourceState
            if let known = cache[path] {
                current = known
            } else {
                current = state(path)
                cache[path] = current
            }
            if list.conditions.allSatisfy({ $0.holds(for: current) }) { return true }
        }
        return false
    }

    /// The lock tokens the client submitted for `path` (RFC 4918 sections 7.5, 10.4.1):
    /// every non-negated state token of the lists that apply to `path`.
    ///
    /// - A tagged list applies when its resource is `path` or an ancestor of it:
    ///   neon (cadaver, litmus) tags a write to a member of a locked collection
    ///   with the collection's URL, the lock root.
    /// - An untagged list applies to every path: "for the purpose of submitting
    ///   the lock token the actual form doesn't matter; what's relevant is that
    ///   the lock token appears in the If header, and that the If header itself
    ///   evaluates to true" (section 10.4.1). Clients send `(<token>)` for the
    ///   lock on a MOVE destination or a member of the request-URI, and a token
    ///   only unlocks what its own lock covers anyway. `requestPath` is accepted
    ///   for symmetry with ``evaluate(requestPath:state:)``.
    ///
    /// Call this only after ``evaluate(requestPath:state:)`` returned true.
    public func submittedTokens(for path: DAVPath, requestPath: DAVPath) -> Set<String> {
        var tokens: Set<String> = []
        for list in lists {
            if let resource = list.resource, !path.hasPrefix(resource) { continue }
            for condition in list.conditions where !condition.negated {
                if case .token(let token) = condition.kind { tokens.insert(token) }
            }
        }
        return tokens
    }

    /// Every non-negated state token in the header, whatever it is tagged with
    /// (LOCK refresh, RFC 4918 section 9.10.2, names the lock this way).
    public var allTokens: Set<String> {
        var tokens: Set<String> = []
        for list in lists {
            for condition in list.conditions where !condition.negated {
                if case .token(let token) = condition.kind { tokens.insert(token) }
            }
        }
        return tokens
    }
}

extension IfHeader.Condition {
    func holds(for state: ResourceState) -> Bool {
        let matches: Bool
        switch kind {
        case .token(let token):
            matches = state.lockTokens.contains(token)
        case .etag(let tag):
            if let current = state.etag {
                matches = tag.hasPrefix("W/") ? EntityTag.weakEqual(tag, current) : EntityTag.strongEqual(tag, current)
            } else {
                matches = false
            }
        }
        return matches != negated
    }
}

/// A byte-level recursive-descent parser for the `If` grammar; returns `nil`
/// on any violation.
private struct IfHeaderParser {
    let bytes: [UInt8]
    var i = 0

    init(_ header: String) {
        bytes = Array(header.utf8)
    }

    mutating func parse() -> [IfHeader.List]? {
        var lists: [IfHeader.List] = []
        var tagged: Bool?
        var tag: DAVPath?
        skipSpace()
        guard i < bytes.count else { return nil }
        while i < bytes.count {
            switch bytes[i] {
            case UInt8(ascii: "<"):
                if tagged == false { return nil }
                tagged = true
                guard let text = coded(), let path = try? DAVPath.parse(requestTarget: text).path else { return nil }
                tag = path
                skipSpace()
                guard i < bytes.count, bytes[i] == UInt8(ascii: "(") else { return nil }
            case UInt8(ascii: "("):
                if tagged == nil { tagged = false }
                guard let conditions = list() else { return nil }
                lists.append(IfHeader.List(resource: tagged == true ? tag : nil, conditions: conditions))
            default:
                return nil
            }
            skipSpace()
        }
        return lists
    }

    /// `"(" 1*Condition ")"`, positioned on the `(`.
    private mutating func list() -> [IfHeader.Condition]? {
        i += 1
        var conditions: [IfHeader.Condition] = []
        while true {
            skipSpace()
            guard i < bytes.count else { return nil }
            if bytes[i] == UInt8(ascii: ")") {
                i += 1
                return conditions.isEmpty ? nil : conditions
            }
            var negated = false
            if i + 3 <= bytes.count, bytes[i ..< i + 3].map({ $0 | 0x20 }) == Array("not".utf8) {
                negated = true
                i += 3
                skipSpace()
                guard i < bytes.count else { return nil }
            }
            switch bytes[i] {
            case UInt8(ascii: "<"):
                guard let token = coded() else { return nil }
                conditions.append(.init(negated: negated, .token(token)))
            case UInt8(ascii: "["):
                guard let tag = entityTag() else { return nil }
                conditions.append(.init(negated: negated, .etag(tag)))
            default:
                return nil
            }
        }
    }

    /// `"<" 1*char ">"`, positioned on the `<`; the text between, non-empty.
    private mutating func coded() -> String? {
        i += 1
        let start = i
        while i < bytes.count, bytes[i] != UInt8(ascii: ">") {
            if bytes[i] == UInt8(ascii: "<") || bytes[i] == UInt8(ascii: " ") { return nil }
            i += 1
        }
        guard i < bytes.count, i > start else { return nil }
        defer { i += 1 }
        return String(decoding: bytes[start ..< i], as: UTF8.self)
    }

    /// `"[" entity-tag "]"`, positioned on the `[`. An unquoted opaque tag is
    /// accepted and quoted (lenient, like `If-Match`).
    private mutating func entityTag() -> String? {
        i += 1
        skipSpace()
        var prefix = ""
        if i + 1 < bytes.count, bytes[i] | 0x20 == UInt8(ascii: "w"), bytes[i + 1] == UInt8(ascii: "/") {
            prefix = "W/"
            i += 2
        }
        let value: String
        if i < bytes.count, bytes[i] == UInt8(ascii: "\"") {
            let start = i
            i += 1
            while i < bytes.count, bytes[i] != UInt8(ascii: "\"") { i += 1 }
            guard i < bytes.count else { return nil }
            i += 1
            value = String(decoding: bytes[start ..< i], as: UTF8.self)
            skipSpace()
        } else {
            let start = i
            while i < bytes.count, bytes[i] != UInt8(ascii: "]"), bytes[i] != UInt8(ascii: " ") { i += 1 }
            guard i > start else { return nil }
            value = "\"" + String(decoding: bytes[start ..< i], as: UTF8.self) + "\""
            skipSpace()
        }
        guard i < bytes.count, bytes[i] == UInt8(ascii: "]") else { return nil }
        i += 1
        return prefix + value
    }

    private mutating func skipSpace() {
        while i < bytes.count, bytes[i] == UInt8(ascii: " ") || bytes[i] == UInt8(ascii: "\t")
            || bytes[i] == UInt8(ascii: "\r") || bytes[i] == UInt8(ascii: "\n") {
            i += 1
        }
    }
}
