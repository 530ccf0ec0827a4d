/* run/drain.h: waiting for the file server to drain (provision wait --drain, and run between
 * the steps of a ramp): a probe polled on the server over one SSH session until the depth it
 * reads is at or below a threshold and has stayed there for a settle time.
 *
 * The probes (struct pv_playbook_drain, playbooks/playbook.h), each one remote command per poll:
 *   command    the playbook's drain.command, run as given; it prints the depth: one integer or
 *              decimal number, surrounding white space allowed (a NAS's req_queue length)
 *   writeback  Dirty + Writeback of /proc/meminfo, in kB: the kernel's write queue
 *   inflight   the sum of both columns (reads, writes) of every /sys/block/<dev>/inflight
 *   smb        from `smbstatus --json --resolve-uids` (Samba 4.17 and later): the sessions and
 *              the open files of this lab's users (pv_run_drain_lab_user)
 *
 * The parsing of each probe's output, the back-off, the rate and ETA are pure functions below,
 * unit-tested in tests/unit/check_drain.c; pv_run_drain_wait does the I/O. */
#ifndef PV_RUN_DRAIN_H
#define PV_RUN_DRAIN_H

#include <stdbool.h>
#include <stddef.h>

#include "env/env.h"

struct pv_run_drain_result {
	char metric[64];	/* what was polled: "req_queue", "dirty+writeback kB", ... */
	long first, last, peak; /* depths seen (0 when polls is 0) */
	unsigned polls;
	double seconds; /* from the start to drained (the poll that ended the settle), or to
			 * giving up */
	bool drained;
};

/* Poll the probe d (normally &env->pb->drain, or a copy with options applied) on the
 * playbook's server until depth <= d->threshold at every poll for d->settle seconds.
 *
 * Polls: the first at once; then every d->interval seconds while the depth falls. While it
 * does not fall (the same or higher than the poll before, above the threshold) the interval
 * grows by half each poll, up to 8 times d->interval; a poll that sees it fall, or at or below
 * the threshold, brings it back to d->interval (pv_run_drain_backoff). While settling the next
 * poll comes no later than the end of the settle time, and no poll is later than the timeout.
 *
 * Returns PV_OK when drained; PV_ETIMEOUT when d->timeout seconds passed first (the message
 * names the last depth, the threshold and what to do); PV_ESTOPPED as soon as env says stop
 * (looked at every 100 ms between polls and every 200 ms while a probe runs: a slow probe is
 * cut short, and left to end on its own where sshd refuses signals); PV_EREMOTE when the
 * probe fails or prints anything but what it should (the message quotes the output,
 * shortened and made printable); PV_ECONFIG when no probe is configured (the message names
 * drain.probe and --probe) or the playbook has no server; the connection's own codes
 * (PV_EUNREACH, PV_ETRUST, PV_ECRED). With env->dry_run: the configuration is checked,
 * nothing is polled, PV_OK. One SSH session for the whole wait. res is filled on every
 * outcome (what was seen so far). Progress through util/progress.h ("req_queue 120,
 * draining 40/s, ETA 3 s"); never prints. */
int pv_run_drain_wait(const struct pv_env *env, const struct pv_playbook_drain *d,
		      struct pv_run_drain_result *res);

/* ---- pure parts ---------------------------------------------------------------------------- */

/* "command", "writeback", "inflight" or "smb". */
const char *pv_run_drain_probe_name(enum pv_playbook_probe_kind k);

/* The probe can run: pb has a server, d names a probe (a command probe has a command), its
 * numbers are in range. PV_OK or PV_ECONFIG (recorded, naming the key and the option). */
int pv_run_drain_check(const struct pv_playbook *pb, const struct pv_playbook_drain *d);

/* What a dry run says: what would be polled, where, how often, until when (plan items). */
void pv_run_drain_plan(const struct pv_playbook *pb, const struct pv_playbook_drain *d,
		       struct pv_env_plan *plan);

/* One reading of probe k's output into a depth. PV_OK, or PV_EREMOTE (recorded: what is wrong,
 * quoting the output with pv_run_drain_quote; the caller puts the probe and host in front).
 *   number:    one integer or decimal number, white space around it allowed; a decimal is
 *              rounded up (depth <= threshold then holds exactly when the number's does)
 *   writeback: "Dirty: N kB" and "Writeback: N kB" lines (others ignored), both required
 *   inflight:  lines of two integers, all summed; at least one line
 *   smb:       smbstatus --json: sessions whose username is a lab user's, plus opens (of
 *              open_files) whose username is one; other users' are not counted */
int pv_run_drain_parse(const struct pv_playbook *pb, enum pv_playbook_probe_kind k,
		       const char *text, size_t len, long *depth);
int pv_run_drain_parse_number(const char *text, size_t len, long *depth);
int pv_run_drain_parse_writeback(const char *text, size_t len, long *kb);
int pv_run_drain_parse_inflight(const char *text, size_t len, long *n);
int pv_run_drain_parse_smb(const struct pv_playbook *pb, const char *text, size_t len, long *n);

/* username (as smbstatus names it: "LAB\cli1-u7", "cli1-u7", "LAB+cli1-u7") is one of this
 * lab's users: what follows the last '\', '/' or '+' (the winbind separator; none of them can
 * be in a sAMAccountName) matches users.name_template for one of the playbook's clients, {n}
 * being any number from 1 without leading zeros (users made with `dc --users N` beyond
 * per_client count too), letters compared without case, as AD does. */
bool pv_run_drain_lab_user(const struct pv_playbook *pb, const char *username);

/* The seconds to wait before the next poll. cur: the wait used before this poll (0 for the
 * first); have_prev: there was a poll before, with depth prev. Rule: at or below the threshold,
 * falling (depth < prev), or the first poll: interval. Otherwise (above the threshold, not
 * falling): max(cur, interval) * 1.5, at most 8 * interval. */
double pv_run_drain_backoff(int interval, double cur, bool have_prev, long prev, long depth,
			    long threshold);

/* The drain rate: an exponentially weighted mean (weight 1/2 for the newest) of the rate
 * between consecutive polls, in depth units per second, positive when the depth falls. */
struct pv_run_drain_rate {
	double rate; /* valid when n >= 2 */
	double t;    /* the last poll's time */
	long depth;  /* and its depth */
	unsigned n;  /* polls seen */
};
void pv_run_drain_rate_add(struct pv_run_drain_rate *r, double t, long depth);
/* Seconds until depth reaches threshold at the rate seen; -1 when unknown (fewer than two
 * polls, or not falling). 0 when already there. */
double pv_run_drain_eta(const struct pv_run_drain_rate *r, long depth, long threshold);

/* The progress line's text: "req_queue 120, draining 40/s, ETA 3 s", "req_queue 120, rising
 * 5/s", "req_queue 120, not falling, next poll in 6 s", "req_queue 0, settling 2/4 s". */
void pv_run_drain_detail(char *out, size_t len, const char *metric, long depth, long threshold,
			 const struct pv_run_drain_rate *r, double settled, int settle,
			 double next);

/* text (len bytes) for a message: white space around it dropped, control characters and bytes
 * outside printable ASCII written as \n, \t, \r or \xNN, ' as \', at most max characters of
 * the text kept (then "..." follows). out always NUL-terminated. */
void pv_run_drain_quote(const char *text, size_t len, size_t max, char *out, size_t outlen);

#endif
