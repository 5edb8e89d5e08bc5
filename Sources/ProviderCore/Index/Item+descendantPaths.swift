/// Paths for a subtree read parents first (`descendants`), as both index
/// implementations give them: each item's path is its parent's plus its
/// name, so no item needs a walk up of its own.
extension Item {
    static func withPaths(_ descendants: [Item], below folder: Int64, at path: ItemPath) -> [(Item, ItemPath)] {
        var paths: [Int64: ItemPath] = [folder: path]
        var result: [(Item, ItemPath)] = []
        for item in descendants {
            guard let parent = item.parentID, let parentPath = paths[parent] else { continue }
            let itemPath = parentPath + [item.name]
            if item.isFolder { paths[item.id] = itemPath }
            result.append((item, itemPath))
        }
        return result
    }
}
