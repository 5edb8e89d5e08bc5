// libFuzzer target for the `If` header (RFC 4918 section 10.4):
// Sources/DAVProtocol/IfHeader.swift, its parser and its evaluation. Built by
// scripts/fuzz against DAVProtocol compiled with -enable-testing.

@testable import DAVProtocol

/// Checks, for any input used as the header's value, once it parses:
/// - the grammar's shape (section 10.4): at least one list, no empty list,
///   tagged and untagged lists never mixed, state tokens that are a
///   Coded-URL's inside, entity tags that keep their quotes;
/// - the header rendered back to text parses to the same header;
/// - evaluation is a disjunction of lists, each a conjunction of conditions
///   (section 10.4.2), and `Not` inverts a condition;
/// - `<DAV:no-lock>` never matches, an entity tag never matches a missing
///   resource, and a tag matches a resource whose ETag is its opaque part;
/// - each resource's state is asked for once, and only for the request path
///   or a tagged resource;
/// - the submitted lock tokens are the non-negated tokens of the lists that
///   apply to a path (sections 7.5, 10.4.1).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzIfHeader(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    guard let header = try? IfHeader.parse(String(decoding: bytes, as: UTF8.self)) else { return 0 }
    checkShape(header)
    checkRendering(header)
    checkEvaluation(header, seed: fnv1a(bytes))
    checkSubmittedTokens(header)
    return 0
}

private func checkShape(_ header: IfHeader) {
    check(!header.lists.isEmpty, "a parsed header without lists")
    let tagged = header.lists.filter { $0.resource != nil }.count
    check(tagged == 0 || tagged == header.lists.count, "tagged and untagged lists mixed")
    for list in header.lists {
        check(!list.conditions.isEmpty, "an empty list")
        for condition in list.conditions {
            switch condition.kind {
            case .token(let token):
                check(!token.isEmpty && !token.utf8.contains { $0 == UInt8(ascii: "<") || $0 == UInt8(ascii: ">") || $0 == UInt8(ascii: " ") },
                             "state token \(token) is not the inside of a Coded-URL")
            case .etag(let tag):
                let opaque = tag.hasPrefix("W/") ? tag.utf8.dropFirst(2) : tag.utf8[...]
                check(opaque.count >= 2 && opaque.first == UInt8(ascii: "\"") && opaque.last == UInt8(ascii: "\""),
                             "entity tag \(tag) lost its quotes")
            }
        }
    }
}

/// The header as a client would send it: `<href> (Not <token> ["etag"])`.
/// Tags whose opaque part holds a quote (the parser's lenient reading of
/// `[a"b]`) have no spelling that reads back, so they are left out.
private func checkRendering(_ header: IfHeader) {
    var text = ""
    for list in header.lists {
        if let resource = list.resource { text += "<\(resource.href(collection: false))> " }
        text += "("
        for condition in list.conditions {
            if condition.negated { text += "Not " }
            switch condition.kind {
            case .token(let token): text += "<\(token)> "
            case .etag(let tag):
                guard !EntityTag.opaque(tag).utf8.dropFirst().dropLast().contains(UInt8(ascii: "\"")) else { return }
                text += "[\(tag)] "
            }
        }
        text += ") "
    }
    guard let again = try? IfHeader.parse(text) else { fail("rendered header \(text) does not parse") }
    check(again == header, "rendered header \(text) reads back as \(again), not \(header)")
}

private func checkEvaluation(_ header: IfHeader, seed: UInt64) {
    // Lock tokens the resources may hold: the header's own, never DAV:no-lock
    // (no lock has that token, section 10.4.8). Sorted: a Set's order
    // changes from run to run, and a fuzz target must be deterministic.
    let tokens = header.allTokens.subtracting(["DAV:no-lock"]).sorted()
    var etags: [String] = []
    for list in header.lists {
        for case .etag(let tag) in list.conditions.map(\.kind) { etags.append(String(EntityTag.opaque(tag))) }
    }
    let requestPath = header.lists.first?.resource ?? DAVPath(segments: ["files", "a"])
    /// The same path always gets the same state; the seed varies it per input.
    func state(_ path: DAVPath) -> ResourceState {
        var h = seed ^ fnv1a(Array(path.description.utf8))
        h = h &* 0x9E37_79B9_7F4A_7C15
        let choice = Int(h % UInt64(etags.count + 2))
        let etag: String? = choice < etags.count ? etags[choice] : (choice == etags.count ? "\"other\"" : nil)
        let held = tokens.enumerated().filter { (h >> UInt64($0.offset % 64)) & 1 == 1 }.map(\.element)
        return ResourceState(etag: etag, lockTokens: Set(held))
    }

    var asked: [DAVPath] = []
    let whole = header.evaluate(requestPath: requestPath) { path in
        asked.append(path)
        return state(path)
    }
    check(Set(asked).count == asked.count, "state asked twice for one path: \(asked)")
    let candidates = Set(header.lists.map { $0.resource ?? requestPath })
    check(asked.allSatisfy(candidates.contains), "state asked for \(asked), outside \(candidates)")

    var anyList = false
    for list in header.lists {
        let listResult = IfHeader(lists: [list]).evaluate(requestPath: requestPath, state: state)
        anyList = anyList || listResult
        var allConditions = true
        for condition in list.conditions {
            let one = IfHeader(lists: [IfHeader.List(resource: list.resource, conditions: [condition])])
            var flipped = condition
            flipped.negated.toggle()
            let other = IfHeader(lists: [IfHeader.List(resource: list.resource, conditions: [flipped])])
            let result = one.evaluate(requestPath: requestPath, state: state)
            check(result != other.evaluate(requestPath: requestPath, state: state), "Not does not invert \(condition)")
            allConditions = allConditions && result

            let current = state(list.resource ?? requestPath)
            switch condition.kind {
            case .token(let token):
                check(result == (current.lockTokens.contains(token) != condition.negated),
                             "token \(token) against \(current.lockTokens) gave \(result)")
            case .etag(let tag):
                let opaque = String(EntityTag.opaque(tag))
                if current.etag == nil { check(result == condition.negated, "\(tag) matched a missing resource") }
                let present = ResourceState(etag: opaque, lockTokens: [])
                check(one.evaluate(requestPath: requestPath) { _ in present } != condition.negated,
                             "\(tag) does not match the ETag \(opaque)")
            }
        }
        check(listResult == allConditions, "list \(list) is not the conjunction of its conditions")
    }
    check(whole == anyList, "header \(header) is not the disjunction of its lists")
}

private func checkSubmittedTokens(_ header: IfHeader) {
    let paths = header.lists.compactMap(\.resource) + [DAVPath(segments: ["files", "a"])]
    for path in paths {
        for target in [path, path.appending("member")] {
            let submitted = header.submittedTokens(for: target, requestPath: target)
            var expected: Set<String> = []
            for list in header.lists where list.resource.map(target.hasPrefix) ?? true {
                for case .token(let token) in list.conditions.filter({ !$0.negated }).map(\.kind) { expected.insert(token) }
            }
            check(submitted == expected, "tokens submitted for \(target): \(submitted), expected \(expected)")
            check(submitted.isSubset(of: header.allTokens), "submitted tokens outside allTokens")
        }
    }
}

/// FNV-1a: a hash that is the same in every run (Swift's `Hasher` is seeded per process).
private func fnv1a(_ bytes: some Sequence<UInt8>) -> UInt64 {
    bytes.reduce(0xCBF2_9CE4_8422_2325) { ($0 ^ UInt64($1)) &* 0x100_0000_01B3 }
}
