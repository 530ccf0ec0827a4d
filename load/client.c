/* load/client.c: a user's requests, as a Windows client makes them: every answer comes to
 * client_done first; whole reads, writes and listings in requests of 64 KiB; opens with a lease,
 * looks for what is not there, object ids, range locks, change notifications, set-info classes.
 * Each request is counted as its scenario's when it goes out. */
#include "load/engine_internal.h"

#include "util/err.h"
#include "util/hash.h"
#include "util/utf16.h"
#include "util/progress.h"

#include <stdio.h>
#include <string.h>

/* Issue a request (counted as op when it went out); a refusal to queue it ends the scenario. */
#define ISSUE(u, next, op, call)                                                                   \
	do {                                                                                       \
		(u)->k = (next);                                                                   \
		(u)->last_op = (op);                                                               \
		if ((call) != PV_OK) {                                                             \
			if ((u)->st == U_BUSY)                                                     \
				scenario_end((u), true);                                           \
			else                                                                       \
				user_fail((u), pv_errmsg());                                       \
		} else {                                                                           \
			user_count_op((u), (op));                                                  \
		}                                                                                  \
	} while (0)

static uint8_t *fid_of(struct user *u, bool second)
{
	return second ? u->fid2 : u->fid;
}

/* Every answer comes here first: a lost connection or a refusal ends the scenario. */
void client_done(struct pv_smb_conn *c, void *arg, const struct pv_smb_done *d)
{
	struct user *u = arg;

	(void)c;
	if (u->st == U_OFF) /* closed by us between steps: nothing waits for it */
		return;
	if (d->code != PV_OK) {
		if (u->st == U_BUSY && scenario_held(u))
			return; /* it goes on once logged on again */
		if (u->st == U_BUSY)
			scenario_end(u, true);
		if (u->st != U_FAILED)
			user_fail(u, d->msg ? d->msg : "the connection was lost");
		return;
	}
	u->answered_in = d->seconds;
	u->k(u, d);
}

bool client_refused(struct user *u, const struct pv_smb_done *d, uint32_t ok2)
{
	if (d->status == 0 || d->status == ok2)
		return false;
	if (u->st == U_BUSY)
		scenario_end(u, true);
	else if (u->st == U_LEARNING)
		user_fail(u, "its home tree could not be listed");
	return true;
}

/* ---- primitives: read a whole file, write one, list a folder ---- */

static void read_more(struct user *u, const struct pv_smb_done *d)
{
	bool end = false; /* an answer shorter than asked: the file's end */

	if (d && client_refused(u, d, 0))
		return;
	if (d) {
		end = d->buflen < (u->to - u->off < u->chunk ? u->to - u->off : u->chunk);
		u->off += d->buflen;
	}
	if (u->off >= u->to || end) {
		u->after(u, NULL);
		return;
	}
	ISSUE(u, read_more, PV_LOAD_OP_READ,
	      pv_smb_read(u->c, fid_of(u, u->on2), u->off,
			  (uint32_t)(u->to - u->off < u->chunk ? u->to - u->off : u->chunk),
			  client_done, u));
}

/* What a read or write under way covers: [off, off + len) of the open file, after once done. */
static void range(struct user *u, bool second, uint64_t off, uint64_t len, step_fn after)
{
	u->after = after;
	u->off = off;
	u->to = off + len;
	u->on2 = second;
	u->chunk = IO_CHUNK;
}

/* The open file read whole (u->size bytes, as its CREATE said), then after. */
void client_read_all(struct user *u, bool second, step_fn after)
{
	range(u, second, 0, u->size, after);
	read_more(u, NULL);
}

static void write_more(struct user *u, const struct pv_smb_done *d)
{
	uint32_t n;

	if (d && client_refused(u, d, 0))
		return;
	if (u->off >= u->to) {
		u->after(u, NULL);
		return;
	}
	n = (uint32_t)(u->to - u->off < IO_CHUNK ? u->to - u->off : IO_CHUNK);
	ISSUE(u, write_more, PV_LOAD_OP_WRITE,
	      pv_smb_write(u->c, fid_of(u, u->on2), u->off, u->e->data, n, client_done, u));
	u->off += n;
}

/* n bytes of the open file read from off in one request (n at most what the connection takes:
 * pv_smb_max_read), then after. */
void client_read_at(struct user *u, bool second, uint64_t off, uint32_t n, step_fn after)
{
	range(u, second, off, n, after);
	u->chunk = n;
	read_more(u, NULL);
}

/* n bytes written to the open file at off, then after. */
void client_write_at(struct user *u, bool second, uint64_t off, uint32_t n, step_fn after)
{
	range(u, second, off, n, after);
	write_more(u, NULL);
}

/* size bytes written to the open file from its start, then after. */
void client_write_all(struct user *u, uint64_t size, bool second, step_fn after)
{
	range(u, second, 0, size, after);
	write_more(u, NULL);
}

static int entry(void *arg, const char *name, bool dir, uint64_t size)
{
	struct user *u = arg;
	char path[PATH_MAX_LOAD];

	if (u->want != 2 && dir != (u->want == 1))
		return 0;
	if (dir)
		size = u->want == 2 ? DIR : size;
	if (snprintf(path, sizeof(path), "%s/%s", u->path, name) >= (int)sizeof(path))
		return pv_error(PV_EREMOTE, "a path in %s is too long", u->path);
	return files_add(&u->names, path, size) < 0 ? pv_error(PV_EIO, "out of memory") : 0;
}

/* The pattern of u's listing (client_list's LIST_PATTERN, LIST_NAME) into buf, of the name of
 * the folder's first file, or of the one under it on the way to the folder picked (u->child,
 * a learned listing of a folder above it): NULL for every name, or when neither is known. */
static const char *list_pattern(const struct user *u, char *buf, size_t len)
{
	const char *name, *dot;
	size_t stem;

	if (!u->list_match)
		return NULL;
	if (u->child[0])
		name = u->child;
	else if (u->dir_file && u->dir_file <= u->sfiles.n)
		name = u->sfiles.f[u->dir_file - 1].path;
	else
		return NULL;
	name = strrchr(name, '/') ? strrchr(name, '/') + 1 : name;
	if (u->list_match & LIST_NAME) {
		snprintf(buf, len, "%s", name);
		return buf;
	}
	dot = strrchr(name, '.');
	stem = dot && dot > name ? (size_t)(dot - name) : strlen(name);
	snprintf(buf, len, "%.*s*", (int)(stem > 1 ? stem - 1 : stem), name);
	return buf;
}

static void list_more(struct user *u, const struct pv_smb_done *d)
{
	char pattern[PATH_MAX_LOAD];

	if (d->status == 0x80000006u) { /* STATUS_NO_MORE_FILES */
		u->after(u, NULL);
		return;
	}
	if (client_refused(u, d, 0))
		return;
	if (pv_smb_entries(d->buf, d->buflen, entry, u) != PV_OK) {
		if (u->st == U_BUSY)
			scenario_end(u, true);
		else
			user_fail(u, pv_errmsg());
		return;
	}
	if (u->list_page) {
		u->after(u, NULL);
		return;
	}
	ISSUE(u, list_more, PV_LOAD_OP_QUERY_DIRECTORY,
	      pv_smb_list_match(u->c, u->fid, false, list_pattern(u, pattern, sizeof(pattern)),
				client_done, u));
}

/* List the open folder u->fid (u->path): files (want 0), folders (1) or both (2) into
 * u->names. */
void client_list(struct user *u, int want, unsigned how, step_fn after)
{
	char pattern[PATH_MAX_LOAD];

	u->after = after;
	u->want = want;
	u->list_page = how & LIST_PAGE;
	u->list_match = (uint8_t)(how & (LIST_PATTERN | LIST_NAME));
	files_clear(&u->names);
	ISSUE(u, list_more, PV_LOAD_OP_QUERY_DIRECTORY,
	      pv_smb_list_match(u->c, u->fid, !(how & LIST_GO_ON),
				list_pattern(u, pattern, sizeof(pattern)), client_done, u));
}

/* Open u->path into fid (or fid2 when second). */
void client_open(struct user *u, const char *path, uint32_t access, uint32_t disp, uint32_t opts,
		 step_fn next)
{
	ISSUE(u, next, PV_LOAD_OP_CREATE,
	      pv_smb_create(u->c, path, access, disp, opts, client_done, u));
}

bool client_opened(struct user *u, const struct pv_smb_done *d, bool second)
{
	if (client_refused(u, d, 0))
		return false;
	u->fsize[second] = d->size;
	u->at[second] = 0;
	if (!d->durable) /* (only an open with a lease asks: client_open_lease) */
		memset(u->dh[second].guid, 0, 16);
	if (second) {
		memcpy(u->fid2, d->fid, 16);
		u->open2 = true;
	} else {
		memcpy(u->fid, d->fid, 16);
		u->open1 = true;
		u->size = d->size;
	}
	return true;
}

void client_close(struct user *u, bool second, step_fn next)
{
	if (second)
		u->open2 = false;
	else
		u->open1 = false;
	u->ahead[second] = false; /* its reads' sizes drawn ahead, if they were: done */
	ISSUE(u, next, PV_LOAD_OP_CLOSE,
	      pv_smb_closefile(u->c, second ? u->fid2 : u->fid, client_done, u));
}

/* ---- the requests of a Windows client around the scenarios ---- */

#define ST_NOT_FOUND	  0xC0000034u /* STATUS_OBJECT_NAME_NOT_FOUND */
#define ST_PATH_NOT_FOUND 0xC000003Au
#define FSCTL_OBJECT_ID	  0x000900C0u /* FSCTL_CREATE_OR_GET_OBJECT_ID (MS-FSCC 2.3.7) */
#define NOTIFY_FILTER	  0x0000017Fu /* FILE_NOTIFY_CHANGE_*: what Explorer watches */
#define LOCK_AT		  0x7FFFFF00u /* an Office-style range lock, past the end of the file */

/* The lease key of a file for this user: the same for every open of the path (FNV-1a, twice,
 * the second from the offset basis with its halves swapped: only which opens share a lease
 * matters, not the key's value). */
static void lease_key(const char *path, uint8_t key[16])
{
	uint64_t h[2] = {PV_HASH_FNV64_INIT, 0x84222325cbf29ce4ull};
	size_t n = strlen(path);

	for (int k = 0; k < 2; k++) {
		h[k] = pv_hash_fnv64(h[k], path, n);
		memcpy(key + 8 * k, &h[k], 8);
	}
}

/* CREATE with a lease into fid (fid2 when second), as an SMB 3 client opens a document:
 * read-handle caching to read it (LEASE_RH), read-write-handle to edit it (LEASE_RWH); and
 * durable (3.0 on) under a CreateGuid of its own: the run's name, the user, a count. */
void client_open_lease(struct user *u, bool second, const char *path, uint32_t access,
		       uint32_t disp, uint32_t opts, uint32_t lease, step_fn next)
{
	struct pv_smb_lease *ls = &u->dh[second];
	uint32_t who = (uint32_t)u->index, seq = ++u->dh_seq;

	lease_key(path, ls->key);
	ls->state = lease;
	memcpy(ls->guid, &u->e->run_id, 8);
	memcpy(ls->guid + 8, &who, 4);
	memcpy(ls->guid + 12, &seq, 4);
	snprintf(u->dh_path[second], sizeof(u->dh_path[second]), "%s", path);
	ISSUE(u, next, PV_LOAD_OP_CREATE,
	      pv_smb_create_lease(u->c, path, access, disp, opts, ls, client_done, u));
}

/* The durable open file (fid2 when second) claimed again on the user's new connection. */
void client_reopen(struct user *u, bool second, step_fn next)
{
	ISSUE(u, next, PV_LOAD_OP_CREATE,
	      pv_smb_reopen(u->c, u->dh_path[second], fid_of(u, second), &u->dh[second],
			    client_done, u));
}

/* A CREATE of what is not there (Explorer's desktop.ini, Office's owner file, a copy's
 * target): the answer it expects is "not found" (client_probed). */
void client_probe(struct user *u, const char *path, step_fn next)
{
	client_open(u, path, PV_SMB_READ, PV_SMB_OPEN, PV_SMB_NONDIR, next);
}

static void nothing(struct pv_smb_conn *c, void *arg, const struct pv_smb_done *d)
{
	(void)c;
	(void)arg;
	(void)d;
}

/* The answer to a probe: false when it ended the scenario (a refusal); "not found" is the
 * answer it wanted, and what it found after all is closed. */
bool client_probed(struct user *u, const struct pv_smb_done *d)
{
	if (d->status == ST_NOT_FOUND || d->status == ST_PATH_NOT_FOUND)
		return true;
	if (d->status == 0) {
		if (pv_smb_closefile(u->c, d->fid, NULL, NULL) == PV_OK)
			user_count_op(u, PV_LOAD_OP_CLOSE);
		return true;
	}
	return !client_refused(u, d, 0);
}

void client_set_info(struct user *u, bool second, uint8_t cls, step_fn next)
{
	uint8_t info[40] = {0};
	uint32_t len = 8;

	if (cls == INFO_EOF) {
		for (int b = 0; b < 8; b++)
			info[b] = (uint8_t)(u->size >> (8 * b));
	} else if (cls == INFO_DISPOSITION) {
		info[0] = 1; /* DeletePending */
		len = 1;
	} else { /* basic: LastWriteTime now (NT time), every other field left as it is */
		uint64_t nt = (uint64_t)(pv_now() * 1e7) + 116444736000000000ull;

		for (int b = 0; b < 8; b++)
			info[16 + b] = (uint8_t)(nt >> (8 * b));
		len = 40;
	}
	ISSUE(u, next, PV_LOAD_OP_SET_INFO,
	      pv_smb_setinfo(u->c, fid_of(u, second), cls, info, len, client_done, u));
}

void client_flush(struct user *u, bool second, step_fn next)
{
	ISSUE(u, next, PV_LOAD_OP_FLUSH, pv_smb_flush(u->c, fid_of(u, second), client_done, u));
}

void client_lock(struct user *u, bool second, bool unlock, step_fn next)
{
	ISSUE(u, next, PV_LOAD_OP_LOCK,
	      pv_smb_lock(u->c, fid_of(u, second), LOCK_AT, 1, true, unlock, client_done, u));
}

void client_object_id(struct user *u, bool second, step_fn next)
{
	ISSUE(u, next, PV_LOAD_OP_IOCTL,
	      pv_smb_fsctl(u->c, FSCTL_OBJECT_ID, fid_of(u, second), NULL, 0, 64, client_done, u));
}

void client_fsctl(struct user *u, bool second, uint32_t ctl, step_fn next)
{
	static const uint8_t none[16] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
					 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
	struct pv_buf in = PV_BUF_INIT;
	char path[600];
	int len, r;

	if (ctl != PV_PLAYBOOK_FSCTL_REFERRAL) {
		ISSUE(u, next, PV_LOAD_OP_IOCTL,
		      pv_smb_fsctl(u->c, ctl, fid_of(u, second), NULL, 0, 1024, client_done, u));
		return;
	}
	/* REQ_GET_DFS_REFERRAL (MS-DFSC 2.2.2) of the share, as a client asks before it opens a
	 * path in it: MaxReferralLevel 3, then the name, NUL-terminated, on no file */
	len = snprintf(path, sizeof(path), "\\%s\\%s", u->info.alias, u->info.share);
	if (len < 0 || (size_t)len >= sizeof(path) || pv_buf_add(&in, "\x03\x00", 2) != 0 ||
	    pv_utf16le(&in, path, (size_t)len, 0) != 0 || pv_buf_add(&in, "\0\0", 2) != 0) {
		pv_buf_release(&in, 0);
		scenario_end(u, true);
		return;
	}
	r = pv_smb_fsctl(u->c, ctl, none, in.data, in.len, 4096, client_done, u);
	pv_buf_release(&in, 0);
	ISSUE(u, next, PV_LOAD_OP_IOCTL, r);
}

/* CHANGE_NOTIFY on the open folder, as Explorer watches the folder it shows: its answer comes
 * when the folder is closed (or something in it changes), and nothing waits for it. */
void client_watch(struct user *u, bool second)
{
	if (pv_smb_notify(u->c, fid_of(u, second), NOTIFY_FILTER, nothing, NULL) == PV_OK)
		user_count_op(u, PV_LOAD_OP_CHANGE_NOTIFY);
}

void client_stat(struct user *u, bool second, step_fn next)
{
	ISSUE(u, next, PV_LOAD_OP_QUERY_INFO, pv_smb_stat(u->c, fid_of(u, second), client_done, u));
}

/* SET_INFO FileRenameInformation: the open file to path (over what is there when replace). */
void client_rename(struct user *u, bool second, const char *path, bool replace, step_fn next)
{
	ISSUE(u, next, PV_LOAD_OP_SET_INFO,
	      pv_smb_rename(u->c, fid_of(u, second), path, replace, client_done, u));
}
