import DAVXML

/// The body of a PROPPATCH (RFC 4918 sections 9.2 and 14.19):
/// `<!ELEMENT propertyupdate (remove | set)+ >`, each `set`/`remove` holding one
/// `DAV:prop`.
public struct PropertyUpdate: Sendable, Equatable {
    public enum Instruction: Sendable, Equatable {
        /// Set a property: the property element itself, with its attributes and
        /// children (the value, possibly mixed content in other namespaces).
        case set(XMLElement)
        /// Remove a property by name (its content in the request is ignored).
        case remove(XMLName)

        /// The property the instruction is about.
        public var name: XMLName {
            switch self {
            case .set(let element): element.name
            case .remove(let name): name
            }
        }
    }

    /// In document order: "Instructions MUST be processed in document order"
    /// (section 9.2).
    public var instructions: [Instruction]

    public init(instructions: [Instruction]) {
        self.instructions = instructions
    }

    /// Interprets a parsed body.
    /// - Throws: ``DAVRequestError/unexpectedRoot(_:)`` unless the root is
    ///   `DAV:propertyupdate`; ``DAVRequestError/missing(_:)`` when there is no
    ///   `set`/`remove` or one lacks its `prop`; ``DAVRequestError/invalid(_:)``
    ///   when a `prop` names no property.
    public static func parse(_ root: XMLElement) throws(DAVRequestError) -> PropertyUpdate {
        guard root.name == .dav("propertyupdate") else { throw .unexpectedRoot(root.name) }
        var instructions: [Instruction] = []
        for child in root.elements {
            let isSet: Bool
            switch child.name {
            case .dav("set"): isSet = true
            case .dav("remove"): isSet = false
            default: continue  // unknown elements are ignored (section 17)
            }
            guard let prop = child.first(.dav("prop")) else { throw .missing("prop") }
            let properties = prop.elements
            guard !properties.isEmpty else { throw .invalid("\(child.name.local) with an empty prop") }
            for property in properties {
                instructions.append(isSet ? .set(property) : .remove(property.name))
            }
        }
        guard !instructions.isEmpty else { throw .missing("set or remove") }
        return PropertyUpdate(instructions: instructions)
    }
}
