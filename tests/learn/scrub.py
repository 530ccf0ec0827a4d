#!/usr/bin/env python3
"""tests/learn/scrub.py IN OUT: a lab capture (classic pcap, Ethernet, IPv4) made fit to commit:
the security buffer of every SMB2 SESSION_SETUP (the NTLM or Kerberos tokens: an NTLMv2
response can be attacked offline for the password) is overwritten with zeros, lengths kept, so
that the traffic decodes the same (provision learn, tshark) with no secret in it. Only messages
whose header lies in one segment are seen, which is every SESSION_SETUP on the lab."""
import struct
import sys


def scrub_smb2(buf, at):
    """Zero the security buffers of the SESSION_SETUP messages of the SMB2 chain at buf[at:]."""
    n = 0
    while at + 64 <= len(buf) and buf[at:at + 4] == b"\xfeSMB":
        cmd, flags, nxt = struct.unpack_from("<H", buf, at + 12)[0], *struct.unpack_from("<II", buf, at + 16)
        if cmd == 1:
            resp = flags & 1
            # request: SecurityBufferOffset at body 12, length at 14; response: at 4 and 6
            off, ln = struct.unpack_from("<HH", buf, at + 64 + (4 if resp else 12))
            s, e = at + off, min(at + off + ln, len(buf))
            if s < e:
                buf[s:e] = bytes(e - s)
                n += 1
        if not nxt:
            break
        at += nxt
    return n


def main():
    data = bytearray(open(sys.argv[1], "rb").read())
    magic = struct.unpack_from("<I", data, 0)[0]
    assert magic == 0xA1B2C3D4 and struct.unpack_from("<I", data, 20)[0] == 1, "classic pcap of Ethernet only"
    at, scrubbed = 24, 0
    while at + 16 <= len(data):
        caplen = struct.unpack_from("<I", data, at + 8)[0]
        p = at + 16
        if struct.unpack_from(">H", data, p + 12)[0] == 0x0800 and data[p + 23] == 6:
            ihl = (data[p + 14] & 15) * 4
            tcp = p + 14 + ihl
            thl = (data[tcp + 12] >> 4) * 4
            pay = tcp + thl
            frame = data[pay:p + caplen]
            # a NetBIOS header then SMB2, at the segment's start
            if len(frame) >= 68 and frame[0] == 0 and frame[4:8] == b"\xfeSMB":
                scrubbed += scrub_smb2(frame, 4)
                data[pay:p + caplen] = frame
        at = p + caplen
    open(sys.argv[2], "wb").write(data)
    print("scrub: %d security buffers zeroed" % scrubbed, file=sys.stderr)


main()
