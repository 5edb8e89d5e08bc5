import Foundation

#if canImport(Glibc)
import Glibc
#endif

extension ChildProcess {
    /// What a program that ran to its end printed, and how it ended.
    public struct Output: Sendable {
        public let status: Int32
        public let stdout: Data
        public let stderr: Data

        public var text: String { String(decoding: stdout, as: UTF8.self) }
        public var errorText: String { String(decoding: stderr, as: UTF8.self) }
    }

    /// Runs a program to its end with `input` on its standard input and
    /// its output kept, waiting without holding a thread of Swift
    /// concurrency (the tests' two cores run servers in the same process).
    /// Its streams are files, not pipes, so a large output cannot stall it.
    /// - Throws: when it cannot start, or (`check`) when it exits with a
    ///   failure, with what it wrote to stderr.
    public static func output(_ executable: String, _ arguments: [String], input: Data? = nil,
                              environment: [String: String]? = nil, check: Bool = true) async throws -> Output {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("output-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let stdin = folder.appendingPathComponent("stdin"), stdout = folder.appendingPathComponent("stdout"),
            stderr = folder.appendingPathComponent("stderr")
        if let input { try input.write(to: stdin) }
        let pid = try spawn(executable, arguments, stdin: input == nil ? .nowhere : .file(stdin),
                            stdout: .file(stdout), stderr: .file(stderr), environment: environment)
        var pause: UInt64 = 1_000_000
        let status: Int32
        while true {
            if let ended = exitStatus(pid) {
                status = ended
                break
            }
            do {
                try await Task.sleep(nanoseconds: pause)
            } catch {
                stop(pid)
                throw error
            }
            pause = min(pause * 2, 20_000_000)
        }
        let output = Output(status: status, stdout: (try? Data(contentsOf: stdout)) ?? Data(),
                            stderr: (try? Data(contentsOf: stderr)) ?? Data())
        if check, output.status != 0 {
            throw SpawnError(message: "\(executable) \(arguments.joined(separator: " ")) (status \(output.status)): \(output.errorText)")
        }
        return output
    }

    /// The child's exit code (128 + signal when killed) once it has ended,
    /// reaping it; nil while it runs.
    static func exitStatus(_ pid: pid_t) -> Int32? {
        var status: Int32 = 0
        let result = waitpid(pid, &status, WNOHANG)
        if result == 0 || (result < 0 && errno == EINTR) { return nil }
        if result < 0 { return -1 }
        return status & 0x7F == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
    }
}
