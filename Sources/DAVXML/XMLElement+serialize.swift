extension XMLElement {
    /// Serializes the element as a self-contained fragment: every namespace it
    /// uses is declared on the element that first needs it, with generated
    /// prefixes, and names in no namespace are written unprefixed under
    /// `xmlns=""`. The fragment can therefore be embedded anywhere in a
    /// response (whatever prefixes the surrounding document uses) and parses
    /// back to an equal tree. Dead properties are stored this way so that
    /// PROPFIND returns them with their namespaces exactly as they were set.
    public func serialized() -> String {
        var out = ""
        var scope = NamespaceScope()
        write(into: &out, scope: &scope)
        return out
    }

    private func write(into out: inout String, scope: inout NamespaceScope) {
        var declarations = ""
        let saved = scope
        let qname = scope.qualify(name, declarations: &declarations)
        var attrs = ""
        for attribute in attributes {
            let aq: String
            if attribute.name.namespace.isEmpty {
                aq = attribute.name.local
            } else {
                aq = scope.prefixed(attribute.name, declarations: &declarations)
            }
            attrs += " \(aq)=\"\(XMLEscaping.attribute(attribute.value))\""
        }
        out += "<\(qname)\(declarations)\(attrs)"
        if children.isEmpty {
            out += "/>"
        } else {
            out += ">"
            for child in children {
                switch child {
                case .text(let t): out += XMLEscaping.text(t)
                case .element(let e): e.write(into: &out, scope: &scope)
                }
            }
            out += "</\(qname)>"
        }
        scope = saved
    }
}

/// The prefixes declared so far on the path from the fragment's root.
private struct NamespaceScope {
    var prefixes: [String: String] = [:]
    var defaultIsEmpty = false
    var counter = 0

    /// Element names: no-namespace names use the (reset) default namespace.
    mutating func qualify(_ name: XMLName, declarations: inout String) -> String {
        if name.namespace.isEmpty {
            if !defaultIsEmpty {
                declarations += " xmlns=\"\""
                defaultIsEmpty = true
            }
            return name.local
        }
        return prefixed(name, declarations: &declarations)
    }

    /// The namespace of `xml:lang` and `xml:space`. The prefix `xml` is bound
    /// to it by definition, and binding any other prefix to it is an error
    /// (Namespaces in XML 1.0, section 3), so it is never declared.
    static let xmlNamespace = "http://www.w3.org/XML/1998/namespace"

    mutating func prefixed(_ name: XMLName, declarations: inout String) -> String {
        if name.namespace == Self.xmlNamespace { return "xml:\(name.local)" }
        if let p = prefixes[name.namespace] { return "\(p):\(name.local)" }
        let p = "x\(counter)"
        counter += 1
        prefixes[name.namespace] = p
        declarations += " xmlns:\(p)=\"\(XMLEscaping.attribute(name.namespace))\""
        return "\(p):\(name.local)"
    }
}
