import DAVProtocol
import DAVXML
import Foundation
import ProviderCore

/// The HTML of the browser listing: one self-contained page (inline style,
/// no scripts, nothing fetched from elsewhere), written in pieces so a big
/// folder streams like a PROPFIND does.
enum BrowserPage {
    static func header(title: String, breadcrumbs: [(name: String, href: String)], mountable: Bool) -> String {
        let trail = breadcrumbs.map { "<a href=\"\(XMLEscaping.attribute($0.href))\">\(XMLEscaping.text($0.name))</a>" }
            .joined(separator: " <span class=\"sep\">/</span> ")
        let mount = mountable
            ? "<a class=\"button\" href=\"?davmount\" type=\"application/davmount+xml\">Open in your file manager</a>" : ""
        return """
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>\(XMLEscaping.text(title)) · davgate</title>
            <style>
            :root{color-scheme:light dark;--line:#8882;--muted:#777}
            body{font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;max-width:64rem;margin:2rem auto;padding:0 1rem}
            header{display:flex;flex-wrap:wrap;gap:1rem;align-items:baseline;justify-content:space-between;margin-bottom:1rem}
            h1{font-size:1.25rem;font-weight:600;margin:0}h1 a{text-decoration:none;color:inherit}.sep{color:var(--muted)}
            .button{font-size:.85rem;padding:.3rem .7rem;border:1px solid var(--line);border-radius:.4rem;text-decoration:none}
            table{width:100%;border-collapse:collapse}th{font-weight:600;color:var(--muted);font-size:.8rem;text-transform:uppercase;letter-spacing:.04em}
            th,td{text-align:left;padding:.4rem .6rem;border-bottom:1px solid var(--line)}td.size,th.size{text-align:right;font-variant-numeric:tabular-nums}
            td.name a{text-decoration:none}td.folder a{font-weight:600}td.name a:hover{text-decoration:underline}
            .state{font-size:.75rem;padding:.1rem .5rem;border-radius:1rem;white-space:nowrap;background:#8882}
            .state-placeholder{background:#3b82f622}.state-materialized{background:#16a34a22}.state-partial,.state-fetching,.state-modified,.state-uploading{background:#eab30833}
            .state-conflict,.state-failed{background:#dc262633}.inherited{color:var(--muted)}footer{color:var(--muted);font-size:.85rem;margin-top:1rem}
            </style></head>
            <body><header><h1>\(trail)</h1>\(mount)</header>
            <table id="listing"><thead><tr><th>Name</th><th class="size">Size</th><th>Modified</th><th>State</th><th>Policy</th></tr></thead><tbody>

            """
    }

    /// `policy`: the content policy that applies (nil for a domain), shown
    /// muted when inherited from a folder above.
    /// - Parameter otherSide: for a conflict copy, the versions view of the
    ///   file it conflicts with, which its badge links to.
    static func row(name: String, href: String, isFolder: Bool, size: Int64, modified: Date?, state: String, policy: EffectivePolicy? = nil,
                    otherSide: String? = nil) -> String {
        // No emoji for folders: a system without an emoji font shows a box.
        let label = isFolder ? name + "/" : name
        let sizeCell = isFolder ? "" : "<span title=\"\(size) bytes\">\(humanSize(size))</span>"
        let modifiedCell = modified.map { "<time datetime=\"\(HTTPDate.iso8601($0))\">\(shortDate($0))</time>" } ?? ""
        var badge = isFolder ? "" : "<span class=\"state state-\(state)\">\(stateLabel(state))</span>"
        if let otherSide, !isFolder {
            badge = "<a class=\"other-side\" href=\"\(XMLEscaping.attribute(otherSide))\" title=\"the file this copy conflicts with, and its versions\">\(badge)</a>"
        }
        let policyCell = policy.map {
            "<span class=\"policy\($0.inherited ? " inherited" : "")\" title=\"\($0.inherited ? "inherited" : "set here")\">\($0.policy.rawValue)</span>"
        } ?? ""
        let policyData = policy.map { " data-policy=\"\($0.policy.rawValue)\"" } ?? ""
        return "<tr data-name=\"\(XMLEscaping.attribute(name))\" data-state=\"\(state)\"\(policyData)><td class=\"name\(isFolder ? " folder" : "")\"><a href=\"\(XMLEscaping.attribute(href))\">\(XMLEscaping.text(label))</a></td>"
            + "<td class=\"size\">\(sizeCell)</td><td>\(modifiedCell)</td><td>\(badge)</td><td>\(policyCell)</td></tr>\n"
    }

    static func footer(count: Int) -> String {
        "</tbody></table><footer>\(count) item\(count == 1 ? "" : "s") · served by davgate</footer></body></html>\n"
    }

    static func stateLabel(_ state: String) -> String {
        switch state {
        case "placeholder": "☁ in the cloud"
        case "materialized": "✓ local"
        case "partial": "◐ partly local"
        case "fetching": "↓ fetching"
        case "conflict": "⚠ conflict copy"
        case "modified": "↑ upload pending"
        case "uploading": "↑ uploading"
        case "failed": "✗ upload failed"
        default: state
        }
    }

    /// 1,536 -> "1.5 KB": decimal units, as file managers show them.
    static func humanSize(_ bytes: Int64) -> String {
        if bytes < 1000 { return "\(bytes) B" }
        let units = ["KB", "MB", "GB", "TB", "PB"]
        var value = Double(bytes) / 1000
        var unit = 0
        while value >= 1000 && unit < units.count - 1 {
            value /= 1000
            unit += 1
        }
        return String(format: value < 10 ? "%.1f" : "%.0f", value) + " " + units[unit]
    }

    static func shortDate(_ date: Date) -> String {
        let c = Calendar(identifier: .gregorian).dateComponents(in: TimeZone(identifier: "UTC")!, from: date)
        func two(_ n: Int?) -> String { String(format: "%02d", n ?? 0) }
        return "\(c.year ?? 0)-\(two(c.month))-\(two(c.day)) \(two(c.hour)):\(two(c.minute)) UTC"
    }
}
