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
        if try await provider.item(at: itemPath) != nil {
            throw DAVError(.methodNotAllowed, "a resource already exists at \(path.href(collection: false))")
        }
        guard let parent = try await provider.item(at: Array(itemPath.dropLast())), parent.isFolder else {
            throw DAVError(ProviderError.parentMissing)
        }
        let submitted = try await evaluateIfHeader()
        _ = try await provider.makeFolder(at: itemPath, conditions: writeConditions(submitted: submitted, judging: nil))
        return Self.response(.created)
    }
}
