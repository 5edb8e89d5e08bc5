// libFuzzer target for the DAVProtocol header parsers. Compiled together with
// Sources/DAVProtocol/*.swift against a DAVXML module built first (see
// Fuzz/README.md).

import DAVXML

/// Checks, for any input used as each header's value:
/// - no parser crashes (ASan, bounds checks);
/// - a parsed path renders to an href that parses back to the same path;
/// - a Range answer stays inside the content; a timeout inside its bounds;
/// - a parsed If header evaluates without crashing against any state.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzDAVProtocol(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)

    if let (path, _) = try? DAVPath.parse(requestTarget: text) {
        for collection in [false, true] {
            guard let (again, slash) = try? DAVPath.parse(requestTarget: path.href(collection: collection)) else {
                preconditionFailure("href of \(path) does not parse back")
            }
            precondition(again == path, "href round trip changed \(path) into \(again)")
            precondition(slash == (collection || path.isRoot), "trailing slash lost for \(path)")
        }
    }
    _ = try? Destination.parse(text, requestHost: "127.0.0.1:8443")
    _ = try? Depth.parse(text)
    _ = try? Overwrite.parse(text)
    _ = LockTokenHeader.parse(text)
    _ = EntityTagCondition.parse(text).map { ($0.matchesStrong("\"a\""), $0.matchesWeak("\"a\"")) }
    _ = HTTPDate.parse(text)

    let contentSize = Int64(size % 97)
    switch RangeRequest.evaluate(text, size: contentSize) {
    case .partial(let range):
        precondition(range.lowerBound >= 0 && range.upperBound < contentSize, "range \(range) outside \(contentSize)")
    case .full, .unsatisfiable:
        break
    }
    let seconds = LockTimeout.seconds(from: text, default: 600, maximum: 3600)
    precondition(seconds > 0 && seconds <= 3600, "timeout \(seconds) out of bounds")

    if let header = try? IfHeader.parse(text) {
        let tokens = header.allTokens
        _ = header.evaluate(requestPath: DAVPath(segments: ["files", "a"])) { _ in
            ResourceState(etag: "\"a\"", lockTokens: tokens)
        }
        _ = header.submittedTokens(for: DAVPath(segments: ["files", "a"]), requestPath: DAVPath(segments: ["files", "a"]))
    }
    return 0
}
