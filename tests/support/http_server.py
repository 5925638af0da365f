#!/usr/bin/env python3
"""A misbehaving HTTP server on 127.0.0.1 for fabuild's download tests (standard library only).

usage: http_server.py BODY_FILE LOG_FILE

Binds 127.0.0.1 on a free port and prints the port on stdout. Serves BODY_FILE with the
behaviour named by the first URL path segment (/drop-once/flash_attn.tar.gz behaves as
/drop-once). "Once" means the first request for that exact path; later requests for it serve
the body and honour Range. Every request is appended to LOG_FILE, before the response is sent,
as "<path> <Range header or -> <n>" where n counts requests for that path, so a client that has
returned has its requests logged.
"""

import hashlib
import socket
import struct
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

STALL_SECONDS = 30  # far past any stall timeout a test sets; the test kills us first

BODY = b""
LOG = None
LOCK = threading.Lock()
COUNTS = {}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):  # the request log is LOG_FILE; keep the test's stderr clean
        pass

    def do_GET(self):
        with LOCK:
            COUNTS[self.path] = COUNTS.get(self.path, 0) + 1
            n = COUNTS[self.path]
            LOG.write(f"{self.path} {self.headers.get('Range') or '-'} {n}\n")
            LOG.flush()
        self.close_connection = True
        kind = self.path.split("/")[1] if self.path.count("/") >= 1 else ""
        first = n == 1
        if self.path.endswith(".sha256") and kind in ("good", "bad-sha"):
            # A checksum file beside the download, as sdist hosts publish them; /bad-sha's is wrong.
            digest = hashlib.sha256(BODY if kind == "good" else BODY + b"x").hexdigest()
            return self.send_body(f"{digest}  {self.path.rsplit('/', 1)[-1][:-7]}\n".encode())
        try:
            getattr(self, "serve_" + kind.replace("-", "_"), self.serve_unknown)(first)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up on us, which is what several tests want

    # --- building blocks -------------------------------------------------------------------

    def send_body(self, body, honour_range=True):
        start = requested_start(self.headers.get("Range")) if honour_range else None
        if start is not None and start >= len(body):
            self.send_response(416)
            self.send_header("Content-Range", f"bytes */{len(body)}")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if start is not None:
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {start}-{len(body) - 1}/{len(body)}")
            body = body[start:]
        else:
            self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def send_half_then_close(self, reset):
        self.send_response(200)
        self.send_header("Content-Length", str(len(BODY)))
        self.end_headers()
        self.wfile.write(BODY[: len(BODY) // 2])
        self.wfile.flush()
        if reset:  # RST instead of FIN: the client sees "connection reset", not a clean EOF
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.connection.close()
        else:
            self.connection.shutdown(socket.SHUT_WR)

    def send_status(self, code, headers=()):
        self.send_response(code)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", "0")
        self.end_headers()

    # --- behaviours ------------------------------------------------------------------------

    def serve_good(self, first):
        self.send_body(BODY)

    def serve_drop_once(self, first):
        if first:
            return self.send_half_then_close(reset=True)
        self.send_body(BODY)

    def serve_short(self, first):  # Content-Length promises more than is sent, then a clean close
        if first:
            return self.send_half_then_close(reset=False)
        self.send_body(BODY)

    def serve_503_then_200(self, first):
        if first:
            return self.send_status(503)
        self.send_body(BODY)

    def serve_429_then_200(self, first):
        if first:
            return self.send_status(429)
        self.send_body(BODY)

    def serve_always_503(self, first):
        self.send_status(503)

    def serve_404(self, first):
        self.send_status(404)

    def serve_stall(self, first):
        if not first:
            return self.send_body(BODY)
        self.send_response(200)
        self.send_header("Content-Length", str(len(BODY)))
        self.end_headers()
        self.wfile.write(BODY[:100])  # a trickle, then nothing: a stuck mirror
        self.wfile.flush()
        time.sleep(STALL_SECONDS)

    def serve_no_range(self, first):  # drops the first answer, then ignores Range for good
        if first:
            return self.send_half_then_close(reset=False)
        self.send_body(BODY, honour_range=False)

    def serve_range_416(self, first):  # drops the first answer, then refuses any Range
        if first:
            return self.send_half_then_close(reset=False)
        if self.headers.get("Range"):
            return self.send_status(416, [("Content-Range", "bytes */999999999")])
        self.send_body(BODY, honour_range=False)

    def serve_redirect(self, first):
        self.send_status(302, [("Location", "/good/redirected")])

    def serve_redirect_loop(self, first):
        self.send_status(302, [("Location", self.path)])

    def serve_huge(self, first):  # no Content-Length: only counting while streaming can stop it
        self.send_response(200)
        self.send_header("Connection", "close")
        self.end_headers()
        chunk = b"\0" * 65536
        for _ in range(4096):  # 256 MiB if nobody stops us
            self.wfile.write(chunk)

    def serve_huge_declared(self, first):  # announces 1 TiB up front
        self.send_response(200)
        self.send_header("Content-Length", str(1 << 40))
        self.end_headers()
        self.wfile.write(b"\0" * 65536)

    def serve_bad_sha(self, first):  # the right size, one byte off
        body = bytearray(BODY)
        body[len(body) // 3] ^= 0xFF
        self.send_body(bytes(body))

    def serve_silent_once(self, first):  # accepts, reads the request, answers nothing: a hung backend
        if not first:
            return self.send_body(BODY)
        time.sleep(STALL_SECONDS)

    def serve_hangup_once(self, first):  # closes without a status line: "empty reply from server"
        if not first:
            return self.send_body(BODY)
        self.connection.shutdown(socket.SHUT_RDWR)

    def serve_chunked_cut_once(self, first):  # chunked encoding, cut off inside its second chunk
        if not first:
            return self.send_body(BODY)
        half = len(BODY) // 2
        self.send_response(200)
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self.wfile.write(f"{half:x}\r\n".encode() + BODY[:half] + b"\r\n")
        self.wfile.write(f"{len(BODY) - half:x}\r\n".encode() + BODY[half:half + 1000])
        self.wfile.flush()
        self.connection.shutdown(socket.SHUT_WR)

    def serve_excess(self, first):  # Content-Length says less than the bytes that follow
        self.send_response(200)
        self.send_header("Content-Length", str(len(BODY) - 1000))
        self.end_headers()
        self.wfile.write(BODY + b"trailing garbage")

    def serve_wrong_range(self, first):  # 206 for bytes other than those asked for
        if first:
            return self.send_half_then_close(reset=False)
        self.send_response(206)
        self.send_header("Content-Range", f"bytes 10-{len(BODY) - 1}/{len(BODY)}")
        self.send_header("Content-Length", str(len(BODY) - 10))
        self.end_headers()
        self.wfile.write(BODY[10:])

    def serve_error_page(self, first):  # a captive portal: 200 and HTML instead of the file
        self.send_body(b"<html><body>Please log in to continue</body></html>\n", honour_range=False)

    def serve_redirect_to_file(self, first):  # a redirect to the client's own disk
        self.send_status(302, [("Location", "file:///etc/passwd")])

    def serve_slow(self, first):  # the whole body in 16 KiB pieces 10 ms apart: two clients overlap
        start = requested_start(self.headers.get("Range")) or 0
        self.send_response(206 if start else 200)
        if start:
            self.send_header("Content-Range", f"bytes {start}-{len(BODY) - 1}/{len(BODY)}")
        self.send_header("Content-Length", str(len(BODY) - start))
        self.end_headers()
        for at in range(start, len(BODY), 16384):
            self.wfile.write(BODY[at:at + 16384])
            self.wfile.flush()
            time.sleep(0.01)

    def serve_unknown(self, first):
        self.send_status(400)


def requested_start(header):
    """The start of "bytes=N-", or None for no (or an unsupported) Range header."""
    if not header or not header.startswith("bytes=") or not header.endswith("-"):
        return None
    try:
        return int(header[len("bytes="):-1])
    except ValueError:
        return None


class Server(ThreadingHTTPServer):
    daemon_threads = True  # a stalled handler must not keep us alive when the test ends us

    def handle_error(self, request, client_address):
        pass  # clients hanging up mid-body are the point of these tests


def main():
    global BODY, LOG
    with open(sys.argv[1], "rb") as f:
        BODY = f.read()
    LOG = open(sys.argv[2], "a", encoding="utf-8")
    server = Server(("127.0.0.1", 0), Handler)
    print(server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
