import Foundation
import Glibc
import DavgateTestSupport
import Testing

@testable import ServiceRuntime

/// The notifications reach a datagram socket bound the way systemd binds
/// its own, named by NOTIFY_SOCKET as a path or in the abstract namespace.
@Suite struct SystemdNotifierTests {
    @Test func sendsToAPathSocket() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("notify-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("notify.sock").path
        let listener = try NotifySocket(name: path)
        let notifier = SystemdNotifier(environment: ["NOTIFY_SOCKET": path])
        #expect(notifier.isActive)
        #expect(notifier.notify("READY=1\nSTATUS=serving") == nil)
        #expect(listener.receive() == "READY=1\nSTATUS=serving")
    }

    @Test func sendsToAnAbstractSocket() throws {
        let name = "@davgate-notify-test-\(UUID().uuidString)"
        let listener = try NotifySocket(name: name)
        let notifier = SystemdNotifier(environment: ["NOTIFY_SOCKET": name])
        #expect(notifier.notify("STOPPING=1") == nil)
        #expect(listener.receive() == "STOPPING=1")
    }

    @Test func silentWithoutAServiceManager() {
        let notifier = SystemdNotifier(environment: [:])
        #expect(!notifier.isActive)
        #expect(notifier.notify("READY=1") == nil)
        #expect(notifier.watchdogInterval == nil)
    }

    @Test func reportsASocketNobodyListensOn() {
        let notifier = SystemdNotifier(environment: ["NOTIFY_SOCKET": "/nonexistent/davgate/notify.sock"])
        let failure = notifier.notify("READY=1")
        #expect(failure?.contains("/nonexistent/davgate/notify.sock") == true)
    }

    @Test func watchdogIntervalIsForThisProcessOnly() {
        let ours = SystemdNotifier(environment: ["NOTIFY_SOCKET": "/run/x", "WATCHDOG_USEC": "3000000", "WATCHDOG_PID": "\(getpid())"])
        #expect(ours.watchdogInterval == .seconds(3))
        let unnamed = SystemdNotifier(environment: ["NOTIFY_SOCKET": "/run/x", "WATCHDOG_USEC": "500000"])
        #expect(unnamed.watchdogInterval == .milliseconds(500))
        let another = SystemdNotifier(environment: ["NOTIFY_SOCKET": "/run/x", "WATCHDOG_USEC": "3000000", "WATCHDOG_PID": "1"])
        #expect(another.watchdogInterval == nil)
        let withoutSocket = SystemdNotifier(environment: ["WATCHDOG_USEC": "3000000"])
        #expect(withoutSocket.watchdogInterval == nil)
    }
}
