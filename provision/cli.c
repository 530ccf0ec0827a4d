/* provision/cli.c: the command table, the option table and the argv parser. Pure logic:
 * no I/O, so every rule here is unit-tested (tests/unit/check_cli.c). */
#include "provision/cli.h"
#include "provision/provision.h"

#include "util/err.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define PB  PV_CMD_PLAYBOOK
#define PBL (PV_CMD_PLAYBOOK | PV_CMD_LOCKED)
/* a command's own options, in the order help lists them */
#define OPTS(...) ((const enum pv_opt_id[]){__VA_ARGS__, OPT_COUNT})

static const struct pv_sub sweep_subs[] = {
	{"copy", pv_cmd_sweep_copy, NULL},
	{"run", pv_cmd_sweep_run, NULL},
	{NULL, NULL, NULL},
};

/* 'prepare dc' is 'dc' (its handler and options); 'cleanup dc' has its own */
static const struct pv_sub prepare_subs[] = {
	{"dc", pv_cmd_dc, &pv_render_dc},
	{"join", pv_cmd_join, &pv_render_join},
	{"server", pv_cmd_server, &pv_render_server},
	{"client", pv_cmd_client, &pv_render_client},
	{"controller", pv_cmd_controller, &pv_render_controller},
	{NULL, NULL, NULL},
};
static const struct pv_sub cleanup_subs[] = {
	{"dc", pv_cmd_cleanup_dc, &pv_render_cleanup_dc},
	{"join", pv_cmd_cleanup_join, &pv_render_cleanup_join},
	{"server", pv_cmd_cleanup_server, &pv_render_cleanup_server},
	{"client", pv_cmd_cleanup_client, &pv_render_client},
	{"controller", pv_cmd_cleanup_controller, &pv_render_controller},
	{NULL, NULL, NULL},
};

const struct pv_command pv_commands[CMD_COUNT] = {
	{CMD_CHECK, "check", pv_cmd_check, NULL, NULL, false,
	 OPTS(OPT_CA_FILE, OPT_ADMIN_PASSWORD_FILE), PV_CMD_PLAYBOOK_SOFT,
	 "check [--ca-file FILE] [--admin-password-file FILE]",
	 "validate the playbook and reach every host",
	 "Validates the playbook, then reaches every host the way later phases will and says "
	 "exactly\n"
	 "what is wrong and where: DNS names, LDAP (rootDSE) and LDAPS with the CA checked "
	 "against\n"
	 "the DC's name, a bind and a Kerberos ticket with the admin secret, SSH to the server,\n"
	 "every client and the controller's host (controller.host) with the host key checked,\n"
	 "what each host needs before the phases and run work there (the DC's CA file here;\n"
	 "root and perl on the clients; on a Samba server root, Samba's tools, server.service's\n"
	 "command, winbind in nsswitch.conf, and in smb.conf security = ads, the realm,\n"
	 "registry shares and an idmap range), each missing one named with its fix\n"
	 "(docs/your-servers.md), and SMB on the server. A server of server.kind windows or nas\n"
	 "is reached over SSH only for a drain command, and its shares must be there already.\n"
	 "One line per check: ok, warn or FAIL, with what, where and what to do. Nothing is\n"
	 "changed.\n"
	 "Exit status: 0 when every check passes, else the code of the first failure."},
	{CMD_PREPARE, "prepare", pv_cmd_prepare, NULL, prepare_subs, false,
	 OPTS(OPT_CA_FILE, OPT_ADMIN_PASSWORD_FILE, OPT_USERS, OPT_OU, OPT_NAME_TEMPLATE,
	      OPT_PASSWORD_FILE, OPT_STDIN_PASSWORD, OPT_FORCE, OPT_VERIFY, OPT_VIA, OPT_BACKUP,
	      OPT_PARALLEL),
	 PBL, "prepare [dc|join|server|client|controller] [options]",
	 "prepare the whole lab, or one phase of it",
	 "Without a phase: runs dc, join, server, client and controller from the playbook, as\n"
	 "FSCT's prepare does, with independent work at once: the clients' hosts blocks and the\n"
	 "controller's results folder are done while dc, join and the server's trees go on. Every\n"
	 "phase looks first and makes only what is missing, so a lab that is already prepared is\n"
	 "confirmed in seconds and nothing changes. A phase that needs another that failed\n"
	 "(server after dc or join) is skipped, and so are join and server on a server of\n"
	 "server.kind windows or nas (its shares and trees are made outside provision). One\n"
	 "line per phase: done, already, partial, failed or skipped (planned with --dry-run),\n"
	 "with counts and time. Exit status: that of the first phase that failed, 10 (partial)\n"
	 "when a phase was partly done, else 0.\n"
	 "With a phase, 'prepare dc' is 'provision dc' (and so on): see 'provision help dc'.\n"
	 "Undo: provision cleanup."},
	{CMD_DC, "dc", pv_cmd_dc, &pv_render_dc, NULL, false,
	 OPTS(OPT_CA_FILE, OPT_ADMIN_PASSWORD_FILE, OPT_USERS, OPT_CLIENTS, OPT_OU,
	      OPT_NAME_TEMPLATE, OPT_PASSWORD_FILE, OPT_STDIN_PASSWORD, OPT_FORCE, OPT_VERIFY,
	      OPT_RESET_PASSWORDS),
	 PBL,
	 "dc [--users N] [--clients A,B] [--ou DN] [--name-template T] [--password-file F | "
	 "--stdin-password] [--reset-passwords] [--verify] [--force] [--ca-file FILE] "
	 "[--admin-password-file FILE]",
	 "create N domain users per client in the lab's OU",
	 "Creates users.per_client users for every client (FSCT semantics: --users 200 with two\n"
	 "clients makes 400), named from users.name_template ({client}-u{n}), each with\n"
	 "sAMAccountName, userPrincipalName (name@REALM), cn and displayName, enabled, the\n"
	 "password never expiring, tagged 'provision:<lab>' in its description, in the lab's OU\n"
	 "(made when missing). The password travels in the same LDAP add, only over LDAPS,\n"
	 "StartTLS (CA checked) or sealed SASL/GSSAPI; anything else is refused before sending.\n"
	 "Adds are pipelined on one connection. Re-runnable: one paged search finds\n"
	 "the users already there, and only the missing ones are made; a killed run is finished\n"
	 "by the next. The first add goes alone, so a password the domain refuses stops the run\n"
	 "after one try. --dry-run says what would be made. --verify then gets a Kerberos ticket\n"
	 "as the first, the last and a random user. A DC that goes away part way is named (status\n"
	 "6); run the command again once it is back. Undo: provision cleanup dc."},
	{CMD_JOIN, "join", pv_cmd_join, &pv_render_join, NULL, false, OPTS(OPT_ADMIN_PASSWORD_FILE),
	 PBL, "join [--admin-password-file FILE]", "join the file server to the domain over SSH",
	 "Over SSH to the server: checks its smb.conf (security = ads, the playbook's realm) and\n"
	 "its clock against the DC's ('net ads info'; more than 5 minutes apart is refused, as\n"
	 "Kerberos would), then kinit as the admin with the password on kinit's stdin into a\n"
	 "private ccache, 'net ads join' (no password on any command line), 'net ads keytab\n"
	 "create' when smb.conf's kerberos method uses a keytab, tags the computer account\n"
	 "'provision:<lab>:join' (its description), starts winbindd and smbd with server.service "
	 "and\n"
	 "checks 'wbinfo -t' and 'net ads testjoin'. On a joined server a re-run changes nothing\n"
	 "(it starts smbd and winbindd if they are stopped). Undo: provision cleanup join\n"
	 "[--leave]."},
	{CMD_SERVER, "server", pv_cmd_server, &pv_render_server, NULL, false,
	 OPTS(OPT_ADMIN_PASSWORD_FILE, OPT_USERS, OPT_PASSWORD_FILE, OPT_STDIN_PASSWORD, OPT_VIA,
	      OPT_PARALLEL),
	 PBL,
	 "server [--via smb|ssh] [--users N] [--parallel N] [--password-file F | --stdin-password] "
	 "[--admin-password-file FILE]",
	 "create the fsrootN shares, alias SPNs and per-user home trees",
	 "Needs a joined server (provision join). Makes the shares fsroot1..K (server.shares,\n"
	 "server.share_template) as Samba registry shares ('net conf addshare') on folders under\n"
	 "server.share_path, tagged 'provision:<lab>' in their comment; adds cifs/<alias> and\n"
	 "cifs/<alias>.<domain> for every alias ({server}u1..u<N>) to the server's computer\n"
	 "account in a few LDAP modifies, and to its keytab when it uses one; then builds every\n"
	 "user's home tree <share>/<user> (user i in share i mod K + 1) from server.fileset\n"
	 "(docs/fileset.md). The users' folders are made over SSH owned by the user (a user\n"
	 "missing from the domain stops the run there), and one listing over SSH finds the trees\n"
	 "that are complete already: only the others are built. The files go over SMB as each\n"
	 "user (NTLM, the users' password; --parallel worker processes, default one per server\n"
	 "core and at least 2, each one SMB connection carrying its users' sessions in turn,\n"
	 "a file in one request, SMB 2.0.2 to 3.1.1, signed or encrypted where the server or\n"
	 "the share requires it; libsmbclient, a connection per user, only with\n"
	 "PROVISION_SMB_CLIENT=libsmbclient), or with --via ssh as a tar stream into the\n"
	 "server's disk with the user's uid and gid. A re-run writes only missing files and\n"
	 "files of the wrong size.\n"
	 "--dry-run says what would be made. Undo: provision cleanup server."},
	{CMD_CLIENT, "client", pv_cmd_client, &pv_render_client, NULL, false,
	 OPTS(OPT_USERS, OPT_CLIENTS), PBL, "client [--clients A,B] [--users N]",
	 "write the per-user hosts aliases on every client",
	 "On every client (or those of --clients), over SSH, clients in parallel, writes this\n"
	 "lab's block into the hosts file, between '# BEGIN provision <lab>' and\n"
	 "'# END provision <lab>': '<server address> <server>' and the aliases <server>u1 ..\n"
	 "<server>u<N> (server.alias_template; N = users.per_client or --users) on lines of at\n"
	 "most 255 bytes. Linux: /etc/hosts, LF. Windows (OpenSSH for Windows, over SFTP, not\n"
	 "tested here): C:\\Windows\\System32\\drivers\\etc\\hosts, CRLF, at most 9 names a line.\n"
	 "Everything outside the block stays byte for byte; blocks of other labs are left alone;\n"
	 "another N replaces the block; the same N writes nothing. The first change keeps the\n"
	 "original as <hosts>.provision-<lab>-<client>.orig. The write holds a lock (flock),\n"
	 "refuses if the file changed since it was read, is atomic (rename) where it can be and\n"
	 "in place (fsync) where the file is a mount point (containers, network namespaces);\n"
	 "on failure the previous content stays. Then 'getent hosts' must resolve the first and\n"
	 "last alias to the server. Refused before anything is written: an alias over 15\n"
	 "characters, a server address that is not an IP, an unknown --clients name, a name of\n"
	 "ours that the file gives another address, a damaged block of this lab (status 11).\n"
	 "Exit status 10 when some clients failed and the others were done; each failed client\n"
	 "is named with its cause. --dry-run reads and says what would change. Undo: provision\n"
	 "cleanup client."},
	{CMD_CONTROLLER, "controller", pv_cmd_controller, &pv_render_controller, NULL, false,
	 OPTS(OPT_BACKUP), PBL, "controller [--backup DIR]",
	 "reset the controller's results folder, keeping a backup",
	 "Moves the results folder (controller.results; on controller.host over SSH when the\n"
	 "playbook names one, else here) to <results>.<YYYYmmdd-HHMMSS>, or to\n"
	 "DIR/<name>.<YYYYmmdd-HHMMSS> with --backup DIR, and makes it anew, empty, with the old\n"
	 "mode and owner. Results are never deleted. A missing folder is created; an empty one is\n"
	 "left as it is (nothing to do). The move is one rename: a --backup folder on another "
	 "file\n"
	 "system, or a results folder that is a mount point or a symbolic link, is refused before\n"
	 "anything moves (status 3); if the new folder cannot be made the old one is moved back.\n"
	 "On controller.host, --backup DIR must be absolute and normalized (status 2 otherwise).\n"
	 "'cleanup controller [--backup DIR]' does the same but never creates a missing folder."},
	{CMD_RUN, "run", pv_cmd_run, NULL, NULL, false,
	 OPTS(OPT_TIMEOUT, OPT_MIN_USERS, OPT_MAX_USERS, OPT_STEP, OPT_DURATION, OPT_WARMUP,
	      OPT_WATCH, OPT_ID, OPT_REFINE, OPT_OVER_STEPS, OPT_REPEAT),
	 PBL | PV_CMD_STOPPABLE,
	 "run [--min-users N] [--max-users N] [--step N] [--duration S] [--warmup S] "
	 "[--watch S] [--timeout S] [--id ID] [--refine N] [--over-steps N] [--repeat N]",
	 "run the load driver's phases across all hosts",
	 "Runs the playbook's load driver (driver:) for a ramp of user counts, as FSCT's run "
	 "does:\n"
	 "from min_users to max_users by step (totals across the clients, shared out evenly; the\n"
	 "last step is max_users), each step held warmup + duration seconds. For every step the\n"
	 "client command starts on every client at once over SSH, each in a process group of its\n"
	 "own under a small wrapper that stops the whole group (TERM, KILL 5 s later) when the\n"
	 "step ends, on Ctrl-C or SIGTERM, on the run's --timeout, or when the SSH session goes\n"
	 "away; then the controller's command runs. A step ends at its time, or earlier when "
	 "every\n"
	 "command has ended. Driver 'command' fills {client} {users} {users_total} {step} {steps}\n"
	 "{duration} {warmup} {results} {password_file} {server} {alias_template} {share} "
	 "{shares}\n"
	 "{domain} and more into client_command and controller_command (docs/playbook.md); the\n"
	 "users' password is only ever in {password_file} (0600, removed after the step). Driver\n"
	 "'fsct' renders FSCT's commands for Windows hosts (see them with --dry-run; this\n"
	 "version does not start them: status 12). Driver 'builtin' runs our own load from\n"
	 "Linux clients: provision is copied there and\n"
	 "'provision load' carries every user in one process (docs/load.md; the playbook's\n"
	 "load: section; load.workload: FILE replays a workload 'provision learn -o' wrote, its\n"
	 "kinds as the scenario 'learned'), and load.txt, load.csv, load.json and load.svg give\n"
	 "the answer: the most users the server carried without overload. With --refine N it\n"
	 "then runs steps between the last step carried and the first over it, halving the gap\n"
	 "until it is at most N users (driver.refine); with\n"
	 "--over-steps N the ramp ends once N steps in a row were over the answer (overloaded by\n"
	 "the server, not client-bound), the steps left not run (driver.over_steps).\n"
	 "The server is watched all along (driver.watch, default every 2 s; --watch 0: not): one\n"
	 "sampler on it over SSH reads /proc for CPU (total and smbd, winbindd, samba), memory,\n"
	 "disk I/O and network; so is the DC when domain.ssh says how to reach it (watch-dc.csv,\n"
	 "watch-dc.json). Each step's results are gathered into\n"
	 "<controller.results>/<run-id>/step-NN/<host>/ (the command's stdout, stderr and the "
	 "files\n"
	 "it wrote in {results}), with step-NN/watch.csv and step-NN/watch.json (mean, p95,\n"
	 "max) beside the hosts' folders, and manifest.json\n"
	 "(the playbook's SHA-256, versions, every step's times and host states) is rewritten "
	 "after\n"
	 "every step. With drain: {between_steps: true} the server's queue is waited for between\n"
	 "steps (see 'provision help wait'). --dry-run prints every command that would run.\n"
	 "A plan that cannot run (min > max, step or duration 0, more users than prepare makes,\n"
	 "fewer users than clients) is refused before anything starts (status 3).\n"
	 "--repeat N runs the whole ramp N times, as ID-r1 .. ID-rN, each with its own folder\n"
	 "and report, and gives the answer with its range: 'the server carried 90 users (80-90\n"
	 "over 3 repeats)'; <controller.results>/ID/repeats.txt names them, so that 'provision\n"
	 "compare ID OTHER' takes them as one group of repeats (their spread is the noise).\n"
	 "Exit status: 0 when every step ran and every command ended well or was stopped at its\n"
	 "step's end; 10 when a host was lost (the others are stopped, results kept) or some\n"
	 "commands failed; 8 when every command failed; 14 after --timeout; 15 after Ctrl-C or\n"
	 "SIGTERM (a second one ends provision at once; the hosts still stop their commands as\n"
	 "their sessions end); 12 with driver fsct, which this version does not start."},
	{CMD_WAIT, "wait", pv_cmd_wait, NULL, NULL, false,
	 OPTS(OPT_TIMEOUT, OPT_DRAIN, OPT_PROBE, OPT_PROBE_COMMAND, OPT_THRESHOLD, OPT_INTERVAL,
	      OPT_SETTLE),
	 PB | PV_CMD_STOPPABLE,
	 "wait [--drain] [--probe command|writeback|inflight|smb] [--probe-command CMD] "
	 "[--threshold N] [--interval S] [--settle S] [--timeout S]",
	 "wait until the server's queues have drained",
	 "Polls a probe on the file server (server.address, one SSH session for the whole wait)\n"
	 "until the depth it reads is at or below the threshold at every poll for the settle\n"
	 "time. Nothing is changed anywhere. --drain is what wait does; it may be left out.\n"
	 "Every setting is the playbook's drain: section, and each option overrides one key, so\n"
	 "a playbook without that section works with options alone:\n"
	 "  provision -p lab.yaml wait --drain --probe writeback --threshold 65536\n"
	 "Probes (--probe, drain.probe):\n"
	 "  command    drain.command (--probe-command CMD, which alone selects this probe), run\n"
	 "             on the server as given. It must exit 0 and print the depth and nothing\n"
	 "             else: one integer or decimal number (a decimal is rounded up), white space\n"
	 "             around it allowed; a NAS's req_queue length, say. Anything else is an\n"
	 "             error that quotes what it printed. Messages show the command's first word\n"
	 "             only (it may hold a token). Metric: req_queue (drain.metric names it).\n"
	 "  writeback  Dirty + Writeback of the server's /proc/meminfo, in kB: the kernel's write\n"
	 "             queue, data written but not on disk yet (Linux).\n"
	 "  inflight   the sum of both columns (reads, writes) of every /sys/block/*/inflight:\n"
	 "             the requests its block devices have in flight (Linux). A stacked device\n"
	 "             (dm, md) and the disk under it each count theirs.\n"
	 "  smb        'smbstatus --json --resolve-uids' (Samba 4.17 or later, read as root): the\n"
	 "             sessions plus the open files of this lab's users, the names\n"
	 "             users.name_template gives the playbook's clients (any number, any domain\n"
	 "             prefix, letters in any case); other users are not counted.\n"
	 "Timing: the first poll at once, then every --interval seconds (drain.interval,\n"
	 "default 2) while the depth falls. While it does not fall (the same or higher than the\n"
	 "poll before) the interval grows by half at each poll, up to 8 times --interval; it\n"
	 "comes back to --interval at the first poll that sees the depth fall or at or below\n"
	 "the threshold. Once at or below --threshold (drain.threshold, default 0) the depth must\n"
	 "stay there at every poll for --settle seconds (drain.settle, default 4; 0: the first\n"
	 "such poll ends the wait); a poll above it starts the settle again. --timeout\n"
	 "(drain.timeout, default 600) bounds the whole wait, the probe included: a probe that\n"
	 "does not answer is cut at the timeout (or after 6 times ssh.timeout).\n"
	 "Progress on a terminal: the depth, the drain rate (a running mean over the polls) and\n"
	 "the ETA ('req_queue 120, draining 40/s, ETA 3 s'), or 'settling 2/4 s'. The result, one\n"
	 "line: 'wait: req_queue drained to 0 (threshold 0) in 12.3 s, 7 polls, peak 120' "
	 "(--json:\n"
	 "the same fields, see docs/json.md). --dry-run says what would be polled and polls\n"
	 "nothing. 'provision run' waits the same way between its steps when the playbook says\n"
	 "drain: {between_steps: true}.\n"
	 "Exit status: 0 drained; 14 (timeout) not drained in time, the message naming the last\n"
	 "depth and the threshold; 15 (stopped) on Ctrl-C or SIGTERM, within a fraction of a\n"
	 "second (a second Ctrl-C ends provision at once); 8 (remote) when the probe fails or\n"
	 "prints something that is not its reading (quoted) at its first poll, or at two polls\n"
	 "in a row (one failure after a reading is warned of and asked again after the\n"
	 "interval); 3 (config) when no probe is set or\n"
	 "the playbook has no server; 6, 5 or 4 when the server cannot be reached, its host key\n"
	 "is not the known one, or the SSH key is refused."},
	{CMD_CLEANUP, "cleanup", pv_cmd_cleanup, NULL, cleanup_subs, false,
	 OPTS(OPT_ADMIN_PASSWORD_FILE, OPT_CLIENTS, OPT_OU, OPT_LEAVE, OPT_BACKUP), PBL,
	 "cleanup [dc|join|server|client|controller] [--leave] [--backup DIR] [--clients A,B] "
	 "[--ou DN] [--admin-password-file FILE]",
	 "remove what the lab (or one phase) made, and nothing else",
	 "Without a phase: every phase's cleanup, in three lines at once: the controller's then\n"
	 "the clients', the users' (dc), and the server's shares and trees (server) then its\n"
	 "membership (join). A failing phase stops none of the others: the run then ends\n"
	 "partial (status 10), naming what is left and why, and a re-run finishes what it can.\n"
	 "--leave is passed on to join; results backups are kept.\n"
	 "With a phase, it removes exactly the objects that phase made for this lab:\n"
	 "cleanup dc: deletes every user tagged with this lab (pipelined, or the whole OU in one\n"
	 "tree delete when it holds only the lab's users), then the lab's OU when this lab made "
	 "it\n"
	 "and it is empty; a second run says there is nothing to do.\n"
	 "cleanup client: removes this lab's hosts block from every client (or --clients), and\n"
	 "nothing else, safely as 'client' writes (lock, change check, rename or in place); the\n"
	 "original bytes come back (a line break provision added is taken away too). The backup\n"
	 "made by the first 'client' run is removed when it equals the result; if the file was\n"
	 "edited outside the block meanwhile it is kept, and a warning names it.\n"
	 "cleanup controller [--backup DIR]: the results folder moved to a timestamped backup and\n"
	 "left empty, as 'provision controller' does (see 'provision help controller'); a missing\n"
	 "folder is not created.\n"
	 "cleanup join: stops smbd and winbindd when this lab joined the server (its computer\n"
	 "account carries the tag); with --leave also 'net ads leave' (the keytab flushed, the\n"
	 "computer account deleted, by LDAP if the server cannot). A server this lab did not\n"
	 "join is left alone (--leave then fails with status 11).\n"
	 "cleanup server: deletes the shares whose comment is this lab's tag and their folders\n"
	 "with the trees in them, the folder server.share_path when left empty, and every\n"
	 "cifs/ SPN of an alias of server.alias_template from the computer account (and the\n"
	 "keytab, made anew without them)."},
	{CMD_STATUS, "status", pv_cmd_status, NULL, NULL, false,
	 OPTS(OPT_ADMIN_PASSWORD_FILE, OPT_USERS, OPT_OU, OPT_NAME_TEMPLATE), PB,
	 "status [--users N] [--ou DN] [--name-template T] [--admin-password-file FILE]",
	 "what the lab holds now, read from the hosts",
	 "A read-only inventory taken from the hosts themselves by the lab's tag (never from a\n"
	 "local file): the users present against those planned and the OU (LDAP); the server's\n"
	 "membership and trust, its shares, the alias SPNs on its account and how many users have\n"
	 "a complete tree (one listing over SSH); the hosts block on each client; the "
	 "controller's\n"
	 "results folder. Hosts are asked at once. A table on stdout (--json: the same, typed).\n"
	 "Exit status: 0 when everything the playbook asks for is in place; 13 (incomplete) when\n"
	 "something is missing (after cleanup: the lab holds nothing); the code of the failure\n"
	 "when a host could not be asked."},
	{CMD_LOAD, "load", pv_cmd_load, NULL, NULL, false,
	 OPTS(OPT_TIMEOUT, OPT_PARALLEL, OPT_DURATION, OPT_CLIENT, OPT_WORKGROUP, OPT_OPS),
	 PV_CMD_STOPPABLE,
	 "load --client NAME --workgroup NAME --duration SECONDS [--timeout S] [--parallel N] "
	 "[--ops KIND]",
	 "the built-in load driver on this client (run starts it; docs/load.md)",
	 "The part of the built-in load driver that runs on each Linux client: 'run' with\n"
	 "driver 'builtin' copies provision there and starts it over SSH. Needs no playbook.\n"
	 "stdin: the users' password on the first line, then setup lines (a 'config' line with\n"
	 "the load settings, one 'user NAME ALIAS SHARE N' line per user, 'start'; see\n"
	 "docs/load.md). Every user logs on over its own SMB connection to its own alias (at most\n"
	 "--parallel opening at once, default 64; --timeout per request, default 10 s) and its\n"
	 "home tree is listed; then 'ready {...}' is printed and, after a 'go' line on stdin,\n"
	 "every user runs its schedule for --duration seconds. One process carries every user:\n"
	 "one event loop (epoll, a thread each) per core it may run on, at most 64 (the\n"
	 "playbook's load.threads), with a socket per user: the open-files limit is raised to\n"
	 "users + 64 when the hard limit allows, else status 9 names both.\n"
	 "stdout: one line of figures per interval (load/line.h). The end of stdin, a 'stop'\n"
	 "line, Ctrl-C or SIGTERM stop it (status 15) after the figures so far."},
	{CMD_REPORT, "report", pv_cmd_report, NULL, NULL, false, OPTS(OPT_HTML), PV_CMD_OPERANDS,
	 "report RUN_DIR [--html FILE]", "write a run's report.html (docs/report.md)",
	 "Reads the run's folder (<controller.results>/<run-id>: manifest.json, the steps'\n"
	 "watch.csv, load.json and the clients' lines of figures) and writes report.html there\n"
	 "(--html FILE: there instead): one page that stands alone, opens offline and fetches\n"
	 "nothing: the answer with its step and margin, the ramp plot, the steps with their\n"
	 "intervals, latency and mix per scenario kind, the server's (and the DC's, the\n"
	 "clients') CPU, memory, disks and network over the run with the steps marked, a\n"
	 "bottleneck hint, the settings and versions, the errors. Any driver (command, fsct,\n"
	 "builtin); what a run did not record is said so. 'run' writes it at its end too.\n"
	 "Needs no playbook. Exit status: 3 when RUN_DIR is not a run's folder, 9 when the\n"
	 "page cannot be written."},
	{CMD_COMPARE, "compare", pv_cmd_compare, NULL, NULL, false, OPTS(OPT_HTML), PV_CMD_OPERANDS,
	 "compare RUN_A RUN_B [RUN_C...] [--html FILE]",
	 "runs side by side: which differences are beyond the noise (docs/report.md)",
	 "Compares runs of the built-in driver, the first (A) against each other. A run may be\n"
	 "a group of repeats of one setting, their folders joined by commas (A1,A2,A3): the\n"
	 "spread across them is then the noise. Steps are matched by their users. Per step:\n"
	 "throughput, overload, latency median and p95 of each, the difference from A with its\n"
	 "interval, and whether it is beyond the noise (95% over all the steps compared: one\n"
	 "run's noise from its counts and latency histograms). Then each run's answer and\n"
	 "whether its difference from A's is real, and what differs between the runs (playbook\n"
	 "values, the server's configuration at run time, versions). --html FILE writes the\n"
	 "same with an overlay plot as a page that stands alone. Needs no playbook.\n"
	 "Exit status: 0 when compared (whatever differs); 2 with fewer than two runs; 3 when\n"
	 "the runs cannot be compared (another driver, no load figures, no step in common),\n"
	 "naming why."},
	{CMD_COPY, "copy", pv_cmd_copy, NULL, NULL, false,
	 OPTS(OPT_FROM, OPT_FILESET, OPT_CLIENT, OPT_SHARE, OPT_TO, OPT_MT, OPT_CONNECTIONS,
	      OPT_MIRROR, OPT_NO_PROFILE, OPT_INTERVAL, OPT_ID),
	 PB | PV_CMD_STOPPABLE,
	 "copy --from FOLDER|--fileset FILE [--client NAME] [--share S] [--to FOLDER] [--mt N] "
	 "[--connections N] [--mirror] [--no-profile] [--interval S] [--id ID]",
	 "copy a tree of small files to the server as robocopy does, and say what bounds it",
	 "Copies a tree from one client (--client, default the first) to a folder of a share\n"
	 "over provision's own SMB client, as robocopy /MIR /COPY:DT /FFT /MT:n copies it, and\n"
	 "measures it as robocopy's users know it: files, bytes, files/s with its 95% interval,\n"
	 "MB/s and MB/min, each file's latency by size class. The source is a folder on the\n"
	 "client (--from, an absolute path: folders and regular files; links and devices are\n"
	 "skipped and counted) or a fileset (--fileset FILE, e.g. "
	 "playbooks/filesets/srctree.yaml:\n"
	 "the same tree and bytes on every machine). The target is --to FOLDER of --share\n"
	 "(default: <user>/copy in the user's home share: the client's first user, whose\n"
	 "password is the users' shared one). Each file is one compound request (CREATE, WRITEs,\n"
	 "its LastWriteTime, CLOSE) with --mt of them in flight per connection (default 8) over\n"
	 "--connections connections (default 1). A file of the same size whose time is within\n"
	 "2 s is not sent again (/FFT): a second copy sends nothing, and its time is a figure\n"
	 "too. --mirror removes what the target holds and the source does not (/MIR); without\n"
	 "it extras stay.\n"
	 "Meanwhile the server is watched every --interval seconds (default 1): its CPU, and\n"
	 "each busy smbd's share of a core, its threads and its busiest thread, and the CPU\n"
	 "quota (cgroup v1 or v2) that holds it; smbstatus ties the smbd to the copy's\n"
	 "connection. On a Samba server its profiling is turned on for the copy (smbcontrol: no\n"
	 "configuration changes) and its level put back after, whatever happens (--no-profile:\n"
	 "left alone); smbd's system calls by time and count are shown. Then one paragraph says\n"
	 "what bounds the copy: one smbd at a full core (Samba serves a connection in one\n"
	 "process), a CPU quota, the client, the disk, or that the data cannot tell.\n"
	 "Results in <controller.results>/<id>/ (default id copy-<UTC time>): copy.txt,\n"
	 "copy.json, ticks.csv, watch.csv, smbd.csv and report.html. --json prints the same;\n"
	 "--dry-run says what would be done.\n"
	 "Exit status: 0 copied; 2 bad options; 3 the playbook lacks what copy needs, or no\n"
	 "such source; 4 the user's logon refused; 6 a host unreachable; 8 the server refused\n"
	 "or the agent failed (its message); 15 stopped (Ctrl-C: the agent stops, Samba's level\n"
	 "is put back, what was gathered is kept)."},
	{CMD_COPY_AGENT, "copy-agent", pv_cmd_copy_agent, NULL, NULL, false, NULL, PV_CMD_STOPPABLE,
	 "copy-agent", "the copy job's part on a client (copy starts it; docs/copy.md)",
	 "The part of 'copy' that runs on the client: 'copy' copies provision there and starts\n"
	 "it over SSH. Needs no playbook. stdin: the user's password on the first line, then a\n"
	 "'copy KEY=VALUE ...' line (server, share, base, workgroup, user, window, connections,\n"
	 "mirror, fft, timeout, interval, dir), a 'fileset NAME LENGTH' line and its text when\n"
	 "the source is a fileset, and 'start'. stdout: 'copy-conn', 'copy-plan', 'copy-tick'\n"
	 "and 'copy-done' lines (load/copy.h). The end of stdin, Ctrl-C or SIGTERM stop it\n"
	 "(status 15)."},
	{CMD_SWEEP, "sweep", NULL, NULL, sweep_subs, true,
	 OPTS(OPT_SETTING, OPT_SETTING_COMMAND, OPT_REPEAT, OPT_ID, OPT_FROM, OPT_FILESET,
	      OPT_CLIENT, OPT_SHARE, OPT_MT, OPT_CONNECTIONS, OPT_NO_PROFILE, OPT_INTERVAL,
	      OPT_MIN_USERS, OPT_MAX_USERS, OPT_STEP, OPT_REFINE, OPT_OVER_STEPS, OPT_DURATION,
	      OPT_WARMUP, OPT_WATCH),
	 PBL | PV_CMD_STOPPABLE,
	 "sweep copy|run --setting PARAM=VALUE... [--setting-command 'APPLY ;; REVERT']... "
	 "[--repeat N] [the job's options]",
	 "run one job under several server settings, with repeats, and say which setting "
	 "helps",
	 "Runs one job (a copy, with copy's options; or a run, with run's) under the baseline\n"
	 "and under each setting in turn, --repeat rounds (default 3), interleaved: the\n"
	 "baseline, then every setting, round after round (never in blocks). A setting is a\n"
	 "Samba parameter (--setting 'case sensitive=yes', repeatable), set through net conf on\n"
	 "every share the lab made, or in [global] when the server's [global] reads the\n"
	 "registry (include = registry; refused otherwise, saying so); or any server's own pair\n"
	 "of commands (--setting-command 'APPLY ;; REVERT', repeatable). Before anything runs\n"
	 "every Samba setting is checked by the server's testparm: one it refuses is refused,\n"
	 "the parameter named. Each setting is applied just before its job and put back just\n"
	 "after it; every setting applied is put back on every way out (a failed job, Ctrl-C,\n"
	 "a lost SSH connection), and an interrupted sweep says what it put back. The server's\n"
	 "configuration in effect (testparm -s) must be the same byte for byte after the sweep\n"
	 "as before it. A copy's target is a folder of its own per job, removed after it as the\n"
	 "user. Per condition: the median of its repeats with the interval of their mean, the\n"
	 "difference against the baseline with its interval (Welch, as compare judges groups of\n"
	 "repeats), whether it is beyond the noise, and the server's smbd CPU per file (copy).\n"
	 "Results in <controller.results>/<id>/ (default sweep-<UTC time>): sweep.txt,\n"
	 "sweep.json, revert.txt (what would undo every setting, written first), report.html\n"
	 "with a bar chart; each job's own folder beside it (<id>-base-rN, <id>-sK-rN).\n"
	 "Exit status: 0 swept; 2 bad options; 3 a setting the server refuses, a global one it\n"
	 "cannot take, or a share the lab did not make; 8 the server failed, or its\n"
	 "configuration is not as it was after the sweep; 15 stopped; a job's own code when it\n"
	 "failed (the settings put back all the same)."},
	{CMD_LEARN, "learn", pv_cmd_learn, NULL, NULL, false,
	 OPTS(OPT_PORT, OPT_GAP, OPT_KEEP_NAMES, OPT_OUTPUT, OPT_CHECK_REPLAY), PV_CMD_OPERANDS,
	 "learn CAPTURE [-o WORKLOAD.yaml] [--check REPLAY] [--port N] [--gap SECONDS] "
	 "[--keep-names]",
	 "what a capture of a file server's SMB traffic holds (docs/learn.md)",
	 "Reads a pcap or pcapng capture (tcpdump -w on the server, or Wireshark on a client)\n"
	 "of SMB2/3 over TCP (port 445, or --port N) in one streaming pass, in memory that does\n"
	 "not grow with its length: each connection put back in order (reordered and repeated\n"
	 "segments, and bytes the capture lost, which are counted), its NetBIOS frames, and\n"
	 "every SMB2 request and answer decoded, compounds included, answers matched to their\n"
	 "requests.\n"
	 "Prints the requests by command with their share, how many were answered in the\n"
	 "capture, and what it could not read, with its share of the SMB bytes: encrypted or\n"
	 "compressed frames, SMB1, bytes lost, frames out of step. Then what the users did: a\n"
	 "user is an account (the name of an NTLM logon, kept only as a hash unless\n"
	 "--keep-names), else the client's address (no name seen: Kerberos), else a session\n"
	 "whose logon was not captured; their requests and logons per user-hour, their logons\n"
	 "again (from one to the next: what a replay makes), the sessions' lifetimes, their\n"
	 "activities (requests more than --gap apart start another, unless the\n"
	 "user holds a file open, for up to 10 gaps; by default the gap is learned: the split\n"
	 "between the two modes of the gaps between a user's requests), the gaps within an\n"
	 "activity and the think times between, the kinds of\n"
	 "activity (the sequence of its commands, repeats folded, and the depth below the\n"
	 "user's home of what each CREATE names) with their share, rate per user-hour, requests\n"
	 "and length, read and write sizes, how long files stay open. The file is read twice\n"
	 "(the kinds need the gap and the users' homes).\n"
	 "-o FILE writes what was learned as a workload a person can read and edit (YAML: the\n"
	 "users' rates, the activity gap and think times, the kinds with a weight each, the\n"
	 "command mix, sizes, open times, and the namespace its answers showed as the fileset of\n"
	 "a user's home, which prepare builds; no name, path or byte of the capture), replacing\n"
	 "FILE whole; the playbook's load.workload: FILE replays it (docs/learn.md).\n"
	 "--check REPLAY reads REPLAY, a capture of that replay, with the same gap, and checks\n"
	 "it against CAPTURE: each file command's share (CREATE by disposition, IOCTL by\n"
	 "control code) within 3 points for those above 1%, a total variation of 0.05 at most;\n"
	 "requests per user-hour and logons again within 10% (logons again too few in CAPTURE to\n"
	 "tell 10%: within chance); a user's gaps between requests (p50\n"
	 "and p95 within 20%, Kolmogorov-Smirnov 0.10 at most); read and write sizes (p50 and\n"
	 "p95 within 20%, each power-of-two bucket within 3 points); answers of another status\n"
	 "class 1% at most, names not found 0.5 points more at most; listings of a folder at\n"
	 "the user's home, below it and outside it, each within 3 points; 99% of the requests\n"
	 "of each matched to their answer. Prints each check, pass or FAIL.\n"
	 "--json gives every count (docs/json.md). Needs no playbook. Exit status: 1 the replay\n"
	 "fails a check; 2 bad options; 3 a file that is not a capture provision reads, a link\n"
	 "type it does not read, or one damaged part-way (what came before it is still shown;\n"
	 "no workload is written then); 9 FILE cannot be written."},
	{CMD_HELP, "help", NULL, NULL, NULL, false, NULL, 0, "help [command]",
	 "show help for a command",
	 "Shows a command's usage, what it does, its options, the global options and the exit\n"
	 "statuses; with no command, the list of commands (as --help)."},
};

const struct pv_option pv_options[] = {
	{OPT_PLAYBOOK, "playbook", 'p', "FILE", true,
	 "the playbook (default: $PROVISION_PLAYBOOK, else ./provision.yaml)"},
	{OPT_VERBOSE, "verbose", 'v', NULL, true, "more detail on stderr (repeat for debug)"},
	{OPT_QUIET, "quiet", 'q', NULL, true, "only errors on stderr"},
	{OPT_JSON, "json", 0, NULL, true, "results as JSON on stdout"},
	{OPT_DRY_RUN, "dry-run", 'n', NULL, true, "say what would change, change nothing"},
	{OPT_NO_PROGRESS, "no-progress", 0, NULL, true, "no live progress bar"},
	{OPT_VERSION, "version", 'V', NULL, true, "print the version and exit"},
	{OPT_HELP, "help", 'h', NULL, true, "show help (for the command, when one is given)"},
	{OPT_SET, "set", 0, "KEY=VALUE", true,
	 "override a playbook value, e.g. --set users.per_client=20 (repeatable)"},
	{OPT_CA_FILE, "ca-file", 0, "FILE", false,
	 "CA file for LDAPS/StartTLS (overrides domain.ca_file)"},
	{OPT_ADMIN_PASSWORD_FILE, "admin-password-file", 0, "FILE", false,
	 "read the admin password from FILE (overrides domain.admin_password)"},
	{OPT_USERS, "users", 'u', "N", false, "users per client (overrides users.per_client)"},
	{OPT_CLIENTS, "clients", 'c', "A,B", false, "only these clients (names from the playbook)"},
	{OPT_OU, "ou", 0, "DN", false, "the lab's OU (overrides users.ou)"},
	{OPT_NAME_TEMPLATE, "name-template", 0, "T", false,
	 "user name template (overrides users.name_template)"},
	{OPT_PASSWORD_FILE, "password-file", 0, "FILE", false,
	 "read the users' shared password from FILE"},
	{OPT_STDIN_PASSWORD, "stdin-password", 0, NULL, false,
	 "read the users' shared password from the first line of stdin"},
	{OPT_FORCE, "force", 'f', NULL, false, "allow more than 1,000,000 users"},
	{OPT_VERIFY, "verify", 0, NULL, false, "kinit as the first, last and a random user"},
	{OPT_RESET_PASSWORDS, "reset-passwords", 0, NULL, false,
	 "also set the password of users already present"},
	{OPT_VIA, "via", 0, "smb|ssh", false, "build home trees over SMB or on the server's disk"},
	{OPT_LEAVE, "leave", 0, NULL, false,
	 "cleanup join: leave the domain and delete the computer account"},
	{OPT_BACKUP, "backup", 0, "DIR", false, "where the results folder's backup goes"},
	{OPT_TIMEOUT, "timeout", 't', "SECONDS", false,
	 "give up after SECONDS (load: per SMB request)"},
	{OPT_PARALLEL, "parallel", 0, "N", false,
	 "server: SMB connections building trees at once (default: server cores, at least 2); "
	 "load: logons opening at once (default 64)"},
	{OPT_MIN_USERS, "min-users", 0, "N", false,
	 "users in the first step, all clients together (driver.min_users)"},
	{OPT_MAX_USERS, "max-users", 0, "N", false,
	 "users in the last step, all clients together (driver.max_users)"},
	{OPT_STEP, "step", 0, "N", false, "users added from one step to the next (driver.step)"},
	{OPT_REFINE, "refine", 0, "N", false,
	 "builtin: bisect after the ramp until the answer is known to N users (driver.refine)"},
	{OPT_OVER_STEPS, "over-steps", 0, "N", false,
	 "builtin: end the ramp after N steps in a row over the answer (driver.over_steps)"},
	{OPT_DURATION, "duration", 0, "SECONDS", false,
	 "how long each step is held (driver.duration)"},
	{OPT_WARMUP, "warmup", 0, "SECONDS", false,
	 "the start of each step not measured (driver.warmup)"},
	{OPT_WATCH, "watch", 0, "SECONDS", false,
	 "seconds between samples of the server, 0 for none (driver.watch)"},
	{OPT_ID, "id", 0, "ID", false,
	 "the run's (or copy's) id, its results folder's name (default: the UTC time, "
	 "20261130-121500)"},
	{OPT_CLIENT, "client", 0, "NAME", false,
	 "load: this client's name (schedules' seeds); copy: the client that copies"},
	{OPT_WORKGROUP, "workgroup", 0, "NAME", false, "load: the users' domain (NetBIOS)"},
	{OPT_OPS, "ops", 0, "KIND", false,
	 "load: no schedules: each user opens, writes 4 KiB to and closes its own file "
	 "(open-write-close), or opens its share's root for its attributes (a stat open, as "
	 "smbtorture's bench does) and closes it (open-close), as fast as it can "
	 "(bench/load.sh); prints 'ops {...}' at the end"},
	{OPT_PORT, "port", 0, "N", false, "learn: the SMB port of the capture (default 445)"},
	{OPT_KEEP_NAMES, "keep-names", 0, NULL, false,
	 "learn: name the users by their accounts, not by hashes of them"},
	{OPT_OUTPUT, "output", 'o', "FILE", false,
	 "learn: write the learned workload (YAML) to FILE"},
	{OPT_GAP, "gap", 0, "SECONDS", false,
	 "learn: the idle time that ends a user's activity (default: learned from the capture)"},
	{OPT_CHECK_REPLAY, "check", 0, "REPLAY", false,
	 "learn: check a capture of the workload's replay against CAPTURE, with issue 29's "
	 "bounds"},
	{OPT_HTML, "html", 0, "FILE", false,
	 "report: write the page here instead of RUN_DIR/report.html; compare: also write the "
	 "comparison as a page here"},
	{OPT_FROM, "from", 0, "FOLDER", false,
	 "copy: the source, an absolute folder on the client"},
	{OPT_FILESET, "fileset", 0, "FILE", false,
	 "copy: the source, a fileset (the same tree and bytes anywhere)"},
	{OPT_SHARE, "share", 0, "NAME", false,
	 "copy: the target's share (default: the user's home share)"},
	{OPT_TO, "to", 0, "FOLDER", false,
	 "copy: the target folder in the share, made when missing (default: <user>/copy)"},
	{OPT_MT, "mt", 0, "N", false,
	 "copy: requests in flight per connection, as robocopy /MT:N (default 8, at most 64)"},
	{OPT_CONNECTIONS, "connections", 0, "N", false,
	 "copy: SMB connections the files are spread over (default 1, at most 16)"},
	{OPT_MIRROR, "mirror", 0, NULL, false,
	 "copy: remove what the target holds and the source does not (robocopy /MIR)"},
	{OPT_NO_PROFILE, "no-profile", 0, NULL, false,
	 "copy: leave Samba's profiling alone (no system calls shown)"},
	{OPT_SETTING, "setting", 0, "PARAM=VALUE", false,
	 "sweep: a Samba parameter to sweep (repeatable)"},
	{OPT_SETTING_COMMAND, "setting-command", 0, "'APPLY ;; REVERT'", false,
	 "sweep: a pair of commands run on the server to apply and put back a setting "
	 "(repeatable)"},
	{OPT_REPEAT, "repeat", 0, "N", false,
	 "run: the whole ramp N times (ids ID-r1..ID-rN), the answer with its range; sweep: "
	 "rounds over every condition (default 3)"},
	{OPT_DRAIN, "drain", 0, NULL, false,
	 "wait until the server's queue has drained (what wait does; may be left out)"},
	{OPT_PROBE, "probe", 0, "KIND", false,
	 "what to poll: command, writeback, inflight or smb (drain.probe)"},
	{OPT_PROBE_COMMAND, "probe-command", 0, "CMD", false,
	 "command run on the server printing the queue depth (drain.command); alone, it "
	 "selects the command probe"},
	{OPT_THRESHOLD, "threshold", 0, "N", false,
	 "drained at or below this depth (drain.threshold)"},
	{OPT_INTERVAL, "interval", 0, "SECONDS", false,
	 "wait: first interval between polls, backing off (drain.interval); copy: seconds "
	 "between the server's samples (the copy's own figures come every 0.25 s)"},
	{OPT_SETTLE, "settle", 0, "SECONDS", false,
	 "how long the depth must stay drained (drain.settle)"},
};

const size_t pv_noptions = sizeof(pv_options) / sizeof(pv_options[0]);

enum pv_cmd_id pv_cli_phase(const char *sub)
{
	static const enum pv_cmd_id phases[] = {CMD_DC, CMD_JOIN, CMD_SERVER, CMD_CLIENT,
						CMD_CONTROLLER};

	for (size_t i = 0; sub && i < sizeof(phases) / sizeof(phases[0]); i++)
		if (strcmp(pv_commands[phases[i]].name, sub) == 0)
			return phases[i];
	return CMD_COUNT;
}

const struct pv_command *pv_cli_command(const char *name)
{
	for (size_t i = 0; i < CMD_COUNT; i++)
		if (strcmp(pv_commands[i].name, name) == 0)
			return &pv_commands[i];
	return NULL;
}

static const struct pv_option *find_long(const char *name, size_t len)
{
	for (size_t i = 0; i < pv_noptions; i++)
		if (strlen(pv_options[i].lng) == len && strncmp(pv_options[i].lng, name, len) == 0)
			return &pv_options[i];
	return NULL;
}

static const struct pv_option *find_short(char c)
{
	for (size_t i = 0; i < pv_noptions; i++)
		if (pv_options[i].shrt == c)
			return &pv_options[i];
	return NULL;
}

const struct pv_sub *pv_cli_sub(const struct pv_command *cmd, const char *name)
{
	for (const struct pv_sub *x = cmd->subs; x && x->name; x++)
		if (strcmp(x->name, name) == 0)
			return x;
	return NULL;
}

bool pv_cli_takes(const struct pv_command *cmd, enum pv_opt_id id)
{
	for (const enum pv_opt_id *o = cmd->options; o && *o != OPT_COUNT; o++)
		if (*o == id)
			return true;
	return false;
}

pv_handler pv_cli_handler(const struct pv_cli *cli)
{
	const struct pv_sub *x = cli->sub && cli->cmd ? pv_cli_sub(cli->cmd, cli->sub) : NULL;

	if (!cli->cmd)
		return NULL;
	return x ? x->run : cli->cmd->run;
}

/* "dc|join|..." */
static const char *sub_names(const struct pv_command *cmd, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	for (const struct pv_sub *x = cmd->subs; x && x->name && n < len; x++)
		n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? "|" : "", x->name);
	return buf;
}

static int add_set(struct pv_cli *cli, const char *v)
{
	const char **n;

	if (!strchr(v, '=') || v[0] == '=')
		return pv_error(PV_EUSAGE,
				"option '--set' needs KEY=VALUE, e.g. --set users.per_client=20; "
				"got '%s'",
				v);
	n = realloc(cli->sets, (cli->nsets + 2) * sizeof(*n));
	if (!n)
		return pv_error(PV_EIO, "out of memory");
	n[cli->nsets++] = v;
	n[cli->nsets] = NULL;
	cli->sets = n;
	return PV_OK;
}

/* A repeatable option's value kept with those before it. */
static int add_many(const char ***v, size_t *n, const char *val)
{
	const char **x = realloc(*v, (*n + 2) * sizeof(*x));

	if (!x)
		return pv_error(PV_EIO, "out of memory");
	x[(*n)++] = val;
	x[*n] = NULL;
	*v = x;
	return PV_OK;
}

/* Whether cmd accepts option o: prepare takes its phases' options too, checked once its phase
 * is known (prepare_options). */
static bool accepted(const struct pv_command *cmd, const struct pv_option *o)
{
	if (pv_cli_takes(cmd, o->id))
		return true;
	for (const struct pv_sub *x = cmd->id == CMD_PREPARE ? cmd->subs : NULL; x && x->name; x++)
		if (pv_cli_takes(&pv_commands[pv_cli_phase(x->name)], o->id))
			return true;
	return false;
}

/* 'prepare' alone takes its own options; 'prepare <phase>' those of the phase. */
static int prepare_options(const struct pv_cli *cli)
{
	const struct pv_command *need = cli->sub ? &pv_commands[pv_cli_phase(cli->sub)] : cli->cmd;

	for (size_t i = 0; i < pv_noptions; i++) {
		const struct pv_option *o = &pv_options[i];

		if (!o->global && cli->opt[o->id] && !pv_cli_takes(need, o->id))
			return pv_error(PV_EUSAGE,
					"option '--%s' is not an option of 'prepare%s%s'; "
					"see 'provision help %s'",
					o->lng, cli->sub ? " " : "", cli->sub ? cli->sub : "",
					cli->sub ? cli->sub : "prepare");
	}
	return PV_OK;
}

/* Store one option's value after checking the command accepts it. */
static int take(struct pv_cli *cli, const struct pv_option *o, const char *val, const char *spelled)
{
	if (!o->global && (!cli->cmd || !accepted(cli->cmd, o))) {
		if (!cli->cmd)
			return pv_error(PV_EUSAGE,
					"option '%s' belongs after a command; see "
					"'provision --help'",
					spelled);
		return pv_error(PV_EUSAGE,
				"option '%s' is not an option of '%s'; see 'provision help %s'",
				spelled, cli->cmd->name, cli->cmd->name);
	}
	switch (o->id) {
	case OPT_VERBOSE:
		cli->verbosity = cli->verbosity < 0 ? 1 : cli->verbosity + 1;
		break;
	case OPT_QUIET:
		cli->verbosity = -1;
		break;
	case OPT_SET:
		return add_set(cli, val);
	case OPT_SETTING:
		return add_many(&cli->settings, &cli->nsettings, val);
	case OPT_SETTING_COMMAND:
		return add_many(&cli->setting_commands, &cli->nsetting_commands, val);
	default:
		break;
	}
	cli->opt[o->id] = val ? val : "1";
	return PV_OK;
}

static int positional(struct pv_cli *cli, const char *arg)
{
	if (!cli->cmd) {
		cli->cmd = pv_cli_command(arg);
		if (!cli->cmd)
			return pv_error(PV_EUSAGE,
					"unknown command '%s'; see 'provision --help' for the "
					"list",
					arg);
		return PV_OK;
	}
	if (!cli->sub && cli->cmd->id == CMD_HELP) {
		if (!pv_cli_command(arg))
			return pv_error(PV_EUSAGE,
					"no help for '%s': not a command; see 'provision --help'",
					arg);
		cli->sub = arg;
		return PV_OK;
	}
	if (cli->cmd->flags & PV_CMD_OPERANDS) {
		const char **n = realloc(cli->args, (cli->nargs + 1) * sizeof(*n));

		if (!n)
			return pv_error(PV_EIO, "out of memory");
		n[cli->nargs++] = arg;
		cli->args = n;
		return PV_OK;
	}
	if (!cli->sub && cli->cmd->subs) {
		char names[128];

		if (!pv_cli_sub(cli->cmd, arg))
			return pv_error(PV_EUSAGE, "'%s %s': expected one of %s", cli->cmd->name,
					arg, sub_names(cli->cmd, names, sizeof(names)));
		cli->sub = arg;
		return PV_OK;
	}
	return pv_error(PV_EUSAGE, "unexpected argument '%s' to '%s'; usage: provision %s", arg,
			cli->cmd->name, cli->cmd->usage);
}

int pv_cli_parse(int argc, char **argv, struct pv_cli *cli)
{
	bool only_positional = false;
	int r;

	memset(cli, 0, sizeof(*cli));
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const struct pv_option *o;

		if (only_positional || a[0] != '-' || a[1] == '\0') {
			if ((r = positional(cli, a)) != PV_OK)
				return r;
			continue;
		}
		if (strcmp(a, "--") == 0) {
			only_positional = true;
			continue;
		}
		if (a[1] == '-') {
			const char *name = a + 2, *eq = strchr(name, '=');
			size_t len = eq ? (size_t)(eq - name) : strlen(name);
			const char *val = eq ? eq + 1 : NULL;

			o = find_long(name, len);
			if (!o)
				return pv_error(PV_EUSAGE,
						"unknown option '--%.*s'; see 'provision --help'",
						(int)len, name);
			if (o->arg && !val) {
				if (i + 1 >= argc)
					return pv_error(PV_EUSAGE,
							"option '--%s' needs a value (%s)", o->lng,
							o->arg);
				val = argv[++i];
			} else if (!o->arg && val) {
				return pv_error(PV_EUSAGE, "option '--%s' takes no value", o->lng);
			}
			if ((r = take(cli, o, val, a)) != PV_OK)
				return r;
			continue;
		}
		/* bundled short options: -vq, -p FILE, -pFILE */
		for (const char *c = a + 1; *c; c++) {
			char spelled[3] = {'-', *c, '\0'};
			const char *val = NULL;

			o = find_short(*c);
			if (!o)
				return pv_error(PV_EUSAGE,
						"unknown option '-%c'; see 'provision --help'", *c);
			if (o->arg) {
				if (c[1])
					val = c + 1;
				else if (i + 1 < argc)
					val = argv[++i];
				else
					return pv_error(PV_EUSAGE,
							"option '-%c' needs a value (%s)", *c,
							o->arg);
			}
			if ((r = take(cli, o, val, spelled)) != PV_OK)
				return r;
			if (val)
				break;
		}
	}
	if (!cli->sets) {
		cli->sets = calloc(1, sizeof(*cli->sets));
		if (!cli->sets)
			return pv_error(PV_EIO, "out of memory");
	}
	if (cli->cmd && cli->cmd->sub_required && !cli->sub && !cli->opt[OPT_HELP]) {
		char names[128];

		return pv_error(PV_EUSAGE, "'%s' needs one of %s; usage: provision %s",
				cli->cmd->name, sub_names(cli->cmd, names, sizeof(names)),
				cli->cmd->usage);
	}
	if (cli->cmd && cli->cmd->id == CMD_PREPARE)
		return prepare_options(cli);
	return PV_OK;
}

void pv_cli_release(struct pv_cli *cli)
{
	free(cli->settings);
	free(cli->setting_commands);
	cli->settings = cli->setting_commands = NULL;
	cli->nsettings = cli->nsetting_commands = 0;
	free(cli->sets);
	cli->sets = NULL;
	cli->nsets = 0;
	free(cli->args);
	cli->args = NULL;
	cli->nargs = 0;
}

int pv_cli_count(const char *option, const char *text, unsigned long max, unsigned long *out)
{
	unsigned long v;
	char *end;

	if (!text || !*text || text[0] == '-' || text[0] == '+' || text[0] == ' ')
		return pv_error(PV_EUSAGE,
				"%s '%s' is not a number; expected a whole number from 1 to %lu",
				option, text ? text : "", max);
	errno = 0;
	v = strtoul(text, &end, 10);
	if (*end)
		return pv_error(PV_EUSAGE,
				"%s '%s' is not a number; expected a whole number from 1 to %lu",
				option, text, max);
	if (v == 0)
		return pv_error(PV_EUSAGE, "%s must be at least 1", option);
	if (errno == ERANGE || v > max)
		return pv_error(PV_EUSAGE, "%s '%s' is larger than %lu", option, text, max);
	*out = v;
	return PV_OK;
}
