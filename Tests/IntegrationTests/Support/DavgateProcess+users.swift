import DavgateTestSupport
import Foundation

extension DavgateProcess {
    /// Adds a gateway user through the real command line (`davgate user add
    /// NAME --password-stdin`), as an operator would while the server runs.
    func addUser(_ name: String, password: String) async throws {
        let executable = Self.executable, configFile = configFile
        let status = try await onOwnThread {
            try Self.runUserAdd(name, password: password, executable: executable, configFile: configFile)
        }
        guard status == 0 else { throw UserAddFailed(name: name) }
    }

    private static func runUserAdd(_ name: String, password: String, executable: URL, configFile: URL) throws -> Int32 {
        let process = Process()
        process.executableURL = executable
        process.arguments = ["user", "add", name, "--password-stdin", "--config", configFile.path]
        let input = Pipe()
        process.standardInput = input
        process.standardOutput = Pipe()
        process.standardError = Pipe()
        try process.run()
        input.fileHandleForWriting.write(Data((password + "\n").utf8))
        try input.fileHandleForWriting.close()
        process.waitUntilExit()
        return process.terminationStatus
    }

    struct UserAddFailed: Error { var name: String }
}
