/// The places a run of change rows names, read oldest first: each place
/// once, in the order of its first change, up to `limit` places. Both index
/// implementations feed it their rows, so a sync token means the same
/// whichever database answers.
///
/// The feed answers by place (a folder and a name in it), since a place can
/// change hands (a MOVE away, then a new file under the same name) and the
/// client knows names.
struct ChangedPlaces {
    struct Place: Sendable, Hashable {
        let parent: Int64
        let name: String
    }

    private(set) var places: [Place] = []
    /// Places where something arrived (made, copied or moved in).
    private(set) var arrived = Set<Place>()
    /// The last change read; the feed's latest when every row was read.
    private(set) var covered: Int64
    /// Whether rows were left unread because `limit` places were reached.
    private(set) var truncated = false
    private var known = Set<Place>()
    private let limit: Int?
    private let latest: Int64

    init(latest: Int64, limit: Int?) {
        self.latest = latest
        self.limit = limit
        covered = latest
    }

    /// Takes one change row; false when the limit is reached and reading stops.
    mutating func add(sequence: Int64, parent: Int64, name: String, kind: String) -> Bool {
        let place = Place(parent: parent, name: name)
        if !known.contains(place) {
            if let limit, places.count == limit {
                truncated = true
                return false
            }
            known.insert(place)
            places.append(place)
        }
        if kind == "new" { arrived.insert(place) }
        covered = sequence
        return true
    }

    /// Once every row was read, the answer covers the feed up to its latest.
    mutating func finish() {
        if !truncated { covered = latest }
    }
}

extension ChangedPlaces {
    /// What a page reports of an arrived folder's members (parents first,
    /// as `descendants` reads them), given the places below it that changed
    /// after the page's end (`later`; true: one arrived there then). A page
    /// read to the feed's end reports them all. A page cut short leaves a
    /// member that changed later to the page that reads that change, and
    /// below one that arrived later, everything: that page reports it with
    /// its arrival. Each is then reported once across the pages.
    static func membersToReport(_ members: [(Item, ItemPath)], later: [Place: Bool]) -> [(Item, ItemPath)] {
        guard !later.isEmpty else { return members }
        var arrivingLater = Set<Int64>()
        return members.filter { member, _ in
            let changedLater = later[member.place]
            if changedLater == true || member.parentID.map(arrivingLater.contains) == true {
                if member.isFolder { arrivingLater.insert(member.id) }
                return false
            }
            return changedLater == nil
        }
    }
}

extension Item {
    /// Where the item is, as the change feed names places (a root has none
    /// in its domain's feed: its parent is taken as 0).
    var place: ChangedPlaces.Place { ChangedPlaces.Place(parent: parentID ?? 0, name: name) }
}
