import HTTPTypes

import Hummingbird

extension DAVExchange {
    /// OPTIONS (RFC 4918 section 10.1): class 1 and 2, so Finder, davfs2 and
    /// Office mount read-write; `MS-Author-Via` for Windows.
    func options() -> Response {
        var fields = HTTPFields()
        fields[.init("DAV")!] = "1, 2"
        fields[.init("MS-Author-Via")!] = "DAV"
        fields[.allow] = permission == .readOnly ? DAVResponder.readOnlyMethods : DAVResponder.allowedMethods
        fields[.acceptRanges] = "bytes"
        return Self.response(.ok, headers: fields)
    }
}
