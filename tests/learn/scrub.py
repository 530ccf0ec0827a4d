#!/usr/bin/env python3
"""tests/learn/scrub.py IN OUT: a lab capture (classic pcap, Ethernet, IPv4) made fit to commit,
with no secret in it and decoding the same (provision learn, tshark). In the security buffer of
every SMB2 SESSION_SETUP: an NTLM AUTHENTICATE keeps its names (the lab's: LAB\\pl-cli1-u1)
but its LM and NT responses (an NTLMv2 response can be attacked offline for the password), its
encrypted session key and its MIC are overwritten with zeros; any other token (a Kerberos
ticket, SPNEGO's wrapping around NTLM's first two messages stays) that holds no NTLMSSP
message is zeroed whole. Lengths are kept. Only messages whose header lies in one segment are
seen, which is every SESSION_SETUP on the lab."""
import struct
import sys


def scrub_token(buf, s, e):
    """Zero the secrets of the security token buf[s:e]: 1 when something was zeroed."""
    m = bytes(buf[s:e]).find(b"NTLMSSP\0")
    if m < 0:
        buf[s:e] = bytes(e - s)
        return 1
    m += s
    if m + 64 > e or struct.unpack_from("<I", buf, m + 8)[0] != 3:
        return 0  # NEGOTIATE or CHALLENGE: no secret
    # LmChallengeResponse (12), NtChallengeResponse (20), EncryptedRandomSessionKey (52)
    for f in (12, 20, 52):
        ln, off = struct.unpack_from("<H", buf, m + f)[0], struct.unpack_from("<I", buf, m + f + 4)[0]
        a, b = m + off, min(m + off + ln, e)
        if a < b:
            buf[a:b] = bytes(b - a)
    # the MIC, when the payload leaves room for it after the version (at 72, 16 bytes)
    first = min([struct.unpack_from("<I", buf, m + f + 4)[0] for f in (12, 20, 28, 36, 44, 52)] + [e - m])
    if first >= 88:
        buf[m + 72:m + 88] = bytes(16)
    return 1


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
                n += scrub_token(buf, s, e)
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
    print("scrub: %d security buffers scrubbed" % scrubbed, file=sys.stderr)


main()
