#!/usr/bin/env python3
# tests/integration/argv_watch.py SECRETS OUT READY [--canary-last]: the command line of every process of the
# lab's hosts, looked at while a test runs provision, for secrets that must never be there (a
# password on a command line is readable by every user of the host in /proc/PID/cmdline, and
# shows in ps). Used by lib.sh's argv_watch_start and argv_watch_stop.
#
# The lab's hosts are network namespaces on this machine's kernel (ctl, dc, srv, cli1...: every
# /run/netns/pvlab-*; PV_ARGV_NETNS sets another prefix): one watcher here sees all their processes and puts each on its host by
# its network namespace. It looks twice over:
#   - at every exec, told by the kernel's process events connector (NETLINK_CONNECTOR,
#     PROC_EVENT_EXEC, as root): the new program's command line read at once, so that a
#     process living a few milliseconds is seen too (one with a password on its command line
#     usually is such a one: `sh -c '... PASSWORD ...'` over SSH); one that has ended before
#     it is read (under a millisecond: 1 in 40 in a trial) is missed: this is a sample;
#   - every SCAN seconds, all the hosts' processes (a command line rewritten after the exec,
#     as perl's $0 or setproctitle do, and the processes that were there before).
# SECRETS is a file of secrets, one a line (mode 0600; never on this command line); with
# --canary-last its last line is a canary, a command line the test makes on purpose to show
# the watcher sees it: its hits are reported, its processes not counted as the hosts'. Until
# SIGTERM (or its parent ending, or OUT's folder going) it looks; then it writes OUT, a JSON
# summary: whether the connector worked, how many execs (of which started by an SSH session:
# sshd their parent) and processes it looked at per host, the programs it saw per host, and the
# hits: host, pid, which secret (its index), and the
# command line with every secret replaced by <secret N>. READY is written once it looks.
import ctypes
import json
import os
import select
import signal
import socket
import struct
import sys
import time

SCAN = 0.25
LIFETIME = 4 * 3600  # a watcher left behind by a test killed hard ends on its own
NETLINK_CONNECTOR = 11
CN_IDX_PROC = 1
CN_VAL_PROC = 1
PROC_CN_MCAST_LISTEN = 1
PROC_EVENT_EXEC = 0x2
PROC_EVENT_COMM = 0x200
NLMSG_HDR = 16  # struct nlmsghdr
CN_HDR = 20  # struct cn_msg: id (idx, val), seq, ack, len, flags
EV_HDR = 16  # struct proc_event: what, cpu, timestamp_ns


def main():
    secrets_file, out, ready = sys.argv[1:4]
    canary_last = sys.argv[4:5] == ["--canary-last"]
    secrets = open(secrets_file, "rb").read().split(b"\n")
    if secrets and not secrets[-1]:  # the last line's newline
        secrets.pop()
    short = [i for i, s in enumerate(secrets) if len(s) < 6]
    if not secrets or short:
        # a short "secret" would be found everywhere: refused, said in OUT
        json.dump({"error": "secrets: none, or shorter than 6 bytes (%s)" % short}, open(out, "w"))
        open(ready, "w").write("refused\n")
        return 2
    # the parent (the test's shell) gone: this one goes too (PR_SET_PDEATHSIG)
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM, 0, 0, 0)
    except (OSError, AttributeError):
        pass
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    signal.signal(signal.SIGINT, lambda *_: stop.append(1))

    hosts = {}  # net namespace inode -> host
    prefix = os.environ.get("PV_ARGV_NETNS", "pvlab-")
    for name in sorted(os.listdir("/run/netns") if os.path.isdir("/run/netns") else []):
        if name.startswith(prefix):
            try:
                hosts[os.stat("/run/netns/" + name).st_ino] = name[len(prefix):]
            except OSError:
                pass
    stats = {h: {"examined": 0, "execs": 0, "ssh": 0, "progs": set()} for h in hosts.values()}
    seen = set()  # (pid, start time) already counted as examined
    hits, hit_keys = [], set()
    me = os.getpid()

    def host_of(pid):
        try:
            link = os.readlink("/proc/%d/ns/net" % pid)  # net:[INODE]
            return hosts.get(int(link[link.index("[") + 1:-1]))
        except (OSError, ValueError):
            return None

    def look(pid, via):
        if pid == me:
            return
        host = host_of(pid)
        if host is None:
            return
        try:
            with open("/proc/%d/cmdline" % pid, "rb") as f:
                cl = f.read(1 << 20)
            with open("/proc/%d/stat" % pid, "rb") as f:
                st = f.read().rsplit(b")", 1)[1].split()
            start = int(st[19])  # field 22, starttime
        except (OSError, IndexError, ValueError):
            return  # gone already
        s = stats[host]
        canary = canary_last and secrets[-1] in cl
        if via == "exec" and not canary:
            s["execs"] += 1
            try:  # a command an SSH session started (sshd its parent): provision's, on a host
                with open("/proc/%d/comm" % int(st[1]), "rb") as f:
                    s["ssh"] += f.read().startswith(b"sshd")
            except (OSError, ValueError):
                pass
        if (pid, start) not in seen and not canary:
            seen.add((pid, start))
            s["examined"] += 1
        shown = cl
        for j, sec in enumerate(secrets):
            shown = shown.replace(sec, b"<secret %d>" % j)
        prog = os.path.basename(shown.split(b"\0", 1)[0]).decode("utf-8", "replace")[:40]
        if prog and len(s["progs"]) < 400:
            s["progs"].add(prog)
        for i, sec in enumerate(secrets):
            if sec in cl and (pid, start, i) not in hit_keys:
                hit_keys.add((pid, start, i))
                hits.append({"host": host, "pid": pid, "via": via, "secret": i,
                             "argv": shown.replace(b"\0", b" ").decode("utf-8", "replace")[:400]})

    def scan():
        for d in os.listdir("/proc"):
            if d.isdigit():
                look(int(d), "scan")

    sock, error, overruns, events = None, None, 0, 0
    try:
        sock = socket.socket(socket.AF_NETLINK, socket.SOCK_DGRAM, NETLINK_CONNECTOR)
        try:
            sock.setsockopt(socket.SOL_SOCKET, 33, 8 << 20)  # SO_RCVBUFFORCE
        except OSError:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
        sock.bind((0, CN_IDX_PROC))
        op = struct.pack("I", PROC_CN_MCAST_LISTEN)
        cn = struct.pack("IIIIHH", CN_IDX_PROC, CN_VAL_PROC, 0, 0, len(op), 0) + op
        sock.send(struct.pack("IHHII", NLMSG_HDR + len(cn), 3, 0, 0, 0) + cn)  # NLMSG_DONE
    except OSError as e:
        error = "the process events connector: %s" % e
        sock = None

    scan()
    with open(ready, "w") as f:
        f.write("%d\n" % me)
    t0 = last = time.monotonic()
    folder = os.path.dirname(os.path.abspath(out))
    while not stop and time.monotonic() - t0 < LIFETIME and os.path.isdir(folder):
        now = time.monotonic()
        wait = max(0.0, SCAN - (now - last))
        if sock is not None:
            try:
                r, _, _ = select.select([sock], [], [], wait)
            except InterruptedError:
                continue
            while r:
                try:
                    data = sock.recv(1 << 16, socket.MSG_DONTWAIT)
                except BlockingIOError:
                    break
                except OSError:  # ENOBUFS: events lost, the scans still look
                    overruns += 1
                    break
                off = 0
                while off + NLMSG_HDR + CN_HDR + EV_HDR + 8 <= len(data):
                    nl_len = struct.unpack_from("I", data, off)[0]
                    what = struct.unpack_from("I", data, off + NLMSG_HDR + CN_HDR)[0]
                    if what in (PROC_EVENT_EXEC, PROC_EVENT_COMM):
                        pid = struct.unpack_from("i", data, off + NLMSG_HDR + CN_HDR + EV_HDR)[0]
                        events += 1
                        look(pid, "exec" if what == PROC_EVENT_EXEC else "comm")
                    if nl_len < NLMSG_HDR:
                        break
                    off += (nl_len + 3) & ~3
        else:
            time.sleep(min(wait, 0.05))
        if time.monotonic() - last >= SCAN:
            scan()
            last = time.monotonic()
    scan()
    for s in stats.values():
        s["progs"] = sorted(s["progs"])
    tmp = out + ".new"
    with open(tmp, "w") as f:
        json.dump({"connector": sock is not None, "error": error, "events": events,
                   "overruns": overruns, "seconds": round(time.monotonic() - t0, 1),
                   "hosts": stats, "hits": hits}, f)
    os.rename(tmp, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
