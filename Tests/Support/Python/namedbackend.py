#!/usr/bin/env python3
"""An HTTP server that answers every request with its own name.

A backend for tests of a load balancer: the body of a GET says which
backend served it. OPTIONS answers 200 with an empty body (HAProxy's health
check; Python's http.server would answer 501 and be taken out). HTTP/1.1
with Content-Length, so the balancer may keep connections open.
Standard library only.

Usage: namedbackend.py NAME
Prints `listening on 127.0.0.1:PORT` once it accepts connections.
"""
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

name = sys.argv[1].encode()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def answer(self, body):
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def do_GET(self):
        self.answer(name)

    do_HEAD = do_GET

    def do_OPTIONS(self):
        self.answer(b"")

    def log_message(self, format, *args):
        pass


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(f"listening on 127.0.0.1:{server.server_address[1]}", flush=True)
server.serve_forever()
