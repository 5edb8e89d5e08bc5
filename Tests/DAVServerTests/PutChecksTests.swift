@testable import DAVServer
import DAVProtocol
import HTTPTypes
import Testing

/// Which PUTs leave every check to their commit: a small body announced by
/// its length, nothing to judge, no `100 Continue` awaited. Any other PUT is
/// checked before its body too, so that a refusal comes before the bytes.
@Suite struct PutChecksTests {
    static func fields(_ pairs: [(String, String)]) -> HTTPFields {
        var fields = HTTPFields()
        for (name, value) in pairs { fields.append(HTTPField(name: HTTPField.Name(name)!, value: value)) }
        return fields
    }

    static func waits(_ pairs: [(String, String)], piece: ContentRange? = nil) -> Bool {
        DAVExchange.checksWaitForCommit(fields(pairs), piece: piece)
    }

    @Test("a small unconditional PUT is checked at its commit alone")
    func smallUnconditional() {
        #expect(Self.waits([("Content-Length", "4096")]))
        #expect(Self.waits([("Content-Length", "0")]))
        #expect(Self.waits([("Content-Length", "\(DAVExchange.smallBodyLimit)")]))
        // A token alone is not a condition, but it only comes in an If header.
        #expect(Self.waits([("Content-Length", "10"), ("Content-Type", "text/plain")]))
    }

    @Test("a large body, one of unknown length, a piece, an Expect or any condition is checked before its body",
          arguments: [
              [("Content-Length", "\(DAVExchange.smallBodyLimit + 1)")],
              [("Transfer-Encoding", "chunked")],
              [("Content-Length", "10"), ("Expect", "100-continue")],
              [("Content-Length", "10"), ("If-Match", "\"abc\"")],
              [("Content-Length", "10"), ("If-None-Match", "*")],
              [("Content-Length", "10"), ("If-Unmodified-Since", "Sat, 28 Nov 2026 10:00:00 GMT")],
              [("Content-Length", "10"), ("If", "(<opaquelocktoken:x>)")],
              [("Content-Length", "not a number")],
          ])
    func checkedBefore(_ pairs: [(String, String)]) {
        #expect(!Self.waits(pairs))
    }

    @Test("a piece of an upload (Content-Range) is checked before its body")
    func piece() throws {
        #expect(!Self.waits([("Content-Length", "10")], piece: try ContentRange.parse("bytes 0-9/100")))
    }
}
