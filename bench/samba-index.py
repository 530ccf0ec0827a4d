#!/usr/bin/python3
"""bench/samba-index.py: what one user add or delete costs a Samba AD database as the domain
grows, measured inside Samba's own stack (dsdb modules, ldb, tdb or lmdb) on a private,
freshly provisioned sam.ldb: no lab, no network, no LDAP, no provision. One add or delete per
ldb transaction, as the DC runs one LDAP request; a tree delete is one request (one
transaction) per container, with the tree-delete control, as samba-tool ou delete
--force-subtree-delete and provision's cleanup dc send it.

  samba-index.py --backend tdb|mdb --layout flat|sub --users N [--block 1000]
                 [--delete 1by1|tree|none] [--sizes]

--layout flat puts every user in OU=provision; sub puts them in OU=cli1-K,OU=provision,
--block users each. Prints, per 1,000 users, the wall and CPU milliseconds per user of the
adds and the deletes, the totals, and with --sizes the largest index records (tdb only) once
the users are in. Run by bench/samba-index.sh; needs python3-samba (the lab's)."""
import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

import ldb
from samba.auth import system_session
from samba.param import LoadParm
from samba.samdb import SamDB

ap = argparse.ArgumentParser()
ap.add_argument("--backend", choices=["tdb", "mdb"], default="tdb")
ap.add_argument("--layout", choices=["flat", "sub"], default="flat")
ap.add_argument("--users", type=int, default=10000)
ap.add_argument("--block", type=int, default=1000)
ap.add_argument("--delete", choices=["1by1", "tree", "none"], default="1by1")
ap.add_argument("--sizes", action="store_true")
ap.add_argument("--dir", default=None, help="work folder (default: a new one in /tmp, removed)")
a = ap.parse_args()

work = a.dir or tempfile.mkdtemp(prefix="pv-samba-index.")
os.makedirs(work, exist_ok=True)
target = os.path.join(work, "dc")
shutil.rmtree(target, ignore_errors=True)
pw = "Bench-" + os.urandom(9).hex() + "!a1"
# samba-tool in a process of its own (a provision left open in this one keeps handles on the
# database, and LMDB then cannot reuse its pages: every later write grows slower), the
# password on its stdin, never on a command line
PROVISION = """
import sys
from samba.netcmd.main import cmd_sambatool
pw = sys.stdin.readline().strip()
sys.exit(cmd_sambatool()._run("samba-tool", "domain", "provision", *sys.argv[1:],
                                  "--adminpass=" + pw) or 0)
"""
with open(os.path.join(work, "provision.log"), "w") as log:
    p = subprocess.run(["/usr/bin/python3", "-c", PROVISION, "--targetdir=" + target,
                        "--realm=BENCH.TEST", "--domain=BENCH", "--server-role=dc",
                        "--dns-backend=NONE", "--backend-store=" + a.backend],
                       input=pw + "\n", text=True, stdout=log, stderr=log)
if p.returncode != 0:
    sys.exit("samba-index: provision failed, see %s/provision.log" % work)

lp = LoadParm()
lp.load(os.path.join(target, "etc/smb.conf"))
s = SamDB(url=os.path.join(target, "private/sam.ldb"), session_info=system_session(), lp=lp)
base = str(s.get_default_basedn())
ou = "OU=provision," + base
s.add({"dn": ou, "objectClass": "organizationalUnit", "description": "provision:provision"})


def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def line(what, n, w0, c0):  # called every 1,000 users: seconds per 1,000 = ms per user
    print("%s %s %s %6d: %6.2f ms/user wall, %6.2f CPU (last 1000)"
          % (a.backend, a.layout, what, n, time.time() - w0, cpu() - c0), flush=True)


tag = "%s %s" % (a.backend, a.layout)
subs = {}  # sub-OU DN: its users
W0, C0 = time.time(), cpu()
w0, c0 = W0, C0
for i in range(1, a.users + 1):
    parent = ou
    if a.layout == "sub":
        parent = "OU=cli1-%d,%s" % ((i - 1) // a.block + 1, ou)
        if (i - 1) % a.block == 0:
            s.add({"dn": parent, "objectClass": "organizationalUnit",
                   "description": "provision:provision"})
            subs[parent] = 0
        subs[parent] += 1
    n = "cli1-u%d" % i
    # the attributes provision dc sends, but no password (disabled): hashing costs the same at
    # any size and would only slow the bench
    s.add({"dn": "CN=%s,%s" % (n, parent),
           "objectClass": ["top", "person", "organizationalPerson", "user"],
           "sAMAccountName": n, "userPrincipalName": n + "@BENCH.TEST", "displayName": n,
           "description": "provision:provision", "userAccountControl": "514"})
    if i % 1000 == 0:
        line("add", i, w0, c0)
        w0, c0 = time.time(), cpu()
aw, ac = time.time() - W0, cpu() - C0
print("%s add total %d users: %.1f s wall (%.1f users/s), %.1f s CPU"
      % (tag, a.users, aw, a.users / aw, ac), flush=True)

SIZES = """
import os, sys, tdb
t = tdb.Tdb(sys.argv[1], 0, tdb.DEFAULT, os.O_RDONLY)
for k in t.keys():
    if k.startswith(b"DN=@INDEX") and len(t.get(k)) > int(sys.argv[2]):
        print(len(t.get(k)), k[3:].rstrip(b"\\0").decode(errors="replace"))
"""
if a.sizes and a.backend == "tdb":  # another process: tdb opens a file once per process
    part = os.path.join(target, "private/sam.ldb.d", base.upper() + ".ldb")
    got = subprocess.run(["/usr/bin/python3", "-c", SIZES, part, str(8 * a.users)],
                         capture_output=True, text=True, check=True).stdout.split("\n")
    for size, key in sorted((int(x.split(" ", 1)[0]), x.split(" ", 1)[1]) for x in got if x):
        print("%s index record %8d bytes  %s" % (tag, size, key))

if a.delete != "none":
    W0, C0 = time.time(), cpu()
    if a.delete == "tree":
        for p, inside in (subs.items() if subs else [(ou, a.users)]):
            w0, c0 = time.time(), cpu()
            s.delete(p, ["tree_delete:1"])
            print("%s tree delete %-22s %6d users: %7.2f ms/user wall, %7.2f CPU"
                  % (tag, p.split(",")[0], inside, (time.time() - w0) * 1000 / inside,
                     (cpu() - c0) * 1000 / inside), flush=True)
        if subs:
            s.delete(ou)
    else:
        users = sorted(((int(str(m["cn"][0]).split("-u")[1]), str(m.dn))
                        for m in s.search(base=ou, scope=ldb.SCOPE_SUBTREE,
                                          expression="(objectClass=user)", attrs=["cn"])),
                       reverse=True)  # newest first, as provision deletes
        w0, c0 = W0, C0
        for k, (_, dn) in enumerate(users, 1):
            s.delete(dn)
            if k % 1000 == 0:
                line("delete", k, w0, c0)
                w0, c0 = time.time(), cpu()
    dw, dc = time.time() - W0, cpu() - C0
    print("%s delete (%s) total %d users: %.1f s wall (%.1f users/s), %.1f s CPU"
          % (tag, a.delete, a.users, dw, a.users / dw, dc), flush=True)

if not a.dir:
    shutil.rmtree(work, ignore_errors=True)
