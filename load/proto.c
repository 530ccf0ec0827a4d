/* load/proto.c: the setup lines of `provision load` (see loadproto.h). */
#include "load/proto.h"

#include "util/err.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void pv_load_proto_encode(struct pv_buf *out, const char *s)
{
	static const char safe[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-";

	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (strchr(safe, *p))
			pv_buf_add(out, p, 1);
		else
			pv_buf_addf(out, "%%%02X", *p);
	}
}

/* "WHAT LEVEL:SECONDS,...": learned quantiles, none when q has none */
static void quantiles(struct pv_buf *out, const char *what,
		      const struct pv_playbook_workload_quantiles *q)
{
	for (unsigned i = 0; i < q->n; i++)
		pv_buf_addf(out, "%s%s%.17g:%.17g%s", i ? "," : what, i ? "" : " ", q->level[i],
			    q->q[i], i + 1 == q->n ? "\n" : "");
}

int pv_load_proto_config(const struct pv_playbook_workload *c, struct pv_buf *out)
{
	pv_buf_addf(out,
		    "config rate=%u late=%.17g overload=%.17g interval=%u seed=%llu auth=%s "
		    "encryption=%s keep=%d threads=%u weights=",
		    c->rate, c->late, c->overload, c->interval, (unsigned long long)c->seed,
		    c->auth == PV_PLAYBOOK_WORKLOAD_KERBEROS ? "kerberos" : "ntlm",
		    pv_playbook_workload_encryptions[c->encryption], c->keep_logged_on ? 1 : 0,
		    c->threads);
	for (int k = 0; k < PV_PLAYBOOK_WORKLOAD_KINDS; k++)
		pv_buf_addf(out, "%s%.17g", k ? "," : "", c->kind[k].weight);
	pv_buf_addstr(out, " limits=");
	for (int k = 0; k < PV_PLAYBOOK_WORKLOAD_KINDS; k++)
		pv_buf_addf(out, "%s%.17g", k ? "," : "", c->kind[k].limit);
	pv_buf_addstr(out, "\n");
	for (unsigned i = 0; i < c->learned.n; i++) {
		const struct pv_playbook_workload_learned_kind *k = &c->learned.kind[i];

		pv_buf_addf(out, "learned %.17g %.17g ", k->weight, k->requests);
		for (unsigned j = 0; j < k->n; j++)
			pv_buf_addf(out, "%s%u", j ? "," : "", k->step[j]);
		pv_buf_addstr(out, " ");
		for (unsigned j = 0; j < k->n; j++)
			pv_buf_addf(out, "%s%.17g", j ? "," : "", k->count[j]);
		pv_buf_addf(out, " %.17g %.17g", k->rest, k->seconds);
		for (unsigned j = 0; k->depths && j < k->n; j++)
			pv_buf_addf(out, "%s%d", j ? "," : " ", k->depth[j]);
		pv_buf_addstr(out, "\n");
	}
	if (c->learned.n) {
		quantiles(out, "think", &c->learned.think);
		quantiles(out, "client-times", &c->learned.client_q);
		quantiles(out, "within-times", &c->learned.within);
		for (unsigned i = 0; i < PV_PLAYBOOK_WORKLOAD_CMDS; i++)
			if (c->learned.within_after[i].n) {
				char what[32];

				snprintf(what, sizeof(what), "within-after-times %u", i);
				quantiles(out, what, &c->learned.within_after[i]);
			}
	}
	if (c->learned.n && c->learned.gap > 0)
		pv_buf_addf(out, "activity-gap %.17g\n", c->learned.gap);
	if (pv_playbook_workload_logons(c) > 0)
		pv_buf_addf(out, "logons %.17g\n", pv_playbook_workload_logons(c));
	if (c->learned.n && c->learned.unleased > 0)
		pv_buf_addf(out, "unleased %.17g\n", c->learned.unleased);
	if (c->learned.n && c->learned.client[0] > 0)
		pv_buf_addf(out, "client %.17g %.17g\n", c->learned.client[0],
			    c->learned.client[1]);
	for (int w = 0; c->learned.n && w < 2; w++) {
		const double *b = w ? c->learned.write : c->learned.read,
			     *mb = w ? c->learned.write_mean : c->learned.read_mean;

		pv_buf_addstr(out, w ? "sizes write " : "sizes read ");
		for (int j = 0; j < PV_PLAYBOOK_WORKLOAD_SIZE_BINS; j++)
			pv_buf_addf(out, "%s%.17g", j ? "," : "", b[j]);
		pv_buf_addstr(out, " ");
		for (int j = 0; j < PV_PLAYBOOK_WORKLOAD_SIZE_BINS; j++)
			pv_buf_addf(out, "%s%.17g", j ? "," : "", mb[j]);
		pv_buf_addstr(out, "\n");
	}
	return pv_buf_failed(out) ? pv_error(PV_EIO, "out of memory") : PV_OK;
}

int pv_load_proto_kerberos(const char *realm, const char *kdc, const char *dns_domain,
			   struct pv_buf *out)
{
	pv_buf_addstr(out, "kerberos ");
	pv_load_proto_encode(out, realm);
	pv_buf_addstr(out, " ");
	pv_load_proto_encode(out, kdc);
	pv_buf_addstr(out, " ");
	pv_load_proto_encode(out, dns_domain);
	pv_buf_addstr(out, "\n");
	return pv_buf_failed(out) ? pv_error(PV_EIO, "out of memory") : PV_OK;
}

int pv_load_proto_user(const char *name, const char *alias, const char *share, unsigned number,
		       struct pv_buf *out)
{
	pv_buf_addstr(out, "user ");
	pv_load_proto_encode(out, name);
	pv_buf_addstr(out, " ");
	pv_load_proto_encode(out, alias);
	pv_buf_addstr(out, " ");
	pv_load_proto_encode(out, share);
	pv_buf_addf(out, " %u\n", number);
	return pv_buf_failed(out) ? pv_error(PV_EIO, "out of memory") : PV_OK;
}

int pv_load_proto_start(size_t n, struct pv_buf *out)
{
	pv_buf_addf(out, "start %zu\n", n);
	return pv_buf_failed(out) ? pv_error(PV_EIO, "out of memory") : PV_OK;
}

int pv_load_proto_fileset(const char *name, const char *text, size_t len, struct pv_buf *out)
{
	if (!len || len > PV_LOAD_PROTO_FILESET_MAX || strlen(name) >= 64 || !name[0])
		return pv_error(PV_ECONFIG,
				"fileset '%s': its description must be 1 byte to 1 MiB, its name 1 "
				"to 63 bytes",
				name);
	if (memchr(text, '\0', len))
		return pv_error(PV_ECONFIG, "fileset '%s': a NUL byte in its description", name);
	for (size_t off = 0; off < len; off += PV_LOAD_PROTO_PIECE) {
		size_t n = len - off < PV_LOAD_PROTO_PIECE ? len - off : PV_LOAD_PROTO_PIECE;
		char piece[PV_LOAD_PROTO_PIECE + 1];

		memcpy(piece, text + off, n);
		piece[n] = '\0';
		pv_buf_addstr(out, "fileset ");
		pv_load_proto_encode(out, name);
		pv_buf_addstr(out, " ");
		pv_load_proto_encode(out, piece);
		pv_buf_addstr(out, "\n");
	}
	return pv_buf_failed(out) ? pv_error(PV_EIO, "out of memory") : PV_OK;
}

/* The next space-separated word of s (at most len bytes) into w, decoded. */
int pv_load_proto_word(const char **s, const char *end, char *w, size_t wlen)
{
	size_t o = 0;

	while (*s < end && **s == ' ')
		(*s)++;
	while (*s < end && **s != ' ') {
		unsigned v;

		if (**s == '%') {
			char hex[3] = {0};

			if (end - *s < 3)
				return -1;
			memcpy(hex, *s + 1, 2);
			if (sscanf(hex, "%2x", &v) != 1 || !v)
				return -1;
			*s += 3;
		} else {
			v = (unsigned char)**s;
			(*s)++;
		}
		if (o + 1 >= wlen)
			return -1;
		w[o++] = (char)v;
	}
	w[o] = '\0';
	return o ? 0 : -1;
}

static int numbers(const char *v, double *out, int n)
{
	for (int i = 0; i < n; i++) {
		char *e;

		errno = 0;
		out[i] = strtod(v, &e);
		if (e == v || errno || out[i] < 0 || (i < n - 1 ? *e != ',' : *e != '\0'))
			return -1;
		v = e + 1;
	}
	return 0;
}

static int config(struct pv_load_proto *p, const char *s, const char *end)
{
	struct pv_playbook_workload *c = &p->cfg;
	char w[512];
	double v[PV_PLAYBOOK_WORKLOAD_KINDS];

	pv_playbook_workload_defaults(c);
	while (s < end && pv_load_proto_word(&s, end, w, sizeof(w)) == 0) {
		char *eq = strchr(w, '='), *e;

		if (!eq)
			return -1;
		*eq++ = '\0';
		errno = 0;
		if (!strcmp(w, "rate")) {
			unsigned long r = strtoul(eq, &e, 10);

			if (*e || errno || r < 1 || r > PV_PLAYBOOK_WORKLOAD_RATE_MAX)
				return -1;
			c->rate = (unsigned)r;
		} else if (!strcmp(w, "late")) {
			c->late = strtod(eq, &e);
		} else if (!strcmp(w, "overload")) {
			c->overload = strtod(eq, &e);
		} else if (!strcmp(w, "interval")) {
			unsigned long r = strtoul(eq, &e, 10);

			if (r < 1 || r > 3600)
				return -1;
			c->interval = (unsigned)r;
		} else if (!strcmp(w, "seed")) {
			c->seed = strtoull(eq, &e, 10);
		} else if (!strcmp(w, "keep")) {
			if (strcmp(eq, "0") && strcmp(eq, "1"))
				return -1;
			c->keep_logged_on = eq[0] == '1';
			continue;
		} else if (!strcmp(w, "threads")) {
			unsigned long r = strtoul(eq, &e, 10);

			if (r > PV_PLAYBOOK_WORKLOAD_THREADS_MAX)
				return -1;
			c->threads = (unsigned)r;
		} else if (!strcmp(w, "auth")) {
			if (strcmp(eq, "ntlm") && strcmp(eq, "kerberos"))
				return -1;
			c->auth = eq[0] == 'k' ? PV_PLAYBOOK_WORKLOAD_KERBEROS
					       : PV_PLAYBOOK_WORKLOAD_NTLM;
			continue;
		} else if (!strcmp(w, "encryption")) {
			int k = 0;

			while (pv_playbook_workload_encryptions[k] &&
			       strcmp(eq, pv_playbook_workload_encryptions[k]))
				k++;
			if (!pv_playbook_workload_encryptions[k])
				return -1;
			c->encryption = (enum pv_playbook_workload_encryption)k;
			continue;
		} else if (!strcmp(w, "weights") || !strcmp(w, "limits")) {
			if (numbers(eq, v, PV_PLAYBOOK_WORKLOAD_KINDS) < 0)
				return -1;
			for (int k = 0; k < PV_PLAYBOOK_WORKLOAD_KINDS; k++) {
				if (w[0] == 'w')
					c->kind[k].weight = v[k];
				else
					c->kind[k].limit = v[k];
			}
			continue;
		} else {
			return -1;
		}
		if (*e || errno)
			return -1;
	}
	{
		double sum = 0;

		for (int k = 0; k < PV_PLAYBOOK_WORKLOAD_KINDS; k++)
			sum += c->kind[k].weight;
		if (sum <= 0)
			return -1;
	}
	p->have_config = true;
	return 0;
}

/* "learned WEIGHT REQUESTS CODE,CODE,... COUNT,COUNT,... REST SECONDS [DEPTH,DEPTH,...]": a
 * learned kind (struct pv_playbook_workload_learned_kind), its steps' depths when learned */
static int learned(struct pv_load_proto *p, const char *s, const char *end)
{
	struct pv_playbook_workload_learned *l = &p->cfg.learned;
	struct pv_playbook_workload_learned_kind k = {0};
	char w[7][PV_PLAYBOOK_WORKLOAD_LEARNED_STEPS * 26], *e;

	w[6][0] = '\0';

	if (!p->have_config || l->n == PV_PLAYBOOK_WORKLOAD_LEARNED_KINDS ||
	    pv_load_proto_word(&s, end, w[0], sizeof(w[0])) ||
	    pv_load_proto_word(&s, end, w[1], sizeof(w[1])) ||
	    pv_load_proto_word(&s, end, w[2], sizeof(w[2])) ||
	    pv_load_proto_word(&s, end, w[3], sizeof(w[3])) ||
	    pv_load_proto_word(&s, end, w[4], sizeof(w[4])) ||
	    pv_load_proto_word(&s, end, w[5], sizeof(w[5])) ||
	    (s != end && pv_load_proto_word(&s, end, w[6], sizeof(w[6]))) || s != end ||
	    numbers(w[0], &k.weight, 1) < 0 || numbers(w[1], &k.requests, 1) < 0 ||
	    !(k.weight > 0) || k.requests > 1e9)
		return -1;
	for (const char *c = w[2]; *c; c = *e ? e + 1 : e) {
		unsigned long code = strtoul(c, &e, 10);

		if (e == c || (*e && *e != ',') || k.n == PV_PLAYBOOK_WORKLOAD_LEARNED_STEPS ||
		    code > 0xff ||
		    !pv_playbook_workload_learned_command((unsigned)code &
							  ~PV_PLAYBOOK_WORKLOAD_LEARNED_REPEAT))
			return -1;
		k.step[k.n++] = (uint8_t)code;
	}
	if (!k.n || numbers(w[3], k.count, k.n) < 0 || numbers(w[4], &k.rest, 1) < 0 ||
	    k.rest > 1e9 || numbers(w[5], &k.seconds, 1) < 0 || k.seconds > 1e4)
		return -1;
	if (w[6][0]) { /* the depths, one a step */
		unsigned j = 0;

		for (const char *c = w[6]; *c; c = *e ? e + 1 : e) {
			long d = strtol(c, &e, 10);

			if (e == c || (*e && *e != ',') || j == k.n ||
			    d < PV_PLAYBOOK_WORKLOAD_OUT || d > PV_PLAYBOOK_WORKLOAD_DEEP)
				return -1;
			k.depth[j++] = (int8_t)d;
		}
		if (j != k.n)
			return -1;
		k.depths = true;
	}
	l->kind[l->n++] = k;
	return 0;
}

/* "logons RATE", "unleased SHARE", "activity-gap SECONDS": a learned workload's number, over 0
 * and at most max, into *dst: its logons again a user-hour (PV_PLAYBOOK_WORKLOAD_LOGONS_MAX),
 * its opens of a file to read or edit in place made without a lease (%, 100), its activity
 * gap (seconds, 10^4) */
static int learned_number(struct pv_load_proto *p, const char *s, const char *end, double max,
			  double *dst)
{
	char v[32];
	double x;

	if (!p->have_config || pv_load_proto_word(&s, end, v, sizeof(v)) || s != end ||
	    numbers(v, &x, 1) < 0 || !(x > 0) || x > max)
		return -1;
	*dst = x;
	return 0;
}

/* "think|client-times|within-times LEVEL:SECONDS,...": a learned workload's think time, client
 * time or gaps within an activity, its quantiles (2 to PV_PLAYBOOK_WORKLOAD_QUANTILES, from 0
 * to 100 percent, each level over the last, the seconds never fewer, at most 10^4, the last
 * over 0), into *l */
static int quantiles_line(struct pv_load_proto *p, const char *s, const char *end,
			  struct pv_playbook_workload_quantiles *l)
{
	char v[PV_PLAYBOOK_WORKLOAD_QUANTILES * 52];
	const char *c;
	unsigned n = 0;

	if (!p->have_config || pv_load_proto_word(&s, end, v, sizeof(v)) || s != end)
		return -1;
	for (c = v; *c; n++) {
		char *e;
		double lv, q;

		if (n == PV_PLAYBOOK_WORKLOAD_QUANTILES)
			return -1;
		errno = 0;
		lv = strtod(c, &e);
		if (e == c || *e != ':' || errno)
			return -1;
		c = e + 1;
		q = strtod(c, &e);
		if (e == c || (*e && *e != ',') || errno || !(lv >= 0 && lv <= 100) ||
		    (n ? !(lv > l->level[n - 1]) : lv != 0) ||
		    !(q >= (n ? l->q[n - 1] : 0) && q <= 1e4))
			return -1;
		l->level[n] = lv;
		l->q[n] = q;
		c = *e ? e + 1 : e;
	}
	if (n < 2 || l->level[n - 1] != 100 || !(l->q[n - 1] > 0))
		return -1;
	l->n = n;
	return 0;
}

/* "within-after-times CODE LEVEL:SECONDS,...": the gaps within an activity after a request of
 * command CODE (a command a learned kind replays, once), as quantiles_line's */
static int within_after_line(struct pv_load_proto *p, const char *s, const char *end)
{
	char v[8], *e;
	unsigned long code;

	if (!p->have_config || pv_load_proto_word(&s, end, v, sizeof(v)) || s == end)
		return -1;
	errno = 0;
	code = strtoul(v, &e, 10);
	if (e == v || *e || errno || code >= PV_PLAYBOOK_WORKLOAD_CMDS ||
	    !pv_playbook_workload_learned_command((unsigned)code) ||
	    p->cfg.learned.within_after[code].n)
		return -1;
	return quantiles_line(p, s, end, &p->cfg.learned.within_after[code]);
}

/* "client MEDIAN P95": a learned workload's client time within an activity, seconds (0 < MEDIAN
 * <= 60, MEDIAN <= P95 <= 3600) */
static int client_time(struct pv_load_proto *p, const char *s, const char *end)
{
	char v[2][32];
	double t[2];

	if (!p->have_config || pv_load_proto_word(&s, end, v[0], sizeof(v[0])) ||
	    pv_load_proto_word(&s, end, v[1], sizeof(v[1])) || s != end ||
	    numbers(v[0], &t[0], 1) < 0 || numbers(v[1], &t[1], 1) < 0 || !(t[0] > 0) ||
	    t[0] > 60 || !(t[1] >= t[0]) || t[1] > 3600)
		return -1;
	p->cfg.learned.client[0] = t[0];
	p->cfg.learned.client[1] = t[1];
	return 0;
}

/* "sizes read|write P0,...,P33 M0,...,M33": the learned sizes' buckets and their means */
static int sizes(struct pv_load_proto *p, const char *s, const char *end)
{
	char which[8], v[PV_PLAYBOOK_WORKLOAD_SIZE_BINS * 26],
		m[PV_PLAYBOOK_WORKLOAD_SIZE_BINS * 26];
	bool r;

	if (!p->have_config || pv_load_proto_word(&s, end, which, sizeof(which)) ||
	    pv_load_proto_word(&s, end, v, sizeof(v)) ||
	    pv_load_proto_word(&s, end, m, sizeof(m)) || s != end ||
	    (strcmp(which, "read") && strcmp(which, "write")))
		return -1;
	r = which[0] == 'r';
	if (numbers(v, r ? p->cfg.learned.read : p->cfg.learned.write,
		    PV_PLAYBOOK_WORKLOAD_SIZE_BINS) < 0)
		return -1;
	return numbers(m, r ? p->cfg.learned.read_mean : p->cfg.learned.write_mean,
		       PV_PLAYBOOK_WORKLOAD_SIZE_BINS);
}

static int user(struct pv_load_proto *p, const char *s, const char *end)
{
	char name[256], alias[256], share[256], num[16], *e;
	struct pv_load_user *u;
	unsigned long n;

	if (pv_load_proto_word(&s, end, name, sizeof(name)) ||
	    pv_load_proto_word(&s, end, alias, sizeof(alias)) ||
	    pv_load_proto_word(&s, end, share, sizeof(share)) ||
	    pv_load_proto_word(&s, end, num, sizeof(num)))
		return -1;
	while (s < end && *s == ' ')
		s++;
	n = strtoul(num, &e, 10);
	if (s != end || *e || n < 1 || n > 100000000)
		return -1;
	if (p->n == p->cap) {
		size_t cap = p->cap ? 2 * p->cap : 64;
		struct pv_load_user *nu = realloc(p->users, cap * sizeof(*nu));

		if (!nu)
			return -2;
		p->users = nu;
		p->cap = cap;
	}
	u = &p->users[p->n];
	u->name = strdup(name);
	u->alias = strdup(alias);
	u->share = strdup(share);
	u->number = (unsigned)n;
	if (!u->name || !u->alias || !u->share) {
		free((char *)u->name);
		free((char *)u->alias);
		free((char *)u->share);
		return -2;
	}
	p->n++;
	return 0;
}

/* "fileset NAME PIECE": the piece joined to those before it */
static int fileset(struct pv_load_proto *p, const char *s, const char *end)
{
	char name[64], piece[PV_LOAD_PROTO_PIECE + 1];
	size_t n;
	char *f;

	if (pv_load_proto_word(&s, end, name, sizeof(name)) ||
	    pv_load_proto_word(&s, end, piece, sizeof(piece)) || s != end)
		return -1;
	if (p->fileset_name[0] && strcmp(name, p->fileset_name))
		return pv_error(PV_EUSAGE, "a second fileset ('%s' after '%s')", name,
				p->fileset_name);
	n = strlen(piece);
	if (p->fileset_len + n > PV_LOAD_PROTO_FILESET_MAX)
		return pv_error(PV_EUSAGE, "fileset '%s': more than %u bytes", name,
				PV_LOAD_PROTO_FILESET_MAX);
	if (!(f = realloc(p->fileset, p->fileset_len + n + 1)))
		return -2;
	memcpy(f + p->fileset_len, piece, n + 1);
	p->fileset = f;
	p->fileset_len += n;
	snprintf(p->fileset_name, sizeof(p->fileset_name), "%s", name);
	return 0;
}

/* "start" or "start N" */
static int start(struct pv_load_proto *p, const char *s, const char *end)
{
	char num[24], *e;
	unsigned long long n;

	if (!p->have_config || !p->n)
		return pv_error(PV_EUSAGE, "'start' before a config line and a user");
	if (p->cfg.auth == PV_PLAYBOOK_WORKLOAD_KERBEROS && !p->realm[0])
		return pv_error(PV_EUSAGE, "auth=kerberos without a 'kerberos' line");
	if (p->cfg.kind[PV_PLAYBOOK_WORKLOAD_LEARNED].weight > 0 && !p->cfg.learned.n)
		return pv_error(PV_EUSAGE, "kind 'learned' weighed without a 'learned' line");
	if (s == end) {
		p->step = p->n;
	} else {
		if (*s != ' ' || pv_load_proto_word(&s, end, num, sizeof(num)) || s != end)
			return -1;
		errno = 0;
		n = strtoull(num, &e, 10);
		if (*e || errno || n < 1 || n > p->n)
			return pv_error(PV_EUSAGE,
					"'start %s': a step of 1 to %zu users (those sent)", num,
					p->n);
		p->step = (size_t)n;
	}
	p->steps++;
	return PV_OK;
}

int pv_load_proto_control_line(enum pv_load_proto_ctl c, struct pv_buf *out)
{
	pv_buf_addstr(out, c == PV_LOAD_PROTO_GO ? "go\n" : "stop\n");
	return pv_buf_failed(out) ? pv_error(PV_EIO, "out of memory") : PV_OK;
}

int pv_load_proto_control(const char *line, size_t len, enum pv_load_proto_ctl *c)
{
	if (len == 2 && !memcmp(line, "go", 2))
		*c = PV_LOAD_PROTO_GO;
	else if (len == 4 && !memcmp(line, "stop", 4))
		*c = PV_LOAD_PROTO_STOP;
	else
		return pv_error(PV_EUSAGE, "expected 'go' or 'stop' on stdin, not '%.*s'",
				(int)(len < 40 ? len : 40), line);
	return PV_OK;
}

int pv_load_proto_parse(struct pv_load_proto *p, const char *line, size_t len)
{
	const char *end = line + len;
	int r;

	if (p->step)
		return pv_error(PV_EUSAGE, "setup line while a step is under way");
	if (len == 4 && !memcmp(line, "stop", 4) && p->steps) { /* between steps: the end */
		p->stop = true;
		return PV_OK;
	}
	if (len >= 7 && !strncmp(line, "config ", 7) && !p->steps)
		r = config(p, line + 7, end);
	else if (len >= 5 && !strncmp(line, "user ", 5))
		r = user(p, line + 5, end);
	else if (len >= 8 && !strncmp(line, "learned ", 8) && !p->steps)
		r = learned(p, line + 8, end);
	else if (len >= 6 && !strncmp(line, "sizes ", 6) && !p->steps)
		r = sizes(p, line + 6, end);
	else if (len >= 7 && !strncmp(line, "logons ", 7) && !p->steps)
		r = learned_number(p, line + 7, end, PV_PLAYBOOK_WORKLOAD_LOGONS_MAX,
				   &p->cfg.learned.relogons_per_user_hour);
	else if (len >= 9 && !strncmp(line, "unleased ", 9) && !p->steps)
		r = learned_number(p, line + 9, end, 100, &p->cfg.learned.unleased);
	else if (len >= 7 && !strncmp(line, "client ", 7) && !p->steps)
		r = client_time(p, line + 7, end);
	else if (len >= 6 && !strncmp(line, "think ", 6) && !p->steps)
		r = quantiles_line(p, line + 6, end, &p->cfg.learned.think);
	else if (len >= 13 && !strncmp(line, "client-times ", 13) && !p->steps)
		r = quantiles_line(p, line + 13, end, &p->cfg.learned.client_q);
	else if (len >= 13 && !strncmp(line, "within-times ", 13) && !p->steps)
		r = quantiles_line(p, line + 13, end, &p->cfg.learned.within);
	else if (len >= 13 && !strncmp(line, "activity-gap ", 13) && !p->steps)
		r = learned_number(p, line + 13, end, 1e4, &p->cfg.learned.gap);
	else if (len >= 19 && !strncmp(line, "within-after-times ", 19) && !p->steps)
		r = within_after_line(p, line + 19, end);
	else if (len >= 9 && !strncmp(line, "kerberos ", 9) && !p->steps) {
		const char *s = line + 9;

		r = pv_load_proto_word(&s, end, p->realm, sizeof(p->realm)) ||
				    pv_load_proto_word(&s, end, p->kdc, sizeof(p->kdc)) ||
				    pv_load_proto_word(&s, end, p->dns_domain,
						       sizeof(p->dns_domain)) ||
				    s != end
			    ? -1
			    : 0;
	} else if (len >= 8 && !strncmp(line, "fileset ", 8) && !p->steps) {
		r = fileset(p, line + 8, end);
		if (r > 0)
			return r;
	} else if (len >= 5 && !strncmp(line, "start", 5)) {
		r = start(p, line + 5, end);
		if (r != -1)
			return r;
	} else
		r = -1;
	if (r == -2)
		return pv_error(PV_EIO, "out of memory");
	if (r < 0)
		return pv_error(PV_EUSAGE, "not a setup line of provision load: '%.*s'",
				(int)(len < 80 ? len : 80), line);
	return PV_OK;
}

void pv_load_proto_release(struct pv_load_proto *p)
{
	for (size_t i = 0; i < p->n; i++) {
		free((char *)p->users[i].name);
		free((char *)p->users[i].alias);
		free((char *)p->users[i].share);
	}
	free(p->users);
	free(p->fileset);
	memset(p, 0, sizeof(*p));
}
