import Foundation

/// A fresh folder per test, removed afterwards.
final class TemporaryFolder {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("davgate-setup-\(UUID().uuidString)", isDirectory: true)
            .standardizedFileURL
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: url) }

    /// Writes `text` to `conf/davgate.toml` in the folder and returns that file.
    func config(_ text: String) throws -> URL {
        let file = url.appendingPathComponent("conf/davgate.toml")
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(text.utf8).write(to: file)
        return file
    }

    func path(_ relative: String) -> URL {
        url.appendingPathComponent(relative).standardizedFileURL
    }

    func posixMode(_ relative: String) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: path(relative).path)
        return (attributes[.posixPermissions] as? NSNumber)?.intValue ?? -1
    }
}

/// The repository's root folder (through the symlinks of a scratch package, if any).
let repositoryRoot = URL(fileURLWithPath: #filePath).resolvingSymlinksInPath()
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
