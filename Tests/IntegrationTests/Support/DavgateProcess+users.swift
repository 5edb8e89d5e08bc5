import DavgateTestSupport
import Foundation

extension DavgateProcess {
    /// Adds a gateway user through the real command line (`davgate user add
    /// NAME --password-stdin`), as an operator would while the server runs.
    func addUser(_ name: String, password: String) throws {
        let process = Process()
        process.executableURL = Self.executable
        process.arguments = ["user", "add", name, "--password-stdin", "--config", configFile.path]
        let input = Pipe()
        process.standardInput = input
        process.standardOutput = Pipe()
        process.standardError = Pipe()
        try process.run()
        input.fileHandleForWriting.write(Data((password + "\n").utf8))
        try input.fileHandleForWriting.close()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw UserAddFailed(name: name) }
    }

    struct UserAddFailed: Error { var name: String }
}
