import ArgumentParser
import Foundation
import GatewaySetup
import Users

/// `davgate user ...`: gateway users, stored as bcrypt verifiers only.
struct UserCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "user",
        abstract: "Manage the users who may log in to davgate.",
        subcommands: [Add.self, Passwd.self, Remove.self, List.self]
    )

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Add a user; the password is read from standard input.")
        @Argument(help: "The user name.") var name: String
        @Flag(help: "Read the password from standard input (required: passwords never go on the command line).")
        var passwordStdin = false
        @OptionGroup var options: ConfigOption

        func run() throws {
            let store = try openUsers(options)
            try store.add(name, password: try readPassword(passwordStdin))
            say("Added user \(name).")
        }
    }

    struct Passwd: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Set a user's password from standard input.")
        @Argument(help: "The user name.") var name: String
        @Flag(help: "Read the password from standard input.") var passwordStdin = false
        @OptionGroup var options: ConfigOption

        func run() throws {
            let store = try openUsers(options)
            try store.setPassword(name, password: try readPassword(passwordStdin))
            say("Changed the password of \(name).")
        }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove a user.")
        @Argument(help: "The user name.") var name: String
        @OptionGroup var options: ConfigOption

        func run() throws {
            try openUsers(options).remove(name)
            say("Removed user \(name).")
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the users.")
        @OptionGroup var options: ConfigOption

        func run() throws {
            for name in try openUsers(options).names { print(name) }
        }
    }
}

private func openUsers(_ options: ConfigOption) throws -> UserStore {
    let config = try loadConfig(options.config)
    try FileManager.default.createDirectory(at: config.server.state, withIntermediateDirectories: true)
    return try UserStore(file: config.server.usersFile)
}

private func readPassword(_ fromStdin: Bool) throws -> String {
    guard fromStdin else {
        throw ValidationError("pass --password-stdin and write the password to standard input, e.g. printf '%s' \"$PW\" | davgate user add NAME --password-stdin")
    }
    guard let line = readLine(strippingNewline: true), !line.isEmpty else {
        throw ValidationError("no password on standard input")
    }
    return line
}
