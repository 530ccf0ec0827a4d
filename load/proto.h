/* load/proto.h: what `run` (driver builtin) tells `provision load` on a client, over the
 * SSH session's stdin, after the users' password (its first line): the load settings, the
 * users, then "start"; later "go" when every client is ready. One line each:
 *
 *   config rate=331 late=1 overload=1 interval=1 seed=1 auth=ntlm keep=0 threads=0
 *          weights=15,... limits=2,...
 *   learned 25 9 5,142,6 1,7,1 0                (load.workload: a learned kind, its weight,
 *                                               its requests, its commands' codes, 0x80 set
 *                                               on a repeat, each one's requests on average
 *                                               (0: not learned), its requests past a cut;
 *                                               a line each, after config)
 *   sizes read 0,0,...                          (... the learned read sizes' buckets, %)
 *   kerberos LAB.TEST dc.lab.test lab.test      (auth=kerberos: realm, KDC, DNS domain)
 *   fileset homefolders name%3A%20homefolders%0A...   (the description the users' trees were
 *                                               built from, in pieces: its static/ part is
 *                                               known without listing it)
 *   user cli1-u1 srvu1 fsroot2 1
 *   start 40
 *
 * "start N" begins a step with the first N users sent so far ("start" alone: all of them).
 * In the step, once provision load said "ready", "go" starts its load and "stop" (or the end
 * of stdin) ends it. Once the step is done (provision load prints "done"), more "user" lines
 * and another "start" make the next step, in the same process: its users stay logged on into
 * it with keep=1; "stop" between steps ends provision load.
 *
 * Names are percent-encoded (every byte but A-Z a-z 0-9 . _ - as %XX), so no separator can
 * hide in one. Pure: no I/O; both sides and the tests use it. */
#ifndef PV_LOAD_PROTO_H
#define PV_LOAD_PROTO_H

#include <stdbool.h>
#include <stddef.h>

#include "load/model.h"
#include "load/engine.h"
#include "util/buf.h"

/* A line of the protocol, at most, its '\n' with it: a learned kind of
 * PV_PLAYBOOK_WORKLOAD_LEARNED_STEPS commands and counts, each count written whole (%.17g),
 * takes about 3.5 KiB */
#define PV_LOAD_PROTO_LINE_MAX 8192

/* A name percent-encoded onto out; the next space-separated word of [*s, end) decoded into w
 * (wlen bytes with its NUL; *s moves past it): 0, or -1 when there is none, it does not fit,
 * or it holds a bad or a NUL escape. The copy job's lines (load/copy.h) use them too. */
void pv_load_proto_encode(struct pv_buf *out, const char *s);
int pv_load_proto_word(const char **s, const char *end, char *w, size_t wlen);

int pv_load_proto_config(const struct pv_playbook_workload *c, struct pv_buf *out);
int pv_load_proto_kerberos(const char *realm, const char *kdc, const char *dns_domain,
			   struct pv_buf *out);
int pv_load_proto_user(const char *name, const char *alias, const char *share, unsigned number,
		       struct pv_buf *out);
int pv_load_proto_start(size_t n, struct pv_buf *out);
/* The fileset's description (name, text of len bytes: 1 to PV_LOAD_PROTO_FILESET_MAX) as
 * "fileset NAME PIECE" lines of at most PV_LOAD_PROTO_PIECE bytes of it each, in order. */
#define PV_LOAD_PROTO_FILESET_MAX (1u << 20)
#define PV_LOAD_PROTO_PIECE	  1024
int pv_load_proto_fileset(const char *name, const char *text, size_t len, struct pv_buf *out);

/* The lines of a step under way: "go" and "stop". */
enum pv_load_proto_ctl { PV_LOAD_PROTO_GO = 1, PV_LOAD_PROTO_STOP };
int pv_load_proto_control_line(enum pv_load_proto_ctl c, struct pv_buf *out);
/* A line of a step under way (without its '\n') into *c: PV_OK, or PV_EUSAGE naming it. */
int pv_load_proto_control(const char *line, size_t len, enum pv_load_proto_ctl *c);

/* What the lines said so far. */
struct pv_load_proto {
	bool have_config;
	bool stop;	/* "stop" between steps: the end */
	unsigned steps; /* "start" lines read */
	size_t step;	/* the last "start"'s users, until the caller takes it (sets 0) */
	struct pv_playbook_workload cfg;
	char realm[256], kdc[256], dns_domain[256]; /* the kerberos line ("" when none) */
	char fileset_name[64];			    /* the fileset lines ("" when none) */
	char *fileset;				    /* their pieces joined, fileset_len bytes */
	size_t fileset_len;
	struct pv_load_user *users; /* strings owned here */
	size_t n, cap;
};

/* One line between steps (without its '\n'): a setup line, "start", or "stop" (sets stop).
 * PV_OK; PV_EUSAGE naming the line's fault (a line while a step is pending, config, kerberos or
 * fileset after the first step, start before config and users, a fileset's pieces under two names
 * or past PV_LOAD_PROTO_FILESET_MAX). */
int pv_load_proto_parse(struct pv_load_proto *p, const char *line, size_t len);
void pv_load_proto_release(struct pv_load_proto *p);

#endif
