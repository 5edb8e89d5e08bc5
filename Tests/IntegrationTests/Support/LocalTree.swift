import Foundation
import Testing

/// Writes files (and their folders) under `root`, by relative path.
func writeTree(at root: URL, _ files: [String: Data]) throws {
    for (path, data) in files {
        let url = root.appendingPathComponent(path)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try data.write(to: url)
    }
}

/// The SHA-256 of one file by `sha256sum`, nil when there is no such file.
func checksum(of file: URL, _ command: ClientCommand) async throws -> String? {
    guard FileManager.default.fileExists(atPath: file.path) else { return nil }
    let sha256sum = try #require(findExecutable("sha256sum"), "sha256sum (coreutils) is missing")
    let result = try await command.run(sha256sum, ["--", file.path])
    try #require(result.succeeded, "\(result)")
    return String(result.stdout.prefix(64))
}

/// The SHA-256 of every file under a folder, by NFC path relative to it
/// (folders as `dir`), computed by `sha256sum`: what the scenarios compare
/// between the client's side and the upstream folder behind davgate.
func treeChecksums(_ root: URL, _ command: ClientCommand) async throws -> [String: String] {
    let sha256sum = try #require(findExecutable("sha256sum"), "sha256sum (coreutils) is missing")
    var sums: [String: String] = [:]
    var files: [String] = []
    let base = root.resolvingSymlinksInPath().path
    guard let walker = FileManager.default.enumerator(atPath: base) else { return [:] }
    while let relative = walker.nextObject() as? String {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: base + "/" + relative, isDirectory: &isDirectory), isDirectory.boolValue {
            sums[relative.precomposedStringWithCanonicalMapping] = "dir"
        } else {
            files.append(relative)
        }
    }
    guard !files.isEmpty else { return sums }
    // A file can go between the walk and the hash (the temporary file of an
    // upload in flight, renamed into place): the hash is taken again of the
    // files still there, and the caller sees the tree as it is then.
    var result = try await command.run(sha256sum, ["-z", "--"] + files.map { base + "/" + $0 })
    for _ in 0..<3 where !result.succeeded {
        let remaining = files.filter { FileManager.default.fileExists(atPath: base + "/" + $0) }
        guard remaining.count < files.count else { break }
        files = remaining
        guard !files.isEmpty else { return sums }
        result = try await command.run(sha256sum, ["-z", "--"] + files.map { base + "/" + $0 })
    }
    try #require(result.succeeded, "\(result)")
    for line in result.stdout.split(separator: "\0") {
        let (hash, path) = (line.prefix(64), line.dropFirst(66))
        sums[String(path.dropFirst(base.count + 1)).precomposedStringWithCanonicalMapping] = String(hash)
    }
    return sums
}
