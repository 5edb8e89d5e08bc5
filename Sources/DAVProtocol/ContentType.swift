/// `getcontenttype` and the `Content-Type` of GET, decided by the name's
/// extension only. Content is never sniffed: sniffing during PROPFIND made
/// rclone, ownCloud and Pydio read every file of a listing.
public enum ContentType {
    /// The media type for a file name, e.g. `text/plain; charset=utf-8` for
    /// `notes.txt`; `application/octet-stream` when the extension is unknown or
    /// there is none (a leading dot, as in `.bashrc`, is not an extension).
    public static func forName(_ name: String) -> String {
        // Among the bytes, not the characters: every PROPFIND member asks,
        // and a scan by Character costs more than the rest of this.
        let bytes = name.utf8
        guard let dot = bytes.lastIndex(of: UInt8(ascii: ".")), dot != bytes.startIndex else { return fallback }
        let ext = Substring(bytes[bytes.index(after: dot)...])
        return served[String(ext)] ?? served[ext.lowercased()] ?? fallback
    }

    /// `table` as served: text with its charset.
    private static let served = table.mapValues { $0.hasPrefix("text/") ? $0 + "; charset=utf-8" : $0 }

    /// What an unknown file is served as.
    public static let fallback = "application/octet-stream"

    private static let table: [String: String] = [
        // Text and markup
        "txt": "text/plain", "text": "text/plain", "log": "text/plain", "conf": "text/plain",
        "ini": "text/plain", "md": "text/markdown", "markdown": "text/markdown",
        "html": "text/html", "htm": "text/html", "xhtml": "application/xhtml+xml",
        "css": "text/css", "js": "text/javascript", "mjs": "text/javascript",
        "json": "application/json", "xml": "application/xml", "xsl": "application/xml",
        "csv": "text/csv", "tsv": "text/tab-separated-values", "rtf": "application/rtf",
        "ics": "text/calendar", "vcf": "text/vcard", "yaml": "application/yaml", "yml": "application/yaml",
        "toml": "application/toml", "rst": "text/x-rst", "tex": "application/x-tex",
        // Source code
        "sh": "application/x-sh", "py": "text/x-python", "c": "text/x-c", "h": "text/x-c",
        "cc": "text/x-c++", "cpp": "text/x-c++", "hpp": "text/x-c++", "swift": "text/x-swift",
        "go": "text/x-go", "rs": "text/x-rust", "java": "text/x-java", "kt": "text/x-kotlin",
        "rb": "text/x-ruby", "pl": "text/x-perl", "php": "application/x-httpd-php",
        "ts": "text/typescript", "sql": "application/sql", "diff": "text/x-diff", "patch": "text/x-diff",
        // Images
        "png": "image/png", "jpg": "image/jpeg", "jpeg": "image/jpeg", "gif": "image/gif",
        "svg": "image/svg+xml", "webp": "image/webp", "ico": "image/vnd.microsoft.icon",
        "bmp": "image/bmp", "tif": "image/tiff", "tiff": "image/tiff", "avif": "image/avif",
        "heic": "image/heic", "heif": "image/heif",
        // Audio and video
        "mp3": "audio/mpeg", "m4a": "audio/mp4", "aac": "audio/aac", "wav": "audio/wav",
        "ogg": "audio/ogg", "oga": "audio/ogg", "opus": "audio/ogg", "flac": "audio/flac",
        "mid": "audio/midi", "midi": "audio/midi",
        "mp4": "video/mp4", "m4v": "video/mp4", "webm": "video/webm", "mkv": "video/x-matroska",
        "mov": "video/quicktime", "avi": "video/x-msvideo", "ogv": "video/ogg", "mpeg": "video/mpeg",
        "mpg": "video/mpeg", "wmv": "video/x-ms-wmv", "3gp": "video/3gpp",
        // Archives and disk images
        "zip": "application/zip", "gz": "application/gzip", "tgz": "application/gzip",
        "tar": "application/x-tar", "bz2": "application/x-bzip2", "xz": "application/x-xz",
        "zst": "application/zstd", "7z": "application/x-7z-compressed", "rar": "application/vnd.rar",
        "iso": "application/x-iso9660-image", "dmg": "application/x-apple-diskimage",
        "jar": "application/java-archive",
        // Packages and executables
        "exe": "application/vnd.microsoft.portable-executable", "msi": "application/x-msi",
        "deb": "application/vnd.debian.binary-package", "rpm": "application/x-rpm",
        "apk": "application/vnd.android.package-archive", "wasm": "application/wasm",
        // Documents
        "pdf": "application/pdf", "epub": "application/epub+zip",
        "doc": "application/msword",
        "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        "xls": "application/vnd.ms-excel",
        "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        "ppt": "application/vnd.ms-powerpoint",
        "pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
        "odt": "application/vnd.oasis.opendocument.text",
        "ods": "application/vnd.oasis.opendocument.spreadsheet",
        "odp": "application/vnd.oasis.opendocument.presentation",
        "odg": "application/vnd.oasis.opendocument.graphics",
        "pages": "application/vnd.apple.pages", "numbers": "application/vnd.apple.numbers",
        "key": "application/vnd.apple.keynote",
        // Fonts
        "woff": "font/woff", "woff2": "font/woff2", "ttf": "font/ttf", "otf": "font/otf",
    ]
}
