import DAVProtocol
import HTTPTypes

import Hummingbird
import ProviderCore

extension DAVExchange {
    /// OPTIONS (RFC 4918 section 10.1): class 1 and 2, so Finder, davfs2 and
    /// Office mount read-write; `MS-Author-Via` for Windows.
    func options() -> Response {
        var fields = HTTPFields()
        // A domain says it is davgate's, so another davgate in front leaves
        // trash and versions to it and never asks for `.davgate/` here
        // (proxies rewrite `Server`, not `DAV`).
        fields[.init("DAV")!] = provider != nil ? "1, 2, \(TrashLayout.capability)" : "1, 2"
        fields[.init("MS-Author-Via")!] = "DAV"
        fields[.allow] = permission == .readOnly ? DAVResponder.readOnlyMethods : DAVResponder.allowedMethods
        fields[.acceptRanges] = "bytes"
        // SabreDAV's partial update (DAVExchange+pieces).
        if provider != nil { fields[.init("Accept-Patch")!] = UpdateRange.contentType }
        return Self.response(.ok, headers: fields)
    }
}
