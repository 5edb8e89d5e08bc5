import Foundation
import PostgresNIO

/// The change feed, as `SQLiteIndex+changes` defines it; the triggers of
/// the schema write it, numbered by `feed.last_seq` in commit order.
extension PostgresIndex {
    func feedPosition() async throws -> (identity: String, oldest: Int64, latest: Int64) {
        try await read { t in try await t.feedPosition() }
    }

    func changes(domain: String, below folder: Int64, at path: ItemPath, infinite: Bool, since sequence: Int64, limit: Int?) async throws
        -> (present: [(Item, ItemPath)], removed: [ItemPath], covered: Int64, truncated: Bool) {
        try await snapshot { t in
            let latest = try await t.feedPosition().latest
            let scope: PostgresQuery = infinite
                ? """
                    WITH RECURSIVE folders(id) AS (
                        SELECT \(folder)::bigint UNION ALL SELECT item.id FROM item JOIN folders ON item.parent_id = folders.id WHERE item.is_folder)
                    SELECT seq, parent_id, name, kind FROM change
                    WHERE domain = \(domain) AND seq > \(sequence) AND parent_id IN (SELECT id FROM folders) ORDER BY seq
                    """
                : "SELECT seq, parent_id, name, kind FROM change WHERE parent_id = \(folder) AND domain = \(domain) AND seq > \(sequence) ORDER BY seq"
            var collected = ChangedPlaces(latest: latest, limit: limit)
            for try await row in try await t.connection.query(scope, logger: t.logger) {
                let (seq, parent, name, kind) = try row.decode((Int64, Int64, String, String).self)
                guard collected.add(sequence: seq, parent: parent, name: name, kind: kind) else { break }
            }
            collected.finish()

            var present: [(Item, ItemPath)] = []
            var removed: [ItemPath] = []
            var parentPaths: [Int64: ItemPath] = [folder: path]
            // A place reached twice (a folder that arrived, then a change
            // inside it) is reported once.
            var reported = Set<ItemPath>()
            for place in collected.places {
                let parentPath: ItemPath
                if let known = parentPaths[place.parent] {
                    parentPath = known
                } else {
                    parentPath = try await t.path(of: place.parent)
                    parentPaths[place.parent] = parentPath
                }
                let placePath = parentPath + [place.name]
                guard reported.insert(placePath).inserted else { continue }
                guard let item = try await t.child(of: place.parent, named: place.name) else {
                    removed.append(placePath)
                    continue
                }
                present.append((item, placePath))
                if infinite && item.isFolder && collected.arrived.contains(place) {
                    let later = collected.truncated ? try await t.placesChanged(below: item.id, after: collected.covered) : [:]
                    let members = try await t.descendantsWithPaths(of: item.id, at: placePath)
                    for (member, memberPath) in ChangedPlaces.membersToReport(members, later: later)
                    where reported.insert(memberPath).inserted {
                        present.append((member, memberPath))
                    }
                }
            }
            return (present, removed, max(collected.covered, sequence), collected.truncated)
        }
    }

    @discardableResult
    func compactChanges(olderThan age: TimeInterval, keep: Int) async throws -> Int {
        try await write { t in
            let cutoff = try await t.rows("""
                SELECT max(seq) FROM change
                WHERE at < extract(epoch FROM clock_timestamp()) - \(age)
                  AND seq <= (SELECT COALESCE(max(seq), 0) FROM change) - \(Int64(keep))
                """).first.flatMap { try $0.decode(Int64?.self) }
            guard let cutoff else { return 0 }
            let removed = try await t.rows("DELETE FROM change WHERE seq <= \(cutoff) RETURNING seq").count
            try await t.execute("UPDATE feed SET compacted_through = GREATEST(compacted_through, \(cutoff)) WHERE id = 1")
            return removed
        }
    }
}

extension PostgresTransaction {
    /// `last_seq` is the highest number ever given, also after the newest
    /// rows were compacted away.
    func feedPosition() async throws -> (identity: String, oldest: Int64, latest: Int64) {
        let row = try await rows("SELECT identity, compacted_through, last_seq FROM feed WHERE id = 1")[0]
        let (identity, oldest, latest) = try row.decode((String, Int64, Int64).self)
        return (identity, oldest, latest)
    }
}

extension PostgresTransaction {
    /// As `SQLiteIndex.placesChanged`.
    func placesChanged(below folder: Int64, after sequence: Int64) async throws -> [ChangedPlaces.Place: Bool] {
        var places: [ChangedPlaces.Place: Bool] = [:]
        for row in try await rows("""
            WITH RECURSIVE folders(id) AS (
                SELECT \(folder)::bigint UNION ALL SELECT item.id FROM item JOIN folders ON item.parent_id = folders.id WHERE item.is_folder)
            SELECT parent_id, name, bool_or(kind = 'new') FROM change WHERE seq > \(sequence) AND parent_id IN (SELECT id FROM folders)
            GROUP BY parent_id, name
            """) {
            let (parent, name, arrived) = try row.decode((Int64, String, Bool).self)
            places[ChangedPlaces.Place(parent: parent, name: name)] = arrived
        }
        return places
    }
}
