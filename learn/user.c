/* learn/user.c: the users of a capture (see learn/user.h). */
#include "learn/user.h"

#include "util/digest.h"
#include "util/hash.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void pv_learn_users_init(struct pv_learn_users *t)
{
	memset(t, 0, sizeof(*t));
	pv_learn_table_init(&t->index, PV_LEARN_USERS_MAX);
}

long pv_learn_users_get(struct pv_learn_users *t, const char *id, enum pv_learn_user_kind kind)
{
	uint64_t h = pv_hash_fnv64(PV_HASH_FNV64_INIT, id, strlen(id));
	struct pv_learn_table_entry *e;

	/* ids that hash alike are told apart by a probe along the keys h, h+1, ... */
	for (uint64_t k = h;; k++) {
		if (!(e = pv_learn_table_get(&t->index, k)))
			break;
		if (!strcmp(t->u[e->v].id, id))
			return e->v;
	}
	if (t->n >= PV_LEARN_USERS_MAX) {
		t->refused++;
		return -1;
	}
	if (t->n == t->cap) {
		size_t ncap = t->cap ? t->cap * 2 : 16;
		struct pv_learn_user *u = realloc(t->u, ncap * sizeof(*u));

		if (!u) {
			t->refused++;
			return -1;
		}
		t->u = u;
		t->cap = ncap;
	}
	for (uint64_t k = h;; k++)
		if (!pv_learn_table_get(&t->index, k)) {
			if (!pv_learn_table_put(&t->index, k, 0, (uint32_t)t->n)) {
				t->refused++;
				return -1;
			}
			break;
		}
	memset(&t->u[t->n], 0, sizeof(t->u[0]));
	snprintf(t->u[t->n].id, sizeof(t->u[0].id), "%s", id);
	t->u[t->n].kind = kind;
	t->u[t->n].last_cmd = UINT8_MAX;
	return (long)t->n++;
}

void pv_learn_users_release(struct pv_learn_users *t)
{
	free(t->u);
	pv_learn_table_release(&t->index);
	memset(t, 0, sizeof(*t));
}

void pv_learn_user_request(struct pv_learn_user *u, double t)
{
	if (u->requests++)
		pv_learn_hist_add(&u->gaps, t - u->last);
	else
		u->first = t;
	u->last = t;
}

void pv_learn_user_logon(struct pv_learn_user *u, double t)
{
	if (!u->logons++)
		u->logon_first = t;
	u->logon_last = t;
}

/* x's time at work, seconds: its first logon or request to its last (0: none, or a moment) */
static double at_work(const struct pv_learn_user *x)
{
	double t0 = x->logon_first, t1 = x->logon_last;

	if (!x->logons)
		return 0;
	if (x->requests) {
		t0 = x->first < t0 ? x->first : t0;
		t1 = x->last > t1 ? x->last : t1;
	}
	return t1 > t0 ? t1 - t0 : 0;
}

size_t pv_learn_users_relogon_rates(const struct pv_learn_users *t, double *v)
{
	size_t n = 0;

	for (size_t i = 0; i < t->n; i++) {
		const struct pv_learn_user *x = &t->u[i];
		double w = at_work(x);

		if (x->logons >= 2 && w > 0)
			v[n++] = (double)(x->logons - 1) * 3600 / w;
	}
	return n;
}

uint64_t pv_learn_users_relogons(const struct pv_learn_users *t, double *hours)
{
	uint64_t k = 0;

	*hours = 0;
	for (size_t i = 0; i < t->n; i++) {
		double w = at_work(&t->u[i]);

		if (w > 0) {
			k += t->u[i].logons - 1;
			*hours += w / 3600;
		}
	}
	return k;
}

static uint16_t le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* A field (Len, MaxLen, Offset at f) of the message m of n bytes, as lower-case text: its
 * UTF-16LE (unicode) or OEM bytes, ASCII case-folded, other characters kept as they are. */
static int field(const uint8_t *m, size_t n, size_t f, bool unicode, char *out, size_t outlen)
{
	size_t len = le16(m + f), off = le32(m + f + 4), o = 0;

	if (off > n || len > n - off)
		return -1;
	for (size_t i = 0; i < len && o + 4 < outlen; i += unicode ? 2 : 1) {
		unsigned c = unicode ? (i + 1 < len ? le16(m + off + i) : m[off + i]) : m[off + i];

		if (c < 0x80) {
			out[o++] = (char)tolower((int)c);
		} else { /* kept as its code, lower case is ASCII's only */
			o += (size_t)snprintf(out + o, outlen - o, "\\u%04x", c);
			if (o >= outlen)
				o = outlen - 1;
		}
	}
	out[o] = '\0';
	return (int)o;
}

int pv_learn_ntlm_user(const uint8_t *sec, size_t len, bool keep, char *id, size_t idlen)
{
	static const uint8_t sig[8] = "NTLMSSP";
	char user[256], dom[256], both[520], hex[65];
	const uint8_t *m = NULL;
	size_t n;
	bool unicode;

	for (size_t i = 0; i + 8 <= len; i++)
		if (!memcmp(sec + i, sig, 8)) {
			m = sec + i;
			break;
		}
	if (!m)
		return 0;
	n = len - (size_t)(m - sec);
	if (n < 64 || le32(m + 8) != 3) /* AUTHENTICATE: its fixed part is 64 bytes at least */
		return 0;
	unicode = le32(m + 60) & 1; /* NTLMSSP_NEGOTIATE_UNICODE */
	if (field(m, n, 36, unicode, user, sizeof(user)) < 0 ||
	    field(m, n, 28, unicode, dom, sizeof(dom)) < 0)
		return -1;
	if (!user[0]) /* anonymous */
		return 0;
	snprintf(both, sizeof(both), "%s\\%s", dom, user);
	if (keep) {
		snprintf(id, idlen, "ntlm:%s", both);
		return 1;
	}
	pv_sha256_hex(both, strlen(both), hex);
	snprintf(id, idlen, "ntlm:%.12s", hex);
	return 1;
}
