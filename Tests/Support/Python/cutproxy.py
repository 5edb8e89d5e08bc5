#!/usr/bin/env python3
"""A TCP relay that cuts connections, for clients that must survive them.

Relays every connection to --backend byte for byte (TLS passes through
untouched) and counts the bytes clients send, over all connections. Each
time that count crosses the next of --cut-after (bytes, in order), the
connection carrying it is reset (SO_LINGER 0, so the client sees ECONNRESET
mid-request, as on a flaky link) and its backend connection closed.
Standard library only, two threads per connection.

Usage: cutproxy.py --backend HOST:PORT --cut-after N [N ...]
Prints `listening on 127.0.0.1:PORT` once it accepts connections, and
`cut #K after N bytes` at each cut.
"""
import argparse
import socket
import struct
import threading

lock = threading.Lock()
sent = 0
cuts = []


def reset(sock):
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    except OSError:
        pass
    try:
        sock.close()
    except OSError:
        pass


def upstream_pump(client, backend):
    """Client to backend, counting, cutting when a threshold is crossed."""
    global sent
    try:
        while True:
            data = client.recv(262144)
            if not data:
                break
            with lock:
                sent += len(data)
                due = bool(cuts) and sent >= cuts[0]
                if due:
                    threshold = cuts.pop(0)
                    print("cut after %d bytes (threshold %d)" % (sent, threshold), flush=True)
            if due:
                reset(client)
                reset(backend)
                return
            backend.sendall(data)
    except OSError:
        pass
    try:
        backend.shutdown(socket.SHUT_WR)
    except OSError:
        pass


def downstream_pump(client, backend):
    try:
        while True:
            data = backend.recv(262144)
            if not data:
                break
            client.sendall(data)
    except OSError:
        pass
    try:
        client.shutdown(socket.SHUT_WR)
    except OSError:
        pass


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--backend", required=True)
    parser.add_argument("--cut-after", type=int, nargs="+", required=True)
    args = parser.parse_args()
    cuts.extend(sorted(args.cut_after))
    host, port = args.backend.rsplit(":", 1)
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    print("listening on 127.0.0.1:%d" % listener.getsockname()[1], flush=True)
    while True:
        client, _ = listener.accept()
        try:
            backend = socket.create_connection((host, int(port)))
        except OSError:
            reset(client)
            continue
        threading.Thread(target=upstream_pump, args=(client, backend), daemon=True).start()
        threading.Thread(target=downstream_pump, args=(client, backend), daemon=True).start()


if __name__ == "__main__":
    main()
