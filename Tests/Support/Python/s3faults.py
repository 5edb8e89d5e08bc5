#!/usr/bin/env python3
"""An HTTP/1.1 reverse proxy in front of a real S3 server that injects faults.

Every request is forwarded byte for byte: the request line, every header
(Host included, so a signature made for the proxy's address still checks out
where the backend verifies it), and the body as it streams, with
Content-Length or chunked framing; the answer comes back the same way. Each
client connection gets its own backend connection. Python's standard library
only, one thread per client connection.

Faults are rules, set at run time on the proxy's own port under /__faults__,
a path no S3 request has (bucket names hold no underscore):

  POST   /__faults__   a rule, or a JSON list of rules, added after those set
  GET    /__faults__   the state: requests received by kind, the rules with
                       their hits, and a log of every request (its kind,
                       method, target, the status answered, none when
                       dropped, and the fault applied, if any)
  DELETE /__faults__   forgets every rule, count and log line

A rule:
  kind     an S3 operation name (see `operation`), a list of them, or absent
           for every request
  skip     how many matching requests pass untouched first (default 0)
  times    how many matching requests it then hits (default 1, -1 for all)
  action   "error": answered by the proxy with `status` (default 500) and S3's
             XML error body with `code` (default InternalError), never
             forwarded;
           "cut": forwarded, but the answer's body is cut after `after` bytes
             (counted on the wire after the head) and the connection closed;
           "drop": the connection closed without an answer, after `seconds`
             (default 0), never forwarded.
The first rule that a request matches and that is due applies; a request
counts towards every matching rule's `skip` even when an earlier rule took it.

Usage: s3faults.py --backend HOST:PORT [--port N]
Prints `listening on 127.0.0.1:PORT` once it accepts connections.
"""
import argparse
import json
import select
import socket
import socketserver
import sys
import threading
import time
from urllib.parse import parse_qsl, urlsplit

CONTROL = "/__faults__"
IO_TIMEOUT = 300
REASONS = {400: "Bad Request", 403: "Forbidden", 404: "Not Found", 409: "Conflict", 412: "Precondition Failed",
           500: "Internal Server Error", 503: "Slow Down"}


def operation(method, target, headers):
    """The S3 operation a request asks for, from its method, path and query."""
    parts = urlsplit(target)
    query = dict(parse_qsl(parts.query, keep_blank_values=True))
    segments = parts.path.lstrip("/").split("/", 1)
    has_key = len(segments) == 2 and segments[1] != ""
    if parts.path in ("", "/"):
        return "ListBuckets"
    if method == "PUT":
        if "partNumber" in query and "uploadId" in query:
            return "UploadPartCopy" if "x-amz-copy-source" in headers else "UploadPart"
        if has_key:
            return "CopyObject" if "x-amz-copy-source" in headers else "PutObject"
        return "CreateBucket"
    if method == "POST":
        if "uploads" in query:
            return "CreateMultipartUpload"
        if "uploadId" in query:
            return "CompleteMultipartUpload"
        if "delete" in query:
            return "DeleteObjects"
        return "PostObject"
    if method == "DELETE":
        if "uploadId" in query:
            return "AbortMultipartUpload"
        return "DeleteObject" if has_key else "DeleteBucket"
    if method == "HEAD":
        return "HeadObject" if has_key else "HeadBucket"
    if method == "GET":
        if "uploadId" in query:
            return "ListParts"
        if has_key:
            return "GetObject"
        if "uploads" in query:
            return "ListMultipartUploads"
        return "ListObjectsV2" if query.get("list-type") == "2" else "ListObjects"
    return method


class Faults:
    """The rules, the counts and the log, under one lock."""

    def __init__(self):
        self.lock = threading.Lock()
        self.reset()

    def reset(self):
        self.rules = []
        self.received = {}
        self.log = []

    def add(self, rules):
        """Adds every rule given, or none when one of them is wrong."""
        added = []
        for rule in rules if isinstance(rules, list) else [rules]:
            if rule.get("action", "error") not in ("error", "cut", "drop"):
                raise ValueError(f"unknown action {rule.get('action')!r}")
            kinds = rule.get("kind")
            added.append({
                "kind": [kinds] if isinstance(kinds, str) else kinds,
                "skip": int(rule.get("skip", 0)),
                "times": int(rule.get("times", 1)),
                "action": rule.get("action", "error"),
                "status": int(rule.get("status", 500)),
                "code": rule.get("code", "InternalError"),
                "after": int(rule.get("after", 0)),
                "seconds": float(rule.get("seconds", 0)),
                "seen": 0,
                "hits": 0,
            })
        self.rules.extend(added)

    def decide(self, kind, method, target):
        """Counts the request and picks the rule that applies, if any; returns
        the rule (a copy) and the request's log entry."""
        self.received[kind] = self.received.get(kind, 0) + 1
        chosen = None
        for rule in self.rules:
            if rule["kind"] is not None and kind not in rule["kind"]:
                continue
            rule["seen"] += 1
            due = rule["seen"] > rule["skip"] and (rule["times"] < 0 or rule["hits"] < rule["times"])
            if chosen is None and due:
                rule["hits"] += 1
                chosen = dict(rule)
        entry = {"kind": kind, "method": method, "target": target, "status": None,
                 "fault": chosen["action"] if chosen else None}
        self.log.append(entry)
        return chosen, entry

    def state(self):
        return {"received": dict(self.received), "rules": [dict(rule) for rule in self.rules],
                "log": [dict(entry) for entry in self.log]}


class Head:
    """A request or response head: its raw bytes as received, its first line
    split in three, and its headers by lower-case name (last one wins)."""

    def __init__(self, raw):
        self.raw = raw
        lines = raw.decode("latin-1").split("\r\n")
        self.start = lines[0].split(" ", 2)
        self.headers = {}
        for line in lines[1:]:
            if ":" in line:
                name, _, value = line.partition(":")
                self.headers[name.strip().lower()] = value.strip()

    def header(self, name):
        return self.headers.get(name, "")

    def chunked(self):
        return "chunked" in self.header("transfer-encoding").lower()

    def wants_close(self):
        connection = self.header("connection").lower()
        version = self.start[0] if self.start[0].startswith("HTTP/") else self.start[-1]
        return "close" in connection or (version == "HTTP/1.0" and "keep-alive" not in connection)


def read_head(reader):
    """A head up to its blank line, or None at a clean end of stream."""
    data = b""
    while True:
        line = reader.readline(65537)
        if not line:
            if data:
                raise ConnectionError("stream ended inside a head")
            return None
        if not data and line in (b"\r\n", b"\n"):
            continue  # a stray CRLF between messages (RFC 9112 section 2.2)
        data += line
        if line in (b"\r\n", b"\n"):
            return Head(data)
        if len(data) > 256 * 1024:
            raise ConnectionError("head too large")


class Cut(Exception):
    """The answer's body reached the bytes a `cut` rule lets through."""


class Sink:
    """Writes to a socket, letting at most `limit` bytes through (None for
    no limit), then raises Cut."""

    def __init__(self, sock, limit=None):
        self.sock = sock
        self.limit = limit

    def write(self, data):
        if self.limit is not None and len(data) >= self.limit:
            self.sock.sendall(data[:self.limit])
            raise Cut()
        self.sock.sendall(data)
        if self.limit is not None:
            self.limit -= len(data)


def copy_body(head, reader, sink, has_body=True, to_end=False):
    """Copies one message body as it is on the wire: chunked framing with its
    trailers, Content-Length bytes, or (`to_end`) everything until the
    stream ends."""
    if not has_body:
        return
    if head.chunked():
        while True:
            line = reader.readline(65537)
            if not line:
                raise ConnectionError("stream ended inside a chunked body")
            sink.write(line)
            size = int(line.split(b";", 1)[0].strip() or b"0", 16)
            if size == 0:
                while True:  # trailers up to the blank line
                    trailer = reader.readline(65537)
                    if not trailer:
                        raise ConnectionError("stream ended inside trailers")
                    sink.write(trailer)
                    if trailer in (b"\r\n", b"\n"):
                        return
            copy_bytes(reader, sink, size + 2)  # the data and its CRLF
    elif head.header("content-length"):
        copy_bytes(reader, sink, int(head.header("content-length")))
    elif to_end:
        while True:
            data = reader.read1(65536)
            if not data:
                return
            sink.write(data)


def copy_bytes(reader, sink, count):
    while count > 0:
        data = reader.read1(min(count, 65536))
        if not data:
            raise ConnectionError("stream ended inside a body")
        sink.write(data)
        count -= len(data)


def error_response(status, code, head_only):
    body = ("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>%s</Code>"
            "<Message>injected by s3faults.py</Message><RequestId>s3faults</RequestId></Error>" % code).encode()
    head = ("HTTP/1.1 %d %s\r\nContent-Type: application/xml\r\nContent-Length: %d\r\n"
            "x-amz-request-id: s3faults\r\n\r\n" % (status, REASONS.get(status, "Error"), 0 if head_only else len(body)))
    return head.encode() + (b"" if head_only else body)


class Connection(socketserver.StreamRequestHandler):
    """One client connection: its requests in turn, each forwarded (or
    answered by a rule) over one backend connection kept while both sides
    keep theirs."""

    def setup(self):
        self.request.settimeout(IO_TIMEOUT)
        super().setup()
        self.backend = None
        self.backend_reader = None

    def handle(self):
        try:
            while True:
                head = read_head(self.rfile)
                if head is None or not self.serve(head):
                    return
        except (ConnectionError, OSError, Cut, ValueError):
            return
        finally:
            self.close_backend()

    def serve(self, head):
        """Answers one request; returns whether the connection stays open."""
        method, target = head.start[0], head.start[1] if len(head.start) > 1 else "/"
        if urlsplit(target).path.startswith(CONTROL):
            return self.control(head, method)
        faults = self.server.faults
        with faults.lock:
            rule, entry = faults.decide(operation(method, target, head.headers), method, target)
        action = rule["action"] if rule else None
        if action == "drop":
            time.sleep(rule["seconds"])
            return False
        if action == "error":
            expects = "100-continue" in head.header("expect").lower()
            if not expects:
                copy_body(head, self.rfile, Discard())
            self.request.sendall(error_response(rule["status"], rule["code"], method == "HEAD"))
            entry["status"] = rule["status"]
            return not expects and not head.wants_close()
        return self.forward(head, method, entry, rule["after"] if action == "cut" else None)

    def forward(self, head, method, entry, cut_after):
        self.connect_backend()
        self.backend.sendall(head.raw)
        response = None
        if "100-continue" in head.header("expect").lower():
            # The backend says whether it wants the body; one that says
            # nothing within a second gets it anyway, as curl does.
            ready, _, _ = select.select([self.backend], [], [], 1.0)
            if ready:
                response = read_head(self.backend_reader)
                if response is None:
                    raise ConnectionError("backend closed")
                if response.start[1] == "100":
                    self.request.sendall(response.raw)
                    response = None
        if response is None:
            copy_body(head, self.rfile, Sink(self.backend))
            response = read_head(self.backend_reader)
            while response is not None and response.start[1].startswith("1") and response.start[1] != "101":
                self.request.sendall(response.raw)
                response = read_head(self.backend_reader)
            if response is None:
                raise ConnectionError("backend closed")
        else:
            # Answered before the body was sent: the client may still send
            # it, so this connection cannot be trusted for another request.
            head.headers["connection"] = "close"
        entry["status"] = int(response.start[1])
        status = entry["status"]
        has_body = method != "HEAD" and status not in (204, 304) and not 100 <= status < 200
        to_end = has_body and not response.chunked() and not response.header("content-length")
        self.request.sendall(response.raw)
        try:
            copy_body(response, self.backend_reader, Sink(self.request, cut_after), has_body, to_end)
        except Cut:
            return False
        if to_end or response.wants_close():
            self.close_backend()
        return not (to_end or response.wants_close() or head.wants_close())

    def connect_backend(self):
        if self.backend is not None:
            # An idle keep-alive connection that is readable has been closed
            # by the backend: open a fresh one.
            ready, _, _ = select.select([self.backend], [], [], 0)
            if ready:
                self.close_backend()
        if self.backend is None:
            self.backend = socket.create_connection(self.server.backend_address, timeout=IO_TIMEOUT)
            self.backend.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self.backend_reader = self.backend.makefile("rb")

    def close_backend(self):
        if self.backend is not None:
            try:
                self.backend_reader.close()
                self.backend.close()
            except OSError:
                pass
        self.backend = None
        self.backend_reader = None

    def control(self, head, method):
        body = bytearray()

        class Collect:
            def write(self, data):
                body.extend(data)

        copy_body(head, self.rfile, Collect())
        faults = self.server.faults
        status = 200
        try:
            with faults.lock:
                if method == "POST":
                    faults.add(json.loads(body or b"[]"))
                elif method == "DELETE":
                    faults.reset()
                elif method != "GET":
                    raise ValueError(f"{method} is not a control method")
                answer = faults.state()
        except (ValueError, TypeError, KeyError) as error:
            status, answer = 400, {"error": str(error)}
        data = json.dumps(answer).encode()
        self.request.sendall(("HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n"
                              % (status, "OK" if status == 200 else "Bad Request", len(data))).encode() + data)
        return not head.wants_close()


class Discard:
    def write(self, data):
        pass


class Proxy(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128

    def __init__(self, port, backend_address):
        self.faults = Faults()
        self.backend_address = backend_address
        super().__init__(("127.0.0.1", port), Connection)


def main():
    parser = argparse.ArgumentParser(description="A fault-injecting HTTP/1.1 proxy in front of an S3 server.")
    parser.add_argument("--backend", required=True, help="HOST:PORT of the S3 server")
    parser.add_argument("--port", type=int, default=0, help="the port to listen on (0: any free one)")
    options = parser.parse_args()
    host, _, port = options.backend.rpartition(":")
    proxy = Proxy(options.port, (host, int(port)))
    print("listening on 127.0.0.1:%d" % proxy.server_address[1], flush=True)
    try:
        proxy.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
