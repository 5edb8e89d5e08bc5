import DAVProtocol
import DAVXML
import Hummingbird
import Logging
import ProviderCore

extension DAVExchange {
    /// MKCOL (RFC 4918 section 9.3): 201, 405 when something is there, 409
    /// without a parent, 415 with a body (we define no MKCOL body).
    func mkcol() async throws -> Response {
        let provider = try requireDomain()
        guard !itemPath.isEmpty else { throw DAVError(.methodNotAllowed, "the domain root exists") }
        if try await hasBody() {
            throw DAVError(.unsupportedMediaType, "MKCOL with a body is not supported")
        }
        let exists = DAVError(.methodNotAllowed, "a resource already exists at \(path.href(collection: false))")
        if try await provider.item(at: itemPath) != nil { throw exists }
        guard let parent = try await provider.item(at: Array(itemPath.dropLast())), parent.isFolder else {
            throw DAVError(ProviderError.parentMissing)
        }
        let submitted = try await evaluateIfHeader()
        do {
            _ = try await provider.makeFolder(at: itemPath, conditions: writeConditions(submitted: submitted, judging: nil))
        } catch ProviderError.exists, ProviderError.upstream(.exists) {
            // Made since the check above by a MKCOL racing this one (rclone
            // sends one for every parent of each of its parallel uploads), or
            // there upstream already: still 405, not MOVE's 412.
            throw exists
        }
        return Self.response(.created)
    }
}
