#!/usr/bin/python3
"""Run samba-tool commands in-process for tests/lab/lab.sh.

Running samba-tool inside this interpreter keeps the Administrator password
off every command line: it is read from $PROVISION_LAB_DIR/admin.pass.

  lab-samba.py provision ARGS...         samba-tool domain provision ARGS --adminpass=<admin.pass>,
                                         then passwordsettings --max-pwd-age=0 --min-pwd-age=0
  lab-samba.py join DNSDOMAIN DC ARGS...  samba-tool domain join DNSDOMAIN DC ARGS
                                         --username=Administrator --password=<admin.pass>
  lab-samba.py dsa-option SMBCONF +|-NAME   this DC's own NTDS Settings options (its local
                                         sam.ldb, no credentials): +DISABLE_INBOUND_REPL
                                         pauses its inbound replication, - resumes it
  lab-samba.py dns-add SERVER ZONE NAME=IP...
                                         samba-tool dns add SERVER ZONE NAME A IP, Kerberos (ccache)
"""
import os
import signal
import sys

signal.signal(signal.SIGINT, signal.SIG_DFL)

from samba.netcmd.main import cmd_sambatool  # noqa: E402


def samba_tool(*args):
    cmd = cmd_sambatool()
    try:
        rc = cmd._run("samba-tool", *args)
    except SystemExit as e:
        rc = e.code
    except Exception as e:  # same as /usr/bin/samba-tool
        cmd.show_command_error(e)
        rc = 1
    return rc or 0


def dsa_option(smbconf, on, name):
    """What samba-tool drs options --dsa-option=+NAME does, on the local database: the
    replication service reads the options at every pull (samdb_ntds_options)."""
    import ldb
    from samba import dsdb
    from samba.auth import system_session
    from samba.param import LoadParm
    from samba.samdb import SamDB

    bit = getattr(dsdb, "DS_NTDSDSA_OPT_" + name)
    lp = LoadParm()
    lp.load(smbconf)
    samdb = SamDB(url=lp.samdb_url(), session_info=system_session(), lp=lp)
    dn = samdb.get_dsServiceName()
    res = samdb.search(base=dn, scope=ldb.SCOPE_BASE, attrs=["options"])
    cur = int(res[0]["options"][0]) if "options" in res[0] else 0
    new = cur | bit if on else cur & ~bit
    m = ldb.Message()
    m.dn = ldb.Dn(samdb, str(dn))
    m["options"] = ldb.MessageElement(str(new), ldb.FLAG_MOD_REPLACE, "options")
    samdb.modify(m)
    return 0


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    lab = os.environ["PROVISION_LAB_DIR"]
    what = argv[1]
    if what == "provision":
        with open(os.path.join(lab, "admin.pass"), encoding="utf-8") as f:
            password = f.read()
        rc = samba_tool("domain", "provision", *argv[2:], "--adminpass=" + password)
        if rc:
            return rc
        # lab passwords never expire and can be changed at once (tests reuse a kept DC)
        target = [a.split("=", 1)[1] for a in argv if a.startswith("--targetdir=")][0]
        return samba_tool("domain", "passwordsettings", "set",
                          "-s", os.path.join(target, "etc", "smb.conf"),
                          "-H", os.path.join(target, "private", "sam.ldb"),
                          "--max-pwd-age=0", "--min-pwd-age=0")
    if what == "join" and len(argv) >= 4:
        with open(os.path.join(lab, "admin.pass"), encoding="utf-8") as f:
            password = f.read()
        return samba_tool("domain", "join", *argv[2:], "--username=Administrator",
                          "--password=" + password)
    if what == "dsa-option" and len(argv) == 4 and argv[3][:1] in "+-":
        return dsa_option(argv[2], argv[3][0] == "+", argv[3][1:])
    if what == "dns-add" and len(argv) >= 5:
        server, zone = argv[2], argv[3]
        rc = 0
        for spec in argv[4:]:
            name, ip = spec.split("=", 1)
            r = samba_tool("dns", "add", server, zone, name, "A", ip,
                           "--use-kerberos=required")
            rc = rc or r
        return rc
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
