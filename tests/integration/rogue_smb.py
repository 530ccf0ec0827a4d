#!/usr/bin/env python3
"""tests/integration/rogue_smb.py: something that is not the file server, answering on port 445.

It speaks just enough SMB2 to claim a logon that never authenticated: it answers NEGOTIATE
with dialect 2.1 and every SESSION_SETUP with STATUS_SUCCESS at once, with no security token,
signed with the key a session key of 16 zero bytes gives (what anyone can compute; for 2.1
the signing key is the session key itself, MS-SMB2 3.1.4.1: HMAC-SHA256, 16 bytes kept).
Anything after the logon is answered STATUS_ACCESS_DENIED. A client that trusts such a logon
goes on to TREE_CONNECT, so the count of TREE_CONNECTs (printed at exit) tells the tests that
a client was fooled.

    rogue_smb.py ADDRESS PIDFILE COUNTFILE

Written for the lab (t_rogue.sh): it listens on ADDRESS:445 in srv's namespace while srv's
smbd is stopped, writes its pid to PIDFILE, and after each connection the number of
SESSION_SETUPs and TREE_CONNECTs seen to COUNTFILE ("setups trees"). It reads at most 1 MiB
a frame and serves one connection at a time, each for at most 10 s.
"""
import hmac
import hashlib
import os
import socket
import struct
import sys

NEGOTIATE, SESSION_SETUP, TREE_CONNECT = 0, 1, 3
ST_OK, ST_ACCESS_DENIED = 0, 0xC0000022
ZERO_KEY = bytes(16)


def recv_all(s, n):
    b = b""
    while len(b) < n:
        c = s.recv(n - len(b))
        if not c:
            return None
        b += c
    return b


def header(req, status, session, signed):
    cmd = struct.unpack_from("<H", req, 12)[0]
    mid = struct.unpack_from("<Q", req, 24)[0]
    flags = 0x1 | (0x8 if signed else 0)
    return struct.pack("<4sHHIHHIIQIIQ16s", b"\xfeSMB", 64, 0, status, cmd, 64, flags, 0,
                       mid, 0, 0, session, bytes(16))


def sign(msg):
    sig = hmac.new(ZERO_KEY, msg, hashlib.sha256).digest()[:16]
    return msg[:48] + sig + msg[64:]


def negotiate_body():
    return struct.pack("<HHHH16sIIIIQQHHI", 65, 1, 0x0210, 0, b"rogue-not-a-srv!", 0,
                       65536, 65536, 65536, 0, 0, 128, 0, 0) + b"\0"


def serve(conn, counts):
    conn.settimeout(10)
    while True:
        nb = recv_all(conn, 4)
        if not nb:
            return
        n = int.from_bytes(nb[1:], "big")
        if n < 64 or n > (1 << 20):
            return
        req = recv_all(conn, n)
        if req is None or req[:4] != b"\xfeSMB":
            return
        cmd = struct.unpack_from("<H", req, 12)[0]
        if cmd == NEGOTIATE:
            msg = header(req, ST_OK, 0, False) + negotiate_body()
        elif cmd == SESSION_SETUP:
            counts[0] += 1
            # STATUS_SUCCESS to the first token, no token back, no session flags
            msg = sign(header(req, ST_OK, 0x42, True) + struct.pack("<HHHH", 9, 0, 72, 0) + b"\0")
        else:
            if cmd == TREE_CONNECT:
                counts[1] += 1
            msg = sign(header(req, ST_ACCESS_DENIED, 0x42, True) + struct.pack("<HBBI", 9, 0, 0, 0) + b"\0")
        conn.sendall(len(msg).to_bytes(4, "big") + msg)


def main():
    addr, pidfile, countfile = sys.argv[1:4]
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind((addr, 445))
    ls.listen(64)
    counts = [0, 0]
    with open(countfile, "w") as f:
        f.write("0 0\n")
    with open(pidfile, "w") as f:
        f.write("%d\n" % os.getpid())
    while True:
        conn, _ = ls.accept()
        try:
            serve(conn, counts)
        except (OSError, socket.timeout):
            pass
        finally:
            conn.close()
        with open(countfile + ".tmp", "w") as f:
            f.write("%d %d\n" % tuple(counts))
        os.replace(countfile + ".tmp", countfile)


if __name__ == "__main__":
    main()
