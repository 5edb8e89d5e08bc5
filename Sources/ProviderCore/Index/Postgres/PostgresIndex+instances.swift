import Foundation
import PostgresNIO

/// Instances' heartbeats (`InstanceStatus`), timed by the database's
/// clock so instances whose clocks differ agree on who is alive.
extension PostgresIndex {
    func beat(instance id: String, address: String, started: Date, uploads: Int) async throws {
        try await read { t in
            try await t.execute("""
                INSERT INTO instance (id, address, started, heartbeat_at, uploads)
                VALUES (\(id), \(address), \(started.timeIntervalSince1970), extract(epoch FROM clock_timestamp()), \(uploads))
                ON CONFLICT (id) DO UPDATE SET address = EXCLUDED.address, heartbeat_at = EXCLUDED.heartbeat_at, uploads = EXCLUDED.uploads
                """)
            try await t.execute("DELETE FROM instance WHERE heartbeat_at < extract(epoch FROM clock_timestamp()) - \(InstanceStatus.forgottenAfter)")
        }
    }

    func instances() async throws -> [InstanceStatus] {
        try await read { t in
            try await t.rows("""
                SELECT id, address, started, heartbeat_at, heartbeat_at > extract(epoch FROM clock_timestamp()) - \(InstanceStatus.aliveWithin), uploads
                FROM instance ORDER BY started, id
                """).map { row in
                let (id, address, started, seen, alive, uploads) = try row.decode((String, String, Double, Double, Bool, Int32).self)
                return InstanceStatus(id: id, address: address, startedAt: Date(timeIntervalSince1970: started),
                                      lastSeen: Date(timeIntervalSince1970: seen), alive: alive, uploadsRunning: Int(uploads))
            }
        }
    }

    func leave(instance id: String) async throws {
        try await read { t in try await t.execute("DELETE FROM instance WHERE id = \(id)") }
    }
}
