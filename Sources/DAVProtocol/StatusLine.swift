/// Status lines inside multistatus bodies (RFC 4918 section 14.28:
/// `<status>` holds an HTTP status-line).
public enum StatusLine {
    /// `HTTP/1.1 424 Failed Dependency`.
    public static func line(_ code: Int) -> String {
        // Every property of a PROPFIND's members is under this one.
        if code == 200 { return ok }
        return "HTTP/1.1 \(code) \(reason(code))"
    }

    private static let ok = "HTTP/1.1 200 OK"

    /// The reason phrase (RFC 9110 section 15, RFC 4918 section 11, RFC 6585);
    /// `Unknown` for codes davgate never sends.
    public static func reason(_ code: Int) -> String {
        switch code {
        case 100: "Continue"
        case 200: "OK"
        case 201: "Created"
        case 202: "Accepted"
        case 204: "No Content"
        case 206: "Partial Content"
        case 207: "Multi-Status"
        case 301: "Moved Permanently"
        case 302: "Found"
        case 304: "Not Modified"
        case 307: "Temporary Redirect"
        case 308: "Permanent Redirect"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 406: "Not Acceptable"
        case 408: "Request Timeout"
        case 409: "Conflict"
        case 410: "Gone"
        case 411: "Length Required"
        case 412: "Precondition Failed"
        case 413: "Content Too Large"
        case 414: "URI Too Long"
        case 415: "Unsupported Media Type"
        case 416: "Range Not Satisfiable"
        case 417: "Expectation Failed"
        case 422: "Unprocessable Content"
        case 423: "Locked"
        case 424: "Failed Dependency"
        case 428: "Precondition Required"
        case 429: "Too Many Requests"
        case 431: "Request Header Fields Too Large"
        case 500: "Internal Server Error"
        case 501: "Not Implemented"
        case 502: "Bad Gateway"
        case 503: "Service Unavailable"
        case 504: "Gateway Timeout"
        case 505: "HTTP Version Not Supported"
        case 507: "Insufficient Storage"
        case 508: "Loop Detected"
        default: "Unknown"
        }
    }
}
