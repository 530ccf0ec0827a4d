/* samba/profile.c: Samba's own counters during a job (see samba.h): the profiling level read
 * and set on the running smbd (smbcontrol: the configuration is never touched), the counters
 * read (smbstatus --profile) and their difference taken, and which smbd serves which client
 * connection (smbstatus --processes --json). The parsing is pure. */
#include "samba/samba.h"

#include "json/json.h"
#include "remote/quote.h"
#include "remote/remote.h"
#include "util/err.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const char pv_samba_profile_sh[];

static int profile(struct pv_remote *rem, const char *action, struct pv_buf *out)
{
	struct pv_buf script = PV_BUF_INIT;
	int status = 0, r;

	pv_remote_var(&script, "action", action);
	pv_buf_addstr(&script, pv_samba_profile_sh);
	r = pv_remote_sh(rem, "Samba's profile", &script, NULL, 0, out, &status, 30);
	pv_buf_release(&script, 0);
	if (r == PV_OK && status != 0)
		r = pv_error(PV_EREMOTE, "smbcontrol/smbstatus on the server (%s): exit %d: %s",
			     action, status, pv_errmsg());
	return r;
}

int pv_samba_profile_parse_level(const char *text, enum pv_samba_profile *out)
{
	if (strstr(text, "Profiling off"))
		*out = PV_SAMBA_PROFILE_OFF;
	else if (strstr(text, "count and time"))
		*out = PV_SAMBA_PROFILE_ON;
	else if (strstr(text, "count only"))
		*out = PV_SAMBA_PROFILE_COUNT;
	else if (strstr(text, "time only"))
		*out = PV_SAMBA_PROFILE_ON; /* nothing sets that alone; "on" counts it too */
	else
		return pv_error(PV_EREMOTE,
				"the server's smbcontrol did not say its profiling level: '%.120s'",
				text);
	return PV_OK;
}

int pv_samba_profile_level(struct pv_remote *rem, enum pv_samba_profile *out)
{
	struct pv_buf text = PV_BUF_INIT;
	int r = profile(rem, "level", &text);

	if (r == PV_OK)
		r = pv_samba_profile_parse_level(text.len ? text.data : "", out);
	pv_buf_release(&text, 0);
	return r;
}

int pv_samba_profile_set(struct pv_remote *rem, enum pv_samba_profile level)
{
	static const char *const names[] = {"off", "count", "on"};

	return profile(rem, names[level], NULL);
}

/* ---- the counters ---- */

void pv_samba_counters_release(struct pv_samba_counters *c)
{
	free(c->v);
	memset(c, 0, sizeof(*c));
}

static struct pv_samba_counter *counter(struct pv_samba_counters *c, const char *name, size_t len)
{
	for (size_t i = 0; i < c->n; i++)
		if (strlen(c->v[i].name) == len && !memcmp(c->v[i].name, name, len))
			return &c->v[i];
	if (c->n == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 64;
		struct pv_samba_counter *v = realloc(c->v, cap * sizeof(*v));

		if (!v)
			return NULL;
		c->v = v;
		c->cap = cap;
	}
	memset(&c->v[c->n], 0, sizeof(c->v[c->n]));
	snprintf(c->v[c->n].name, sizeof(c->v[c->n].name), "%.*s", (int)len, name);
	return &c->v[c->n++];
}

/* Lines "syscall_lstat_count:   12" and "smb2_create_time:  345" (microseconds): the
 * system calls' and the SMB2 commands' counts and times, kept by name ("lstat",
 * "smb2:create"); everything else is left. At most PV_SAMBA_COUNTERS_MAX names. */
int pv_samba_counters_parse(const char *text, size_t len, struct pv_samba_counters *out)
{
	const char *p = text, *end = text + len;

	memset(out, 0, sizeof(*out));
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p)), *e = nl ? nl : end;
		char line[160], name[64], *colon, *us, *v, *ep;
		const char *prefix = NULL;
		size_t skip = 0;
		unsigned long long x;
		struct pv_samba_counter *c;
		bool known = false;

		if ((size_t)(e - p) < sizeof(line)) {
			memcpy(line, p, (size_t)(e - p));
			line[e - p] = '\0';
			if (!strncmp(line, "syscall_", 8))
				prefix = "", skip = 8;
			else if (!strncmp(line, "smb2_", 5))
				prefix = "smb2:", skip = 5;
		}
		p = e + (nl ? 1 : 0);
		if (!prefix || !(colon = strchr(line, ':')))
			continue;
		*colon = '\0';
		if (!(us = strrchr(line + skip, '_')) || us == line + skip)
			continue;
		*us = '\0';
		if (strcmp(us + 1, "count") && strcmp(us + 1, "time"))
			continue;
		for (v = colon + 1; *v == ' ' || *v == '\t'; v++)
			;
		if (!isdigit((unsigned char)*v))
			continue;
		errno = 0;
		x = strtoull(v, &ep, 10); /* over 64 bits (ERANGE): no count of smbd's, left */
		while (*ep == ' ' || *ep == '\t' || *ep == '\r')
			ep++;
		if (*ep || errno || strlen(prefix) + strlen(line + skip) >= sizeof(out->v[0].name))
			continue;
		snprintf(name, sizeof(name), "%s%s", prefix, line + skip);
		for (size_t i = 0; i < out->n && !known; i++)
			known = !strcmp(out->v[i].name, name);
		if (!known && out->n >= PV_SAMBA_COUNTERS_MAX)
			continue;
		if (!(c = counter(out, name, strlen(name)))) {
			pv_samba_counters_release(out);
			return pv_error(PV_EIO, "out of memory");
		}
		if (us[1] == 'c')
			c->count = x;
		else
			c->usec = x;
	}
	return PV_OK;
}

int pv_samba_counters_diff(const struct pv_samba_counters *before,
			   const struct pv_samba_counters *after, struct pv_samba_counters *out)
{
	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < after->n; i++) {
		const struct pv_samba_counter *a = &after->v[i];
		uint64_t c0 = 0, t0 = 0;
		struct pv_samba_counter *d;

		for (size_t j = 0; j < before->n; j++)
			if (!strcmp(before->v[j].name, a->name)) {
				c0 = before->v[j].count;
				t0 = before->v[j].usec;
				break;
			}
		/* a counter that went back (smbd restarted, or flushed): counted from zero */
		if (a->count < c0 || a->usec < t0)
			c0 = t0 = 0;
		if (a->count == c0 && a->usec == t0)
			continue;
		if (!(d = counter(out, a->name, strlen(a->name)))) {
			pv_samba_counters_release(out);
			return pv_error(PV_EIO, "out of memory");
		}
		d->count = a->count - c0;
		d->usec = a->usec - t0;
	}
	return PV_OK;
}

int pv_samba_counters_read(struct pv_remote *rem, struct pv_samba_counters *out)
{
	struct pv_buf text = PV_BUF_INIT;
	int r = profile(rem, "read", &text);

	memset(out, 0, sizeof(*out));
	if (r == PV_OK)
		r = pv_samba_counters_parse(text.len ? text.data : "", text.len, out);
	pv_buf_release(&text, 0);
	return r;
}

/* ---- which smbd serves which connection ---- */

struct conns_ctx {
	struct pv_samba_conn *v;
	size_t n, cap;
};

/* The port of tsocket's form of an address (lib/tsocket: "ipv4:198.18.0.31:50212",
 * "ipv6:fd00::1:50212"; "ipv6:[fd00::1]:50212" too); 0 for anything else, remote_machine
 * above all: a bare address has no port, and an IPv6 one's last group is not one. */
static int port_of(const char *machine)
{
	const char *c = machine ? strrchr(machine, ':') : NULL;
	char *e;
	long p;

	if (!c || (strncmp(machine, "ipv4:", 5) && strncmp(machine, "ipv6:", 5)) || c - machine < 5)
		return 0;
	p = strtol(c + 1, &e, 10);
	return *e == '\0' && p > 0 && p < 65536 ? (int)p : 0;
}

static int one_session(const char *key, const struct pv_json *v, void *arg)
{
	struct conns_ctx *c = arg;
	const struct pv_json *sid = pv_json_get(v, "server_id");
	const char *m = pv_json_text(pv_json_get(v, "remote_machine"));
	const char *host = pv_json_text(pv_json_get(v, "hostname"));
	long long pid = 0;
	const char *ps = pv_json_text(pv_json_get(sid, "pid"));

	(void)key;
	if (!pv_json_integer(pv_json_get(sid, "pid"), &pid) && ps)
		pid = strtoll(ps, NULL, 10);
	if (pid <= 0 || pid > 4194304 || c->n >= PV_SAMBA_CONNS_MAX)
		return 0;
	if (c->n == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 16;
		struct pv_samba_conn *n = realloc(c->v, cap * sizeof(*n));

		if (!n)
			return -1;
		c->v = n;
		c->cap = cap;
	}
	c->v[c->n].pid = (int)pid;
	c->v[c->n].port = port_of(host ? host : m);
	snprintf(c->v[c->n].machine, sizeof(c->v[c->n].machine), "%s", host ? host : m ? m : "");
	c->n++;
	return 0;
}

int pv_samba_conns_parse(const char *text, size_t len, struct pv_samba_conn **out, size_t *n)
{
	struct conns_ctx c = {0};
	struct pv_json *doc;
	char err[256];
	int r = PV_OK;

	*out = NULL;
	*n = 0;
	if (!(doc = pv_json_parse(text, len, err, sizeof(err))) ||
	    !pv_json_is_object(pv_json_get(doc, "sessions")))
		r = pv_error(PV_EREMOTE,
			     "the server's smbstatus --processes --json is not its JSON");
	else if (pv_json_each(pv_json_get(doc, "sessions"), one_session, &c) != 0)
		r = pv_error(PV_EIO, "out of memory");
	pv_json_free(doc);
	if (r != PV_OK) {
		free(c.v);
		return r;
	}
	*out = c.v;
	*n = c.n;
	return PV_OK;
}

int pv_samba_conns(struct pv_remote *rem, struct pv_samba_conn **out, size_t *n)
{
	struct pv_buf text = PV_BUF_INIT;
	int r = profile(rem, "conns", &text);

	*out = NULL;
	*n = 0;
	if (r == PV_OK)
		r = pv_samba_conns_parse(text.len ? text.data : "{}", text.len ? text.len : 2, out,
					 n);
	pv_buf_release(&text, 0);
	return r;
}
