import AsyncHTTPClient
import Foundation
import NIOConcurrencyHelpers
import NIOHTTP1
import ProviderCore

extension WebDAVStore {
    /// A 414 (URI Too Long) to a request creating a name: the server cannot
    /// hold a name that long. From now on names are held below it, so the
    /// provider refuses such names before acknowledging them instead of
    /// accepting writes that would fail at every retry. Returns the error to
    /// report, or nil when the request created no name.
    func learnNameLimit(from request: HTTPClientRequest, operation: Operation) -> UpstreamError? {
        let created: String?
        switch operation {
        case .upload, .makeFolder: created = request.url
        case .moveOrCopy: created = request.headers.first(name: "Destination")
        case .read, .delete, .lock: created = nil
        }
        guard let created, let url = URL(string: created),
              let name = url.path.split(separator: "/").last.map(String.init) else { return nil }
        let bytes = name.utf8.count
        let limit = learnedNames.withLockedValue { rules in
            rules.maxNameBytes = max(1, min(rules.maxNameBytes, bytes - 1))
            return rules.maxNameBytes
        }
        return .forbidden("HTTP 414 from the upstream for a name of \(bytes) bytes: it holds shorter names only; names are now held to \(limit) bytes")
    }
}
