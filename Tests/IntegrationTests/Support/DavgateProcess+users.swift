import DavgateTestSupport
import Foundation
import Testing

extension DavgateProcess {
    /// Adds a gateway user through the real command line (`davgate user add
    /// NAME --password-stdin`), as an operator would while the server runs,
    /// and returns once the server accepts the user's password. The server
    /// looks at the users file at most once a second, so a request made the
    /// moment the command ends could still get 401 (a fresh-clone run saw
    /// that).
    func addUser(_ name: String, password: String) async throws {
        let ended = try await ChildProcess.output(Self.executable.path, ["user", "add", name, "--password-stdin", "--config", configFile.path],
                                                  input: Data((password + "\n").utf8), check: false)
        guard ended.status == 0 else { throw UserAddFailed(name: name) }
        try await withClient(self, user: name, password: password) { client in
            // PROPFIND, not OPTIONS: OPTIONS answers without a password.
            try await eventually("the server accepts \(name)'s password", seconds: 10) {
                try await client.send("PROPFIND", "/", headers: [("Depth", "0")]).status != 401
            }
        }
    }

    struct UserAddFailed: Error { var name: String }
}
