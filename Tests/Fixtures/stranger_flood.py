#!/usr/bin/env python3
"""Strangers holding connections to castd (issue #13, "Admission"), for AdmissionTests.

usage: stranger_flood.py HOST PORT SOURCE:COUNT [SOURCE:COUNT...]

Opens COUNT connections from each SOURCE address and holds each one: a third say nothing at all (idle before the
TLS handshake), a third send the first bytes of a ClientHello and stop (mid-handshake), a third finish a TLS 1.3
handshake without a client certificate and say nothing more (after TLS, not paired). Whenever castd closes one (or
refuses it), it is opened again at once. Every half second it prints "holding N opened M".
"""
import socket
import ssl
import sys
import threading
import time

host, port = sys.argv[1], int(sys.argv[2])
plan = [(entry.rsplit(":", 1)[0], int(entry.rsplit(":", 1)[1])) for entry in sys.argv[3:]]

context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
context.check_hostname = False
context.verify_mode = ssl.CERT_NONE
context.minimum_version = ssl.TLSVersion.TLSv1_3

# A TLS record header announcing a 512-byte ClientHello, and the start of it: castd waits for the rest.
PARTIAL_CLIENT_HELLO = b"\x16\x03\x01\x02\x00" + b"\x01\x00\x01\xfc\x03\x03" + bytes(16)

lock = threading.Lock()
held = 0
opened = 0


def hold(kind, source):
    global held, opened
    while True:
        try:
            connection = socket.create_connection((host, port), timeout=10, source_address=(source, 0))
        except OSError:
            time.sleep(0.05)
            continue
        counted = False
        try:
            if kind == 1:
                connection.sendall(PARTIAL_CLIENT_HELLO)
            elif kind == 2:
                connection = context.wrap_socket(connection)
            connection.settimeout(None)
            with lock:
                opened += 1
                held += 1
            counted = True
            while connection.recv(4096):
                pass
        except (OSError, ssl.SSLError):
            pass
        finally:
            if counted:
                with lock:
                    held -= 1
            connection.close()


index = 0
for source, count in plan:
    for _ in range(count):
        threading.Thread(target=hold, args=(index % 3, source), daemon=True).start()
        index += 1

while True:
    time.sleep(0.5)
    with lock:
        print(f"holding {held} opened {opened}", flush=True)
