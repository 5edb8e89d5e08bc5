/// Names the upstream cannot hold are refused before anything is
/// acknowledged: in write-back a PUT is answered long before its upload, and
/// a name the upstream refuses would fail at every retry while the client
/// believes it saved.
extension Provider {
    /// Throws `.nameRefused` when `path` names something the store cannot
    /// create. Only new names are asked about: one already in the index came
    /// from the upstream or was admitted here. Pure and cheap, so a handler
    /// may ask before it reads a body; every creating call asks again.
    public func admit(_ path: ItemPath) throws(ProviderError) {
        try refuseReserved(path)
        if let violation = store.nameRules.violation(of: path) {
            throw .nameRefused(violation)
        }
    }

    /// The trash folder and anything below it are no place for a client's
    /// write: refused with the reason before a parent is even looked for
    /// (which would answer a vaguer 409).
    func refuseReserved(_ path: ItemPath) throws(ProviderError) {
        if ReservedNameFilter.isReserved(path) { throw .nameRefused(.reserved(name: TrashLayout.reservedName)) }
    }
}
