import DavgateTestSupport
import Foundation
import Testing

/// One HOME with a `.netrc`, a local working folder, and cadaver sessions
/// run through `python3`'s `pty` module (cadaver insists on a terminal for
/// its certificate prompt).
struct CadaverSession {
    let server: any GatewayEndpoint
    let cadaver: String
    let python: String
    /// The domain whose collection the session opens.
    let domain: String
    let home: URL
    let local: URL

    struct Transcript: CustomStringConvertible {
        struct Entry: Decodable { var command: String; var output: String }
        var start: String
        var loginPrompted: Bool
        var outputs: [Entry]
        /// The output of the first command spelled exactly so.
        subscript(command: String) -> String? { outputs.first { $0.command == command }?.output }
        var description: String { ([start] + outputs.map { "> \($0.command)\n\($0.output)" }).joined(separator: "\n") }
    }

    init(server: any GatewayEndpoint, cadaver: String, python: String, domain: String = "files") throws {
        self.server = server
        self.domain = domain
        self.cadaver = cadaver
        self.python = python
        home = server.root.appendingPathComponent("cadaver-home")
        local = home.appendingPathComponent("local")
        try FileManager.default.createDirectory(at: local, withIntermediateDirectories: true)
        let netrc = home.appendingPathComponent(".netrc")
        try "machine 127.0.0.1\nlogin admin\npassword \(server.adminPassword)\n".write(to: netrc, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: netrc.path)
        try Self.driver.write(to: home.appendingPathComponent("drive.py"), atomically: true, encoding: .utf8)
    }

    func writeLocal(_ name: String, _ data: Data) throws { try data.write(to: local.appendingPathComponent(name)) }
    func readLocal(_ name: String) throws -> Data { try Data(contentsOf: local.appendingPathComponent(name)) }

    /// Runs one cadaver session on the domain and returns what each command printed.
    func run(_ commands: [String]) async throws -> Transcript {
        let commandFile = home.appendingPathComponent("commands.json")
        try JSONSerialization.data(withJSONObject: commands).write(to: commandFile)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = [home.appendingPathComponent("drive.py").path, commandFile.path, cadaver, server.domainURL(domain).absoluteString]
        process.currentDirectoryURL = local
        var environment = ProcessInfo.processInfo.environment
        environment["HOME"] = home.path
        environment["TERM"] = "dumb"
        environment["LANG"] = "C.UTF-8"
        environment["LC_ALL"] = "C.UTF-8"
        process.environment = environment
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let (data, errors) = try await onOwnThread {
            let data = out.fileHandleForReading.readDataToEndOfFile()
            let errors = err.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return (data, errors)
        }
        guard process.terminationStatus == 0 || process.terminationStatus == 3,
              let entries = try? JSONDecoder().decode([Transcript.Entry].self, from: data), let first = entries.first
        else {
            Issue.record("cadaver driver failed (\(process.terminationStatus)): \(String(decoding: data, as: UTF8.self)) \(String(decoding: errors, as: UTF8.self))")
            throw DriverFailure()
        }
        return Transcript(start: first.output, loginPrompted: first.command == "<login>", outputs: Array(entries.dropFirst()))
    }

    struct DriverFailure: Error {}

    /// Expect-style driver: answers the certificate prompt with `y`, a lock
    /// token prompt with the token the session's last `discover` printed,
    /// fails on a credentials prompt, and prints a JSON transcript.
    static let driver = #"""
        import json, os, pty, re, select, sys, time

        commands = json.load(open(sys.argv[1]))
        argv = sys.argv[2:]
        pid, fd = pty.fork()
        if pid == 0:
            os.execvp(argv[0], argv)

        buf = b""
        PATTERNS = (("prompt", re.compile(rb"dav:[^\r\n]*?> $")),
                    ("cert", re.compile(rb"\(y/n\) ?$")),
                    ("token", re.compile(rb"Enter locktoken: ?$")),
                    ("creds", re.compile(rb"(Username|Password): ?$")))

        def read_until(timeout=60):
            global buf
            deadline = time.time() + timeout
            while True:
                for kind, pattern in PATTERNS:
                    m = pattern.search(buf)
                    if m:
                        out, buf = buf[:m.start()], buf[m.end():]
                        return kind, out
                if time.time() > deadline:
                    sys.stderr.write("timeout; output so far: %r\n" % buf)
                    os.kill(pid, 9)
                    sys.exit(2)
                r, _, _ = select.select([fd], [], [], 0.2)
                if r:
                    try:
                        data = os.read(fd, 65536)
                    except OSError:
                        data = b""
                    if not data:
                        return "eof", buf
                    buf += data

        def text(b):
            return b.decode("utf-8", "replace").replace("\r\n", "\n")

        transcript = []
        banner = b""
        while True:
            kind, out = read_until()
            banner += out
            if kind == "cert":
                banner += b"(y/n) "
                os.write(fd, b"y\n")
                continue
            if kind != "prompt":
                transcript.append({"command": "<login>" if kind == "creds" else "<" + kind + ">", "output": text(banner)})
                print(json.dumps(transcript))
                os.kill(pid, 9)
                sys.exit(3)
            break
        transcript.append({"command": "<start>", "output": text(banner)})
        last_token = None
        for command in commands:
            os.write(fd, command.encode("utf-8") + b"\n")
            collected = b""
            while True:
                kind, out = read_until()
                collected += out
                if kind == "token" and last_token:
                    collected += b"Enter locktoken: "
                    os.write(fd, last_token.encode() + b"\n")
                    continue
                break
            output = text(collected)
            first, _, rest = output.partition("\n")
            output = rest if first.strip() == command.strip() else output
            m = re.search(r"Lock token <([^>]+)>", output)
            if m:
                last_token = m.group(1)
            transcript.append({"command": command, "output": output})
            if kind != "prompt":
                break
        os.write(fd, b"quit\n")
        deadline = time.time() + 10
        while time.time() < deadline:
            done, _ = os.waitpid(pid, os.WNOHANG)
            if done:
                break
            time.sleep(0.1)
        else:
            os.kill(pid, 9)
        print(json.dumps(transcript, ensure_ascii=False))
        """#
}
