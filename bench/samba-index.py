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
# in-process, as tests/lab/lab-samba.py does: the password stays off every command line
from samba.netcmd.main import cmd_sambatool  # noqa: E402

cmd = cmd_sambatool()
out = open(os.path.join(work, "provision.log"), "w")
cmd.outf = cmd.errf = out
sys.stdout.flush()
sys.stderr.flush()
err = os.dup(2)
os.dup2(out.fileno(), 2)  # provision logs on stderr
rc = cmd._run("samba-tool", "domain", "provision", "--targetdir=" + target,
              "--realm=BENCH.TEST", "--domain=BENCH", "--server-role=dc",
              "--dns-backend=NONE", "--adminpass=" + pw, "--backend-store=" + a.backend)
sys.stderr.flush()
os.dup2(err, 2)
out.close()
if rc not in (0, None):
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


def line(what, n, w0, c0):
    print("%s %s %s %6d: %6.2f ms/user wall, %6.2f CPU (last 1000)"
          % (a.backend, a.layout, what, n, time.time() - w0, cpu() - c0), flush=True)


tag = "%s %s" % (a.backend, a.layout)
subs = []
W0, C0 = time.time(), cpu()
w0, c0 = W0, C0
for i in range(1, a.users + 1):
    parent = ou
    if a.layout == "sub":
        parent = "OU=cli1-%d,%s" % ((i - 1) // a.block + 1, ou)
        if (i - 1) % a.block == 0:
            s.add({"dn": parent, "objectClass": "organizationalUnit",
                   "description": "provision:provision"})
            subs.append(parent)
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

if a.sizes and a.backend == "tdb":
    import tdb
    part = os.path.join(target, "private/sam.ldb.d", base.upper() + ".ldb")
    t = tdb.Tdb(part, 0, tdb.DEFAULT, os.O_RDONLY)
    rows = sorted(((len(t.get(k)), k.decode(errors="replace")) for k in t.keys()
                   if k.startswith(b"DN=@INDEX") and len(t.get(k)) > 8 * a.users), reverse=True)
    for size, key in rows:
        print("%s index record %8d bytes  %s" % (tag, size, key[3:].rstrip("\0")))

if a.delete != "none":
    W0, C0 = time.time(), cpu()
    if a.delete == "tree":
        for p in (subs or [ou]):
            w0, c0 = time.time(), cpu()
            inside = a.block if subs else a.users
            s.delete(p, ["tree_delete:1"])
            print("%s tree delete %-22s %6d users: %7.2f ms/user wall, %7.2f CPU"
                  % (tag, p.split(",")[0], inside, (time.time() - w0) * 1000 / inside,
                     (cpu() - c0) * 1000 / inside), flush=True)
        if subs:
            s.delete(ou)
    else:
        users = [str(m.dn) for m in s.search(base=ou, scope=ldb.SCOPE_SUBTREE,
                                             expression="(objectClass=user)", attrs=["cn"])]
        w0, c0 = W0, C0
        for k, dn in enumerate(reversed(users), 1):  # newest first, as provision deletes
            s.delete(dn)
            if k % 1000 == 0:
                line("delete", k, w0, c0)
                w0, c0 = time.time(), cpu()
    dw, dc = time.time() - W0, cpu() - C0
    print("%s delete (%s) total %d users: %.1f s wall (%.1f users/s), %.1f s CPU"
          % (tag, a.delete, a.users, dw, a.users / dw, dc), flush=True)

if not a.dir:
    shutil.rmtree(work, ignore_errors=True)
