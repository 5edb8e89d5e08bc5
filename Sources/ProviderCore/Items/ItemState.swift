/// Where an item's content is and what is being done with it: the File
/// Provider's download and upload states in one value, the single answer
/// that PROPFIND (`g:state`), the browser listing, `davgate status` and
/// eviction read. Only `ItemStateMachine` moves an item from one to another.
public enum ItemState: Sendable, Equatable {
    case folder
    /// In the upstream only: listed with its metadata, fetched on first read.
    case placeholder
    /// Its whole content is being fetched from the upstream right now.
    case fetching
    /// Some ranges are local (read with Range), the rest still upstream.
    case partial(bytesLocal: Int64)
    /// The current version is in the local cache.
    case materialized
    /// Written here, waiting in the journal for its upload (write-back).
    case modified
    /// Being uploaded right now.
    case uploading(bytesSent: Int64)
    /// Its upload was given up after `upload_max_age`: kept here, reported.
    case failed
    /// The kept-both copy of an edit the upstream's version overtook: local,
    /// and kept local (never evicted) until someone writes or removes it.
    case conflict

    /// The states without their payloads: what `g:state`, the browser
    /// listing and the status page's counts name.
    public enum Name: String, Sendable, CaseIterable, Codable, CodingKeyRepresentable, Comparable {
        case folder, placeholder, fetching, partial, materialized, modified, uploading, failed, conflict

        /// Whether the whole current content is local: a read needs no upstream.
        public var isLocal: Bool {
            switch self {
            case .materialized, .modified, .uploading, .failed, .conflict: true
            case .folder, .placeholder, .fetching, .partial: false
            }
        }

        public static func < (a: Name, b: Name) -> Bool {
            allCases.firstIndex(of: a)! < allCases.firstIndex(of: b)!
        }
    }

    public var name: Name {
        switch self {
        case .folder: .folder
        case .placeholder: .placeholder
        case .fetching: .fetching
        case .partial: .partial
        case .materialized: .materialized
        case .modified: .modified
        case .uploading: .uploading
        case .failed: .failed
        case .conflict: .conflict
        }
    }

    /// What survives a restart: a fetch or an upload in flight does not
    /// (the fetch starts again on the next read, the upload from the
    /// journal), so the row keeps the state they started from.
    public var stored: StoredState {
        switch self {
        case .folder: .folder
        case .placeholder, .fetching, .partial: .placeholder
        case .materialized: .materialized
        case .modified, .uploading: .modified
        case .failed: .failed
        case .conflict: .conflict
        }
    }

    /// Whether the whole current content is local: a read needs no upstream.
    public var isLocal: Bool { name.isLocal }

    /// Bytes of the current content that are local.
    public func bytesLocal(size: Int64) -> Int64 {
        switch self {
        case .partial(let bytes): bytes
        default: isLocal ? size : 0
        }
    }
}

/// The part of an `ItemState` kept in the item's row (`item.state`).
public enum StoredState: String, Sendable, CaseIterable, Codable {
    case folder, placeholder, materialized, modified, failed, conflict

    public var isLocal: Bool { state.isLocal }

    /// Written here and not delivered yet: the local content is the truth.
    public var isPendingUpload: Bool { self == .modified || self == .failed }

    public var state: ItemState {
        switch self {
        case .folder: .folder
        case .placeholder: .placeholder
        case .materialized: .materialized
        case .modified: .modified
        case .failed: .failed
        case .conflict: .conflict
        }
    }
}
