import DavgateTestSupport
import Foundation

extension DavgateProcess {
    /// Adds a gateway user through the real command line (`davgate user add
    /// NAME --password-stdin`), as an operator would while the server runs.
    func addUser(_ name: String, password: String) async throws {
        let ended = try await ChildProcess.output(Self.executable.path, ["user", "add", name, "--password-stdin", "--config", configFile.path],
                                                  input: Data((password + "\n").utf8), check: false)
        guard ended.status == 0 else { throw UserAddFailed(name: name) }
    }

    struct UserAddFailed: Error { var name: String }
}
