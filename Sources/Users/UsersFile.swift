import Foundation

/// The on-disk form of the users file, `users.json`:
/// `{"version":1,"users":[{"name":"admin","bcrypt":"$2b$12$...","created":"ISO8601"}]}`.
///
/// Only bcrypt verifiers are stored, never a password.
struct UsersFile: Codable {
    /// The format this davgate writes; a file with a higher version is refused, not rewritten.
    static let currentVersion = 1

    struct Entry: Codable, Equatable {
        var name: String
        var bcrypt: String
        var created: Date
    }

    var version: Int
    var users: [Entry]

    static func decode(_ data: Data, file: URL) throws(UserStoreError) -> [String: Entry] {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        let decoded: UsersFile
        do {
            decoded = try decoder.decode(UsersFile.self, from: data)
        } catch {
            throw .io("\(file.path): not a davgate users file (\(error))")
        }
        guard decoded.version <= currentVersion else {
            throw .io("\(file.path): written by a newer davgate (version \(decoded.version))")
        }
        var users: [String: Entry] = [:]
        for entry in decoded.users {
            guard UserName.isValid(entry.name) else {
                throw .io("\(file.path): invalid user name \"\(entry.name)\"")
            }
            guard users.updateValue(entry, forKey: entry.name) == nil else {
                throw .io("\(file.path): user \"\(entry.name)\" appears twice")
            }
        }
        return users
    }

    static func encode(_ users: [String: Entry]) throws(UserStoreError) -> Data {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        let file = UsersFile(version: currentVersion, users: users.values.sorted { $0.name < $1.name })
        do {
            var data = try encoder.encode(file)
            data.append(UInt8(ascii: "\n"))
            return data
        } catch {
            throw .io("cannot encode the users file: \(error)")
        }
    }
}
