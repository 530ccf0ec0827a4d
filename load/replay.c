/* load/replay.c: load.workload's learned kinds (playbooks/workload.h) made into scenarios that
 * load/scenario.c's runner goes through like its own.
 *
 * A kind is a sequence of SMB2 commands, "+" where one repeats. Each command becomes one
 * request on the file the user has open, as the capture's user had one open:
 *   - CREATE opens F1, or F2 when F1 is open, or (both open) looks for a name that is not
 *     there, as CREATE(REFUSED) does (one the server refused in the capture). What it opens
 *     is what the commands up to its CLOSE do with it, and its disposition: a folder of
 *     static/ when they list or watch it (where the kind's depths say: folder_at); when
 *     they write it, set its information or flush it, or its disposition is not OPEN, the
 *     user's: a volatile/ document written in place (OPEN), a file of its own in new/ (one
 *     of four, kept from run to run: OPEN_IF, or OVERWRITE_IF), a new name deleted when
 *     closed (CREATE); else a file of static/ to
 *     read, or, opened by CREATE(STAT), to look at: its attributes alone asked, no lease (a
 *     read or lock on it left out, as its access would refuse them).
 *   - CLOSE closes the last opened; one with nothing open is left out (the capture's activity
 *     began with the file open). A command on a file with none open opens one first, and what
 *     is still open at the end is closed, as after any scenario.
 *   - READ and WRITE are one request each, of a size drawn from the capture's sizes (a read
 *     at most 1 MiB, a write 64 KiB), where the last one ended, a static/ file read one that
 *     holds all its reads (reads_ahead); QUERY_DIRECTORY lists the folder whole (in parts
 *     when its open lists again before its CLOSE: one answer, then on from there), or, as
 *     learned, part of it (PATTERN: the names like its first file's, "f000*") or one name
 *     (NAME: its first file's); LOCK takes the range, or releases it when taken; IOCTL asks
 *     the object id, or the code learned (the snapshots of the file open, the referral of
 *     the share on none); QUERY_INFO, SET_INFO (basic), FLUSH and CHANGE_NOTIFY as the
 *     built-in scenarios make them.
 *   - A repeat is made as many times as the capture's made it on average: the whole count,
 *     and one more with the chance of its fraction (a CREATE, a CLOSE or a LOCK: the nearest
 *     whole count, as they pair). A workload that did not count them: what the kind's requests
 *     have over one a command, shared among its repeats (two at least).
 * Commands that cannot be made on what is open (a listing of F2, a read of a folder) are left
 * out. A kind cut short (learn keeps 128 commands) has the requests past its cut made as its
 * whole cycles (a CREATE to the CLOSE that leaves open only what was open before it: a file
 * opened and closed in a folder held open) like its last one again, in turn, what is open
 * closed first: a folder read file by file goes on as it began, its files
 * read as often as before. */
#include "load/engine_internal.h"
#include "load/steps.h"

#include "fileset/fileset.h"
#include "util/err.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STEPS_MAX 1024 /* a kind's steps, at most */
#define OWN_FILES 4    /* the files of its own a user writes, by name */
#define NO_DEPTH  (-2) /* a step's depth not learned */

enum { C_CREATE = 5, C_CLOSE, C_FLUSH, C_READ, C_WRITE, C_LOCK, C_IOCTL };
enum { C_QUERY_DIRECTORY = 14, C_CHANGE_NOTIFY, C_QUERY_INFO, C_SET_INFO };
#define OPENS PV_PLAYBOOK_WORKLOAD_LEARNED_OPENS /* CREATE, CREATE(STAT) */

struct replay {
	unsigned n;
	struct step *steps[PV_PLAYBOOK_WORKLOAD_LEARNED_KINDS];
	double cum[PV_PLAYBOOK_WORKLOAD_LEARNED_KINDS]; /* the kinds' weights, cumulative */
	double rcum[PV_PLAYBOOK_WORKLOAD_SIZE_BINS],
		wcum[PV_PLAYBOOK_WORKLOAD_SIZE_BINS]; /* the sizes' buckets, ditto */
	double rmean[PV_PLAYBOOK_WORKLOAD_SIZE_BINS],
		wmean[PV_PLAYBOOK_WORKLOAD_SIZE_BINS]; /* ... their mean sizes (0: not learned) */
};

/* ---- what an open is for ---- */

enum use { U_READ, U_DIR, U_OWN, U_STAT /* a CREATE(STAT) of what would be read */ };

/* What the commands from step from on do with a file opened at depth (0 or 1) by command
 * open, up to its CLOSE: list or watch it (a folder), write it (one of the user's own), else
 * read it, or look at it when open is CREATE(STAT). */
static enum use use_of(const struct pv_playbook_workload_learned_kind *k, unsigned from, int depth,
		       unsigned open)
{
	bool dir = false, own = false;
	int d = depth + 1;

	for (unsigned j = from; j < k->n && d > depth; j++) {
		unsigned c = k->step[j] & PV_PLAYBOOK_WORKLOAD_LEARNED_CMD;

		if (OPENS(c))
			d++;
		else if (c == C_CLOSE)
			d--;
		else if (d == depth + 1 && (c == C_QUERY_DIRECTORY || c == C_CHANGE_NOTIFY))
			dir = true;
		else if (d == depth + 1 && (c == C_WRITE || c == C_SET_INFO || c == C_FLUSH))
			own = true;
	}
	/* a folder is listed on F1 only (the runner lists u->path) */
	return dir && depth == 0			   ? U_DIR
	       : own					   ? U_OWN
	       : open == PV_PLAYBOOK_WORKLOAD_LEARNED_STAT ? U_STAT
							   : U_READ;
}

/* A learned read's or write's size, drawn from g: 1 byte to IO_CHUNK (a write), or to what
 * the connection takes (a read: PV_SMB_READ_MAX at most, 64 KiB from a server without large
 * MTU); a page when no sizes were learned. */
static uint32_t replay_size_from(struct user *u, struct pv_load_rng *g, bool write)
{
	const struct replay *r = u->e->replay;
	const double *cum = write ? r->wcum : r->rcum;
	uint32_t n;

	if (!(cum[PV_PLAYBOOK_WORKLOAD_SIZE_BINS - 1] > 0))
		return 4096;
	n = pv_load_size_draw(cum, write ? r->wmean : r->rmean, write ? IO_CHUNK : PV_SMB_READ_MAX,
			      g);
	return write || n < pv_smb_max_read(u->c) ? n : pv_smb_max_read(u->c);
}

/* A listing step's pattern as client_list's how: every name, part of the folder, one name */
static unsigned listing_match(uint8_t step)
{
	switch (step & PV_PLAYBOOK_WORKLOAD_LEARNED_DISP) {
	case PV_PLAYBOOK_WORKLOAD_LEARNED_PATTERN:
		return LIST_PATTERN;
	case PV_PLAYBOOK_WORKLOAD_LEARNED_NAME:
		return LIST_NAME;
	default:
		return 0;
	}
}

/* Whether the open that step i lists (a QUERY_DIRECTORY) lists again before its CLOSE. */
static bool lists_again(const struct pv_playbook_workload_learned_kind *k, unsigned i)
{
	int d = 0;

	for (unsigned j = i + 1; j < k->n && d >= 0; j++) {
		unsigned c = k->step[j] & PV_PLAYBOOK_WORKLOAD_LEARNED_CMD;

		if (OPENS(c))
			d++;
		else if (c == C_CLOSE)
			d--;
		else if (!d && c == C_QUERY_DIRECTORY)
			return true;
	}
	return false;
}

/* ---- what a step picks first ---- */

static int own_name(struct user *u, char *dst)
{
	snprintf(dst, PATH_MAX_LOAD, "%s/new/pv-learned-%s-%u.dat", u->info.name, u->info.name,
		 ++u->seq % OWN_FILES);
	return GO;
}

static int own1(struct user *u)
{
	return own_name(u, u->path);
}

static int own2(struct user *u)
{
	return own_name(u, u->path2);
}

/* a name not there, for CREATE(CREATE): deleted when closed (OWN_NEW) */
static int new_name(struct user *u, char *dst)
{
	snprintf(dst, PATH_MAX_LOAD, "%s/new/pv-learned-%s-%s-n%u.dat", u->info.name, u->info.name,
		 u->e->run, ++u->seq);
	return GO;
}

static int new1(struct user *u)
{
	return new_name(u, u->path);
}

static int new2(struct user *u)
{
	return new_name(u, u->path2);
}

/* a volatile/ document, to be written as it is (CREATE's OPEN), as F2 */
static int volatile2(struct user *u)
{
	const struct file *f = files_pick(u, &u->vfiles);

	if (!f)
		return FAIL;
	snprintf(u->path2, sizeof(u->path2), "%s", f->path);
	return GO;
}

/* A static/ file to read as F1 or F2 (file): one that holds every read the kind makes on it
 * to its CLOSE, their sizes drawn now from a stream of their own (u->rsz[file], drawn again
 * from its start as the reads are made: replay_io_size), so that none is cut by the file's
 * end as none was in the capture (the largest file when none holds them). */
static int reads_ahead(struct user *u, int file, char *dst, uint64_t *size)
{
	struct pv_load_rng g;
	const struct file *f;
	uint64_t need = 0;

	u->rsz[file] = u->rng;
	u->rsz[file].s[0] ^= 0x9e3779b9u + (uint32_t)file; /* another stream than the picks' */
	pv_load_rng_next(&u->rng);
	g = u->rsz[file];
	for (int j = u->step; u->steps[j].req != END; j++) {
		const struct step *s = &u->steps[j];

		if (s->file == file && s->req == CLOSE)
			break;
		if (s->file == file && s->req == LREAD) {
			need += replay_size_from(u, &g, false);
		}
	}
	if (!(f = files_pick_min(u, need)))
		return FAIL;
	snprintf(dst, PATH_MAX_LOAD, "%s", f->path);
	if (size)
		*size = f->size;
	u->ahead[file] = true;
	return GO;
}

static int read1(struct user *u)
{
	return reads_ahead(u, F1, u->path, &u->listed);
}

static int static2(struct user *u)
{
	return reads_ahead(u, F2, u->path2, NULL);
}

/* The folder a learned listing is of, where the capture's was (its step's at): the user's home
 * (depth 0), a folder of static/ that many levels down on the way to the one picked (the
 * learned fileset's levels are static/'s; the one picked when it is not that deep), or the
 * share's root (outside the home). The name under it on that way into u->child, for a
 * listing of a pattern or of one name. */
static int folder_at(struct user *u)
{
	int depth = u->steps[u->step - 1].at + NO_DEPTH;
	char *p = u->path, *cut;
	size_t keep;

	if (depth == PV_PLAYBOOK_WORKLOAD_OUT) { /* the share's root, above the user's home */
		cut = p;
	} else { /* the home is its first part, static/ its second */
		keep = depth ? (size_t)depth + 2 : 1;
		for (cut = p; cut && keep; keep--)
			cut = strchr(cut + (cut != p), '/');
		if (!cut) /* the one picked is not that deep */
			return GO;
	}
	snprintf(u->child, sizeof(u->child), "%.*s", (int)strcspn(cut + (*cut == '/'), "/"),
		 cut + (*cut == '/'));
	*cut = '\0';
	u->dir_file = 0;
	return GO;
}

static int absent(struct user *u)
{
	snprintf(u->path2, sizeof(u->path2), "%s/new/pv-absent-%s-%u", u->info.name, u->info.name,
		 ++u->seq);
	return GO;
}

/* ---- a kind made into steps ---- */

struct maker {
	struct step *s;
	unsigned n;
	int depth;	 /* files open: F1, then F2 */
	enum use use[2]; /* what each is for */
	bool locked[2];	 /* its range lock taken */
	bool listed;	 /* F1 listed since it was opened */
};

static void put(struct maker *m, struct step st)
{
	if (m->n < STEPS_MAX - 1)
		m->s[m->n++] = st;
}

/* The file opened at the next depth, for use, as CREATE's disposition bits say: a folder is
 * opened as it is; what is written, or made whatever comes after (a disposition other than
 * OPEN), is the user's: a volatile/ document written in place (OPEN), one of its own files
 * (OPEN_IF; OVERWRITE_IF, its bytes replaced), a new name deleted when closed (CREATE); else a
 * static/ file to read, or (U_STAT) to look at, its attributes alone asked, with no lease. */
static void open_for(struct maker *m, enum use use, unsigned disp, int depth)
{
	int f = m->depth;
	uint8_t p = (uint8_t)f;

	if (use != U_DIR && disp)
		use = U_OWN;
	m->use[f] = use;
	m->locked[f] = false;
	if (!f)
		m->listed = false;
	if (use == U_DIR) /* where the capture's folder was, when learned */
		put(m, (struct step){OPEN, F1, DIR_LIST, P1, FOLDER,
				     depth == NO_DEPTH ? NULL : folder_at,
				     .at = (int8_t)(depth - NO_DEPTH)});
	else if (use == U_OWN && disp == 0)
		put(m,
		    (struct step){OPEN, p, DOC_EDIT, p, f ? NONE : VOLATILE, f ? volatile2 : NULL});
	else if (use == U_OWN && disp == PV_PLAYBOOK_WORKLOAD_LEARNED_NEW)
		put(m, (struct step){OPEN, p, OWN_NEW, p, NONE, f ? new2 : new1});
	else if (use == U_OWN)
		put(m, (struct step){OPEN, p,
				     disp == PV_PLAYBOOK_WORKLOAD_LEARNED_OPEN_IF ? OWN : OWN_OVER,
				     p, NONE, f ? own2 : own1});
	else
		put(m, (struct step){OPEN, p, use == U_STAT ? ATTRS : DOC_READ, p, NONE,
				     f ? static2 : read1});
	m->depth++;
}

/* A request on the file last opened (one opened first when none is): req with arg; those
 * its file cannot take left out. */
static void on_open(struct maker *m, const struct pv_playbook_workload_learned_kind *k, unsigned i,
		    unsigned c)
{
	int f;
	enum use u;

	if (!m->depth) /* opened first, as it is */
		open_for(m, use_of(k, i, 0, C_CREATE), 0, NO_DEPTH);
	f = m->depth - 1;
	u = m->use[f];
	switch (c) {
	case C_READ:
		if (u == U_READ || u == U_OWN)
			put(m, (struct step){LREAD, (uint8_t)f});
		break;
	case C_WRITE:
		if (u == U_OWN)
			put(m, (struct step){LWRITE, (uint8_t)f});
		break;
	case C_FLUSH:
		if (u == U_OWN)
			put(m, (struct step){FLUSH, (uint8_t)f});
		break;
	case C_SET_INFO:
		if (u == U_OWN)
			put(m, (struct step){SETINFO, (uint8_t)f, INFO_BASIC});
		break;
	case C_LOCK:
		if (u == U_READ || u == U_OWN) {
			put(m, (struct step){m->locked[f] ? UNLOCK : LOCK, (uint8_t)f});
			m->locked[f] = !m->locked[f];
		}
		break;
	case C_IOCTL: /* the object id (the built-in scenarios' request), or a code learned */
		if (!(k->step[i] & PV_PLAYBOOK_WORKLOAD_LEARNED_DISP))
			put(m, (struct step){OBJECT, (uint8_t)f});
		else
			put(m, (struct step){FSCTL, (uint8_t)f,
					     pv_playbook_workload_learned_fsctl_code(k->step[i])});
		break;
	case C_QUERY_INFO:
		put(m, (struct step){STAT, (uint8_t)f});
		break;
	case C_QUERY_DIRECTORY: /* in parts when the open lists again later (smbclient's mget:
				   a page, the files read, then the rest) */
		if (u == U_DIR)
			put(m, (struct step){LIST, F1,
					     (m->listed ? LIST_GO_ON : 0) |
						     (lists_again(k, i) ? LIST_PAGE : 0) |
						     listing_match(k->step[i])});
		m->listed = m->listed || u == U_DIR;
		break;
	case C_CHANGE_NOTIFY:
		if (u == U_DIR)
			put(m, (struct step){NOTIFY, F1});
		break;
	}
}

/* How many requests step i of a kind makes on average: 1, or a repeat's learned count (1 to
 * 64: under 2 when some of the kind's activities made it once, READ and READ+ being one kind);
 * a workload without counts: the kind's requests over one a command, shared among its
 * repeats (2 at least). */
static double repeats(const struct pv_playbook_workload_learned_kind *k, unsigned i)
{
	unsigned plus = 0;
	double m = k->count[i];

	if (!(k->step[i] & PV_PLAYBOOK_WORKLOAD_LEARNED_REPEAT))
		return 1;
	if (m > 0)
		return m < 1 ? 1 : m > 64 ? 64 : m;
	for (unsigned j = 0; j < k->n; j++)
		plus += !!(k->step[j] & PV_PLAYBOOK_WORKLOAD_LEARNED_REPEAT);
	m = 1 + (k->requests - k->n) / plus;
	return m < 2 ? 2 : m > 64 ? 64 : m;
}

/* Steps from..to of kind k made into m's steps. */
static void make_span(struct maker *m, const struct pv_playbook_workload_learned_kind *k,
		      unsigned from, unsigned to)
{
	for (unsigned i = from; i < to; i++) {
		unsigned c = k->step[i] & PV_PLAYBOOK_WORKLOAD_LEARNED_CMD;
		double rep = repeats(k, i);
		unsigned times = (unsigned)rep;
		uint16_t chance = (uint16_t)((rep - times) * 65536);

		/* a listing is made whole, however many requests it took */
		if (c == C_QUERY_DIRECTORY || c == C_CHANGE_NOTIFY)
			times = 1, chance = 0;
		/* opens and closes pair, and so do a lock and its release: the nearest whole count
		 */
		if (OPENS(c) || c == C_CLOSE || c == C_LOCK)
			times = (unsigned)(rep + 0.5), chance = 0;
		for (unsigned t = 0; t <= times; t++) {
			unsigned at = m->n;

			if (t == times && !chance)
				break;
			if (OPENS(c) && m->depth < 2)
				open_for(m, use_of(k, i + 1, m->depth, c),
					 k->step[i] & PV_PLAYBOOK_WORKLOAD_LEARNED_DISP,
					 k->depths ? k->depth[i] : NO_DEPTH);
			else if (OPENS(c) || c == PV_PLAYBOOK_WORKLOAD_LEARNED_REFUSED)
				put(m, (struct step){PROBE, .path = P2, .before = absent});
			else if (c == C_CLOSE && m->depth)
				put(m, (struct step){CLOSE, (uint8_t)--m->depth});
			else if (c == C_IOCTL && (k->step[i] & PV_PLAYBOOK_WORKLOAD_LEARNED_DISP) ==
							 PV_PLAYBOOK_WORKLOAD_LEARNED_REFERRAL)
				put(m, (struct step){FSCTL, F1,
						     PV_PLAYBOOK_FSCTL_REFERRAL}); /* no file */
			else if (c != C_CLOSE)
				on_open(m, k, i, c);
			/* the fraction: the last request made (not an open it needed first) */
			if (t == times && m->n > at)
				m->s[m->n - 1].chance = chance;
		}
	}
}

/* The whole cycles of a kind like its last one: each [from[i], to[i]) runs from a CREATE to the
 * CLOSE that leaves open again only what was open before it (a file opened and closed in a
 * folder held open, as a client's copy of a folder does it), with the last one's commands (its
 * repeats may differ: a file read once, another read three times). How many (0: none). */
static unsigned cycles_of(const struct pv_playbook_workload_learned_kind *k, unsigned *from,
			  unsigned *to)
{
	unsigned n = 0, keep = 0, start[PV_PLAYBOOK_WORKLOAD_LEARNED_STEPS];
	int depth = 0, before[PV_PLAYBOOK_WORKLOAD_LEARNED_STEPS], open = 0;

	for (unsigned i = 0; i < k->n; i++) {
		unsigned c = k->step[i] & PV_PLAYBOOK_WORKLOAD_LEARNED_CMD;
		int times = (int)(repeats(k, i) + 0.5);

		if (OPENS(c)) {
			start[open] = i, before[open++] = depth;
			depth += times;
		} else if (c == C_CLOSE && depth) {
			depth = depth > times ? depth - times : 0;
			/* the spans this CLOSE ends: the innermost whole one is a cycle */
			bool whole = false;

			while (open && depth <= before[open - 1]) {
				open--;
				if (!whole && depth == before[open]) {
					from[n] = start[open];
					to[n++] = i + 1;
					whole = true;
				}
			}
		}
	}
	/* those with the last one's commands, in order */
	for (unsigned j = 0; n && j < n; j++) {
		unsigned len = to[j] - from[j], last = n - 1;
		bool same = len == to[last] - from[last];

		for (unsigned i = 0; same && i < len; i++)
			same = ((k->step[from[j] + i] ^ k->step[from[last] + i]) &
				~PV_PLAYBOOK_WORKLOAD_LEARNED_REPEAT) == 0;
		if (same) {
			from[keep] = from[j];
			to[keep++] = to[j];
		}
	}
	return keep;
}

static struct step *make(const struct pv_playbook_workload_learned_kind *k)
{
	struct maker m = {.s = calloc(STEPS_MAX, sizeof(struct step))};
	unsigned from[PV_PLAYBOOK_WORKLOAD_LEARNED_STEPS], to[PV_PLAYBOOK_WORKLOAD_LEARNED_STEPS],
		n;

	if (!m.s)
		return NULL;
	make_span(&m, k, 0, k->n);
	/* a kind cut short: its rest made as its whole cycles like its last one again, in turn
	 * (a folder read file by file goes on as it began, its files read as often as before),
	 * what is open closed first */
	if (k->rest > 0 && (n = cycles_of(k, from, to))) {
		double left = k->rest;

		while (m.depth)
			put(&m, (struct step){CLOSE, (uint8_t)--m.depth});
		for (unsigned c = 0; m.n < STEPS_MAX - 1; c = (c + 1) % n) {
			double per = 0;

			for (unsigned i = from[c]; i < to[c]; i++)
				per += repeats(k, i);
			if (left < per / 2)
				break;
			make_span(&m, k, from[c], to[c]);
			left -= per;
		}
	}
	m.s[m.n] = (struct step){END};
	return m.s;
}

/* ---- the replay ---- */

static void cumulate(const double *v, double *cum, int n)
{
	double sum = 0;

	for (int i = 0; i < n; i++)
		cum[i] = sum += v[i] > 0 ? v[i] : 0;
}

int replay_new(const struct pv_playbook_workload *c, struct replay **out)
{
	const struct pv_playbook_workload_learned *l = &c->learned;
	struct replay *r;

	*out = NULL;
	if (!l->n)
		return PV_OK;
	if (!(r = calloc(1, sizeof(*r))))
		return pv_error(PV_EIO, "out of memory");
	for (unsigned i = 0; i < l->n; i++) {
		if (!(r->steps[i] = make(&l->kind[i]))) {
			replay_free(r);
			return pv_error(PV_EIO, "out of memory");
		}
		r->cum[i] = (i ? r->cum[i - 1] : 0) + l->kind[i].weight;
		r->n++;
	}
	cumulate(l->read, r->rcum, PV_PLAYBOOK_WORKLOAD_SIZE_BINS);
	cumulate(l->write, r->wcum, PV_PLAYBOOK_WORKLOAD_SIZE_BINS);
	memcpy(r->rmean, l->read_mean, sizeof(r->rmean));
	memcpy(r->wmean, l->write_mean, sizeof(r->wmean));
	*out = r;
	return PV_OK;
}

unsigned pv_load_replay_needs(const struct pv_playbook_workload *c)
{
	unsigned needs = 0;

	for (unsigned i = 0; i < c->learned.n; i++) {
		struct step *s;

		if (!(c->learned.kind[i].weight > 0) || !(s = make(&c->learned.kind[i])))
			continue;
		for (const struct step *t = s; t->req != END; t++) {
			if (t->pick == STATIC || t->before == read1 || t->before == static2)
				needs |= PV_LOAD_NEEDS_STATIC;
			else if (t->pick == FOLDER)
				needs |= PV_LOAD_NEEDS_FOLDER;
			else if (t->pick == VOLATILE || t->before == volatile2)
				needs |= PV_LOAD_NEEDS_VOLATILE;
		}
		free(s);
	}
	return needs;
}

int pv_load_replay_check(const struct pv_playbook_workload *c, const char *workload,
			 const char *fileset)
{
	unsigned needs = pv_load_replay_needs(c), lacks;
	size_t files[PV_FILESET_PART_COUNT] = {0}, folders = 0;
	struct pv_fileset *fs;
	char what[160];
	int r;

	if (!needs)
		return PV_OK;
	if ((r = pv_fileset_read(fileset, &fs)) != PV_OK)
		return pv_error_prefix(r, "server.fileset");
	for (size_t i = 0; i < fs->n; i++) {
		const struct pv_fileset_entry *e = &fs->entries[i];

		if (e->dir)
			continue;
		files[e->part]++;
		/* a folder of static/ holding files: the plan lists it just before its first */
		if (e->part == PV_FILESET_PART_STATIC && i && fs->entries[i - 1].dir)
			folders++;
	}
	pv_fileset_free(fs);
	lacks = (needs & PV_LOAD_NEEDS_STATIC && !files[PV_FILESET_PART_STATIC]
			 ? PV_LOAD_NEEDS_STATIC
			 : 0) |
		(needs & PV_LOAD_NEEDS_FOLDER && !folders ? PV_LOAD_NEEDS_FOLDER : 0) |
		(needs & PV_LOAD_NEEDS_VOLATILE && !files[PV_FILESET_PART_VOLATILE]
			 ? PV_LOAD_NEEDS_VOLATILE
			 : 0);
	if (!lacks)
		return PV_OK;
	snprintf(what, sizeof(what), "%s%s%s",
		 lacks & PV_LOAD_NEEDS_STATIC ? ", files in static/ to read" : "",
		 lacks & PV_LOAD_NEEDS_FOLDER ? ", folders in static/ with files to list" : "",
		 lacks & PV_LOAD_NEEDS_VOLATILE ? ", files in volatile/ to write in place" : "");
	return pv_error(PV_ECONFIG,
			"load.workload %s opens what the users' trees lack (server.fileset %s has "
			"no%s): prepare them with a fileset that has it (leave server.fileset "
			"unset to build the workload's own fileset:, or name one such as "
			"playbooks/filesets/small.yaml) and run `provision prepare` again",
			workload, fileset, what + 1);
}

void replay_free(struct replay *r)
{
	if (!r)
		return;
	for (unsigned i = 0; i < r->n; i++)
		free(r->steps[i]);
	free(r);
}

const struct step *replay_pick(struct user *u, int *kind)
{
	const struct replay *r = u->e->replay;
	double x;
	unsigned i = 0;

	*kind = -1;
	if (!r)
		return NULL;
	x = pv_load_rng_unit(&u->rng) * r->cum[r->n - 1];
	while (i < r->n - 1 && !(x < r->cum[i]))
		i++;
	*kind = (int)i;
	return r->steps[i];
}

bool replay_leased(struct user *u)
{
	double share = u->e->o->cfg->learned.unleased;

	if (u->kind != PV_PLAYBOOK_WORKLOAD_LEARNED || !(share > 0))
		return true;
	u->unleased += share / 100;
	if (u->unleased < 1 - 1e-9)
		return true;
	u->unleased -= 1;
	return false;
}

uint32_t replay_io_size(struct user *u, int f, bool write)
{
	return replay_size_from(u, !write && u->ahead[f] ? &u->rsz[f] : &u->rng, write);
}
