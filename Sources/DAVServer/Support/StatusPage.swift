import DAVProtocol
import DAVXML
import Foundation
import ProviderCore

/// The status page for people: per domain, the upstream's health, what the
/// cache holds, uploads running and conflict copies to resolve. Styled like
/// the browser listing, self-contained.
enum StatusPage {
    /// `1 file`, `2 files`.
    static func count(_ n: Int, _ noun: String) -> String {
        "\(n) \(noun)\(n == 1 ? "" : "s")"
    }

    /// A conflict copy's entry: the copy, and the versions of the file it
    /// conflicts with, which list it beside that file's history.
    static func conflict(_ domain: String, _ path: String) -> String {
        let segments = path.split(separator: "/").map(String.init)
        var entry = "<li><a href=\"\(XMLEscaping.attribute(DAVPath(segments: [domain] + segments).href(collection: false)))\">\(XMLEscaping.text(path))</a>"
        if let name = segments.last, let original = Provider.conflictOriginal(ofName: name) {
            let versions = DAVPath(segments: [ServiceExchange.folder, VersionsExchange.page, domain] + segments.dropLast() + [original])
            entry += " · <a class=\"other-side\" href=\"\(XMLEscaping.attribute(versions.href(collection: false)))\">versions of \(XMLEscaping.text(original))</a>"
        }
        return entry + "</li>"
    }

    /// With a shared index: the instances on it.
    static func instances(_ instances: [InstanceStatus]) -> String {
        let rows = instances.map { instance in
            let state = instance.alive ? "<span class=\"state state-materialized\">alive</span> \(count(instance.uploadsRunning, "upload")) running"
                : "<span class=\"state state-conflict\">not alive</span> last seen \(BrowserPage.shortDate(instance.lastSeen))"
            return "<tr data-instance=\"\(XMLEscaping.attribute(instance.id))\"><th>\(XMLEscaping.text(instance.address))\(instance.answering ? " (this one)" : "")</th>"
                + "<td>\(state) · up since \(BrowserPage.shortDate(instance.startedAt)) · \(XMLEscaping.text(instance.id))</td></tr>"
        }
        return "<section class=\"instances\"><h2>Instances on the shared index: \(instances.filter(\.alive).count) alive</h2><table>\(rows.joined())</table></section>\n"
    }

    static func html(_ status: ServerStatus) -> String {
        var body = status.instances.map(instances) ?? ""
        for domain in status.domains {
            let health: String
            if domain.health.failing {
                health = "<span class=\"state state-conflict\">failing</span> \(XMLEscaping.text(domain.health.lastError ?? ""))"
                    + (domain.health.lastErrorAt.map { " (since \(BrowserPage.shortDate($0)))" } ?? "")
            } else if let success = domain.health.lastSuccess {
                health = "<span class=\"state state-materialized\">ok</span> last answer \(BrowserPage.shortDate(success))"
            } else {
                health = "<span class=\"state\">not asked yet</span>"
            }
            let waiting = domain.uploads.queue.isEmpty ? ""
                : "<ul class=\"queue\">" + domain.uploads.queue.map { "<li>\(XMLEscaping.text($0.path)): \(XMLEscaping.text($0.summary))</li>" }.joined()
                + (domain.uploads.unlisted > 0 ? "<li>and \(domain.uploads.unlisted) more</li>" : "") + "</ul>"
            let failed = domain.uploads.failed.isEmpty ? ""
                : ", \(domain.uploads.failed.count) failed:<ul>" + domain.uploads.failed.map { "<li>\(XMLEscaping.text($0.path)): \(XMLEscaping.text($0.error)) (\($0.attempts) attempts)</li>" }.joined() + "</ul>"
            let conflicts = domain.conflicts.isEmpty ? "none"
                : "<ul>" + domain.conflicts.map { conflict(domain.name, $0.path) }.joined() + "</ul>"
            body += """
                <section data-domain="\(XMLEscaping.attribute(domain.name))"><h2><a href="\(XMLEscaping.attribute(DAVPath(segments: [domain.name]).href(collection: true)))">\(XMLEscaping.text(domain.name))</a></h2>
                <table>
                <tr><th>Upstream</th><td>\(XMLEscaping.text(domain.upstream))</td></tr>
                <tr><th>Health</th><td>\(health)</td></tr>
                <tr><th>Items</th><td>\(count(domain.items.files, "file")) (\(BrowserPage.humanSize(domain.items.bytesListed))), \(count(domain.items.folders, "folder"))</td></tr>
                <tr><th>Cache</th><td data-cache-bytes="\(domain.cache.bytes)">\(BrowserPage.humanSize(domain.cache.bytes)) in \(count(domain.cache.files, "file")); \(domain.items.local) of \(count(domain.items.files, "file")) local</td></tr>
                <tr><th>States</th><td data-states="\(domain.items.stateSummary)">\(domain.items.stateSummary)</td></tr>
                <tr><th>Uploads</th><td data-pending="\(domain.uploads.pending)">\(domain.uploads.inFlight) running, \(domain.uploads.pending) pending (\(BrowserPage.humanSize(domain.uploads.pendingBytes)))\(waiting)\(failed)</td></tr>
                <tr><th>Conflicts</th><td class="conflicts">\(conflicts)</td></tr>
                </table></section>

                """
        }
        return """
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
            <title>Status · davgate</title>
            <style>
            :root{color-scheme:light dark;--line:#8882;--muted:#777}
            body{font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;max-width:64rem;margin:2rem auto;padding:0 1rem}
            h1{font-size:1.25rem}h2{font-size:1.05rem;margin-top:2rem}table{border-collapse:collapse;width:100%}
            th{text-align:left;color:var(--muted);font-weight:600;width:9rem;vertical-align:top}th,td{padding:.35rem .6rem;border-bottom:1px solid var(--line)}
            ul{margin:0;padding-left:1.2rem}.state{font-size:.75rem;padding:.1rem .5rem;border-radius:1rem;background:#8882}
            .state-materialized{background:#16a34a22}.state-conflict{background:#dc262633}footer{color:var(--muted);font-size:.85rem;margin-top:2rem}
            </style></head>
            <body><h1><a href="/">davgate</a> status</h1>
            \(body)<footer>up since \(BrowserPage.shortDate(status.startedAt)) · <a href="/.davgate/status.json">JSON</a> · <a href="/.davgate/metrics">metrics</a></footer>
            </body></html>

            """
    }
}
