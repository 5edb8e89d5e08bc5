/// The value of `If-Match` or `If-None-Match` (RFC 9110 sections 13.1.1, 13.1.2):
/// `"*" / #entity-tag`.
public enum EntityTagCondition: Sendable, Equatable {
    /// `*`: any current representation.
    case any
    /// The listed entity tags, each as sent with its quotes and an optional
    /// `W/` prefix, e.g. `"\"abc\""` or `"W/\"abc\""`. A tag a client sent
    /// without quotes (some do) is stored quoted.
    case tags([String])

    /// Parses the header; `nil` when absent, empty, or no tag can be read.
    public static func parse(_ header: String?) -> EntityTagCondition? {
        guard let header else { return nil }
        let value = header.trimmingSpaces()
        if value == "*" { return .any }
        let tags = EntityTag.list(value)
        return tags.isEmpty ? nil : .tags(tags)
    }

    /// `If-Match` (RFC 9110 section 13.1.1): the strong comparison. A weak tag
    /// on either side never matches. `etag` is the resource's current ETag with
    /// its quotes, or `nil` when the resource does not exist (then even `*` fails).
    public func matchesStrong(_ etag: String?) -> Bool {
        guard let etag else { return false }
        switch self {
        case .any: return true
        case .tags(let tags): return tags.contains { EntityTag.strongEqual($0, etag) }
        }
    }

    /// `If-None-Match` (RFC 9110 section 13.1.2): the weak comparison, `W/` ignored.
    /// `true` means "matches", i.e. the condition of If-None-Match is false.
    public func matchesWeak(_ etag: String?) -> Bool {
        guard let etag else { return false }
        switch self {
        case .any: return true
        case .tags(let tags): return tags.contains { EntityTag.weakEqual($0, etag) }
        }
    }
}

/// Entity-tag comparison and list parsing (RFC 9110 section 8.8.3).
enum EntityTag {
    /// Both strong and character-for-character equal.
    static func strongEqual(_ a: String, _ b: String) -> Bool {
        !a.hasPrefix("W/") && !b.hasPrefix("W/") && a == b
    }

    /// Equal once any `W/` prefix is removed.
    static func weakEqual(_ a: String, _ b: String) -> Bool {
        opaque(a) == opaque(b)
    }

    static func opaque(_ tag: String) -> Substring {
        tag.hasPrefix("W/") ? tag.dropFirst(2) : Substring(tag)
    }

    /// Splits `"a", W/"b" , "c,d"` into tags, respecting commas inside quotes.
    static func list(_ value: Substring) -> [String] {
        var tags: [String] = []
        var rest = value[...]
        while true {
            rest = rest.drop(while: { $0 == " " || $0 == "\t" || $0 == "," })
            if rest.isEmpty { break }
            var weak = false
            if rest.hasPrefix("W/") || rest.hasPrefix("w/") {
                weak = true
                rest = rest.dropFirst(2)
            }
            if rest.hasPrefix("\"") {
                let body = rest.dropFirst()
                guard let close = body.firstIndex(of: "\"") else {
                    tags.append((weak ? "W/" : "") + "\"" + body + "\"")
                    break
                }
                tags.append((weak ? "W/\"" : "\"") + body[..<close] + "\"")
                rest = body[body.index(after: close)...]
            } else {
                let end = rest.firstIndex(of: ",") ?? rest.endIndex
                let bare = rest[..<end].trimmingSpaces()
                if !bare.isEmpty { tags.append((weak ? "W/\"" : "\"") + bare + "\"") }
                rest = rest[end...]
            }
        }
        return tags
    }
}
