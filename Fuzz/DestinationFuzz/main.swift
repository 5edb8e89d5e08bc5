// libFuzzer target for the `Destination` header of COPY and MOVE (RFC 4918
// section 10.3): Sources/DAVProtocol/Destination.swift and the absolute URLs
// it reads with AbsoluteURL.swift. Built by scripts/fuzz against DAVProtocol
// compiled with -enable-testing.

@testable import DAVProtocol

/// Checks, for any input used as the header's value:
/// - an absolute URL's pieces are what AbsoluteURL promises: scheme `http` or
///   `https`, a non-empty lower-case host, a port that fits in 16 bits, a path
///   that starts with `/` and holds no query or fragment;
/// - without a `Host` to compare, nothing is foreign; with one, a local answer
///   is the same as without, and a refusal is the same refusal or foreign;
/// - an absolute path is exactly what the request-target parser makes of it;
/// - a URL is local for its own host and port however they are spelled (host
///   case, the default port explicit or not), and for `Host: 127.0.0.1:8443`
///   exactly when it names that host and port.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzDestination(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    let anyHost = destination(text, host: nil)
    let fixedHost = destination(text, host: "127.0.0.1:8443")

    if case .success(.foreign) = anyHost { fail("\(text) is foreign without a Host") }
    switch (fixedHost, anyHost) {
    case (.success(.local), _):
        check(fixedHost == anyHost, "\(text): \(fixedHost) with a Host, \(anyHost) without")
    case (.failure, _):
        check(fixedHost == anyHost, "\(text): refused as \(fixedHost) with a Host, \(anyHost) without")
    case (.success(.foreign), _):
        break
    }

    let value = text.trimmingSpaces()
    if value.hasPrefix("/") {
        let direct = Result { () throws(PathError) in try DAVPath.parse(requestTarget: String(value)) }
            .map { DestinationTarget.local($0.path, trailingSlash: $0.trailingSlash) }
        check(anyHost == direct && fixedHost == direct, "\(text) is not read as a request target")
        return 0
    }
    guard let url = AbsoluteURL(value) else {
        check(anyHost == .failure(.notAbsolute), "\(text) is not a URL but gave \(anyHost)")
        return 0
    }
    checkPieces(url, of: text)
    let direct = Result { () throws(PathError) in try DAVPath.parse(requestTarget: String(url.path)) }
        .map { DestinationTarget.local($0.path, trailingSlash: $0.trailingSlash) }
    check(anyHost == direct, "\(text): \(anyHost), but its path \(url.path) gives \(direct)")

    // The URL's own authority as a client's Host header spells it. A host
    // with surrounding blanks cannot be a Host value (they are trimmed), and a
    // bare host with a colon would read as host:port.
    if url.host.first != " " && url.host.first != "\t" && url.host.last != " " && url.host.last != "\t" {
        var spellings = ["\(url.host):\(url.effectivePort)", "\(asciiUppercased(url.host)):\(url.effectivePort)"]
        let bare = url.host.utf8.first == UInt8(ascii: "[") || !url.host.utf8.contains(UInt8(ascii: ":"))
        if bare && (url.port == nil || url.port == url.defaultPort) { spellings.append(url.host) }
        for host in spellings {
            check(destination(text, host: host) == anyHost, "\(text) is not local for its own Host \(host)")
        }
    }
    let named = url.host == "127.0.0.1" && url.effectivePort == 8443
    if case .success(.foreign) = fixedHost {
        check(!named, "\(text) names 127.0.0.1:8443 but is foreign there")
    } else {
        check(named, "\(text) is local for 127.0.0.1:8443 but names \(url.host):\(url.effectivePort)")
    }
    return 0
}

private func destination(_ text: String, host: String?) -> Result<DestinationTarget, PathError> {
    Result { () throws(PathError) in try Destination.parse(text, requestHost: host) }
}

private func checkPieces(_ url: AbsoluteURL, of text: String) {
    check(url.scheme == "http" || url.scheme == "https", "\(text): scheme \(url.scheme)")
    check(!url.host.isEmpty && url.host == url.host.lowercased(), "\(text): host \(url.host)")
    // RFC 3986 section 3.2: the authority ends at the first "/", "?" or "#".
    check(!url.host.utf8.contains { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") },
                 "\(text): host \(url.host) runs past the end of the authority")
    check(url.port.map { (0...65535).contains($0) } ?? true, "\(text): port \(String(describing: url.port))")
    check(url.path.utf8.first == UInt8(ascii: "/"), "\(text): path \(url.path) is not absolute")
    check(!url.path.utf8.contains { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") }, "\(text): path \(url.path) keeps a query or fragment")
}

/// Upper-cases ASCII letters only: host names compare case-insensitively in
/// ASCII (RFC 3986 section 3.2.2); Unicode case mapping is no equivalence there.
private func asciiUppercased(_ s: String) -> String {
    String(decoding: s.utf8.map { (97...122).contains($0) ? $0 - 32 : $0 }, as: UTF8.self)
}
