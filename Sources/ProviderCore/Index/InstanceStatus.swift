import Foundation

/// One davgate instance on a shared index, as its heartbeat row tells it:
/// what `davgate status` and the status page list under "instances".
public struct InstanceStatus: Sendable, Codable, Equatable {
    /// Unique per process: host name, listening address and process id.
    public var id: String
    /// Where it listens, as its configuration says.
    public var address: String
    public var startedAt: Date
    /// Its last heartbeat, on the database's clock (instances' clocks may differ).
    public var lastSeen: Date
    /// A heartbeat within `InstanceStatus.aliveWithin`; a stopped instance
    /// removes its row, a killed one stays listed as not alive for an hour.
    public var alive: Bool
    /// Uploads it was running at its last heartbeat.
    public var uploadsRunning: Int
    /// The instance that answered this status.
    public var answering: Bool

    public init(id: String, address: String, startedAt: Date, lastSeen: Date, alive: Bool, uploadsRunning: Int, answering: Bool = false) {
        self.id = id
        self.address = address
        self.startedAt = startedAt
        self.lastSeen = lastSeen
        self.alive = alive
        self.uploadsRunning = uploadsRunning
        self.answering = answering
    }

    /// How often a running instance beats.
    public static let beatInterval = Duration.seconds(2)
    /// How recent a beat must be for the instance to count as alive.
    public static let aliveWithin: TimeInterval = 10
    /// How long a killed instance stays listed.
    public static let forgottenAfter: TimeInterval = 3600
}
