import DavgateTestSupport
import Foundation
import Testing

/// Runs a `davgate` subcommand; returns its exit status and output
/// (stdout, then stderr).
@discardableResult
func runDavgate(_ arguments: [String], stdin: String? = nil) async throws -> (status: Int32, output: String) {
    let ended = try await ChildProcess.output(DavgateProcess.executable.path, arguments, input: stdin.map { Data($0.utf8) }, check: false)
    return (ended.status, ended.text + ended.errorText)
}

/// A vault with a key file, both mode 0600, in a fresh folder.
func makeVault() async throws -> (vault: URL, key: URL) {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("vault-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    let key = folder.appendingPathComponent("vault.key")
    var bytes = [UInt8](repeating: 0, count: 32)
    for i in bytes.indices { bytes[i] = UInt8.random(in: 0...255) }
    try Data(bytes).write(to: key)
    try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: key.path)
    let vault = folder.appendingPathComponent("vault.dgv")
    let created = try await runDavgate(["vault", "init", "--vault", vault.path, "--key-file", key.path])
    #expect(created.status == 0, "\(created.output)")
    return (vault, key)
}
