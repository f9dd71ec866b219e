#!/usr/bin/env python3
# Test media server: serves ROOT on PORT (0 = any free port; prints "port N" once listening),
# with byte ranges (so FFmpeg can seek an mp4) and, given "user:pass", HTTP basic auth.
# Usage: media_server.py ROOT PORT [USER:PASS]. Used by URLPlayerTests and URLTests.
import base64, os, sys, http.server, socketserver
root, port = sys.argv[1], int(sys.argv[2])
auth = sys.argv[3] if len(sys.argv) > 3 else ""
class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, fmt, *args):
        pass
    def empty(self, code, headers={}):
        self.send_response(code)
        for k, v in headers.items(): self.send_header(k, v)
        self.send_header("Content-Length", "0"); self.end_headers()
    def do_GET(self):
        if auth and self.headers.get("Authorization", "") != "Basic " + base64.b64encode(auth.encode()).decode():
            return self.empty(401, {"WWW-Authenticate": 'Basic realm="cast"'})
        path = os.path.join(root, os.path.basename(self.path.split("?")[0]))
        if not os.path.isfile(path):
            return self.empty(404)
        size = os.path.getsize(path); start, end = 0, size - 1
        ranged = self.headers.get("Range", "").startswith("bytes=")
        if ranged:
            a, _, b = self.headers["Range"][6:].split(",")[0].partition("-")
            start = int(a) if a else 0
            end = min(int(b), size - 1) if b else size - 1
            if start >= size:
                return self.empty(416, {"Content-Range": "bytes */%d" % size})
            self.send_response(206); self.send_header("Content-Range", "bytes %d-%d/%d" % (start, end, size))
        else:
            self.send_response(200)
        self.send_header("Accept-Ranges", "bytes"); self.send_header("Content-Length", str(end - start + 1))
        self.send_header("Content-Type", "application/octet-stream"); self.end_headers()
        with open(path, "rb") as f:
            f.seek(start); left = end - start + 1
            try:
                while left > 0:
                    chunk = f.read(min(65536, left))
                    if not chunk: break
                    self.wfile.write(chunk); left -= len(chunk)
            except (BrokenPipeError, ConnectionResetError):
                pass
class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True
server = Server(("0.0.0.0", port), Handler)
print("port", server.server_address[1], flush=True)
server.serve_forever()
