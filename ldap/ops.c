/* ldap/ops.c: reads, paged searches, adds and deletes, and the pipeline of asynchronous
 * operations on one connection.
 *
 * Why a pipeline: the DC applies writes one at a time (one sam.ldb transaction each), so
 * parallel connections do not help, but a synchronous client leaves the DC idle for a round
 * trip per entry. Keeping `window` requests outstanding on one connection hides that. */
#include "ldap/ops.h"
#include "ldap/encode.h"

#include "ldap/internal.h"
#include "util/err.h"
#include "util/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

static int wait_seconds(const struct pv_ldap *dir)
{
	int t = dir->target.timeout > 0 ? dir->target.timeout : 10;

	return t * 6 > 60 ? t * 6 : 60;
}

static void mods_free(LDAPMod **mods)
{
	if (!mods)
		return;
	for (size_t i = 0; mods[i]; i++) {
		free(mods[i]->mod_bvalues[0]); /* the berval array */
		free(mods[i]->mod_bvalues);
		free(mods[i]);
	}
	free(mods);
}

/* LDAPMod array for an add, pointing into attrs (values are not copied). Attributes with
 * no value are left out. Each mod's berval array is one allocation, owned by
 * mod_bvalues[0]. */
static LDAPMod **mods_new(const struct pv_ldap_attr *attrs, size_t n, int op)
{
	LDAPMod **mods = calloc(n + 1, sizeof(*mods));
	size_t k = 0;

	if (!mods)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		LDAPMod *m;
		struct berval **bv;
		struct berval *vals;

		if (attrs[i].n == 0)
			continue;
		m = calloc(1, sizeof(*m));
		bv = calloc(attrs[i].n + 1, sizeof(*bv));
		vals = calloc(attrs[i].n, sizeof(*vals));
		if (!m || !bv || !vals) {
			free(m);
			free(bv);
			free(vals);
			mods_free(mods);
			return NULL;
		}
		for (size_t j = 0; j < attrs[i].n; j++) {
			vals[j].bv_val = (char *)attrs[i].vals[j];
			vals[j].bv_len =
				attrs[i].lens ? attrs[i].lens[j] : strlen(attrs[i].vals[j]);
			bv[j] = &vals[j];
		}
		m->mod_op = op | LDAP_MOD_BVALUES;
		m->mod_type = (char *)attrs[i].name;
		m->mod_bvalues = bv;
		mods[k++] = m;
	}
	return mods;
}

/* Classify a per-operation result code. */
static enum pv_ldap_result classify(int rc, bool del)
{
	switch (rc) {
	case LDAP_SUCCESS:
		return PV_LDAP_DONE;
	case LDAP_ALREADY_EXISTS:
		return del ? PV_LDAP_REJECTED : PV_LDAP_EXISTS;
	case LDAP_NO_SUCH_OBJECT:
		return del ? PV_LDAP_NOSUCH : PV_LDAP_REJECTED;
	case LDAP_CONSTRAINT_VIOLATION:
	case LDAP_OBJECT_CLASS_VIOLATION:
	case LDAP_NAMING_VIOLATION:
	case LDAP_INVALID_SYNTAX:
	case LDAP_UNDEFINED_TYPE:
	case LDAP_NOT_ALLOWED_ON_NONLEAF:
	case LDAP_TYPE_OR_VALUE_EXISTS:
	case LDAP_INVALID_DN_SYNTAX:
		return PV_LDAP_REJECTED;
	default: /* connection lost, access denied, unwilling to perform, busy...: stop */
		return PV_LDAP_FATAL;
	}
}

/* A failure on a connection that was up: the DC going away (killed, restarted, the network
 * gone) is named as such, with what to do; anything else as libldap says (dir.c). */
static int lost(const struct pv_ldap *dir, int rc, const char *what, const struct pv_ldap_target *d)
{
	if (rc == LDAP_SERVER_DOWN || rc == LDAP_CONNECT_ERROR)
		return pv_error(PV_EUNREACH,
				"the DC '%s' went away while %s (%s); run the same "
				"command again once it is back",
				d->dc_name, what, ldap_err2string(rc));
	return pv_ldap_fail(dir->ld, rc, what, d);
}

static void result_message(char *buf, size_t len, const char *what, const char *dn, int rc,
			   const char *diag)
{
	snprintf(buf, len, "%s '%s': %s%s%s", what, dn, ldap_err2string(rc),
		 diag && *diag ? ": " : "", diag ? diag : "");
}

int pv_ldap_read(struct pv_ldap *dir, const char *dn, const char *attr, int *found, char **value)
{
	char *attrs[] = {(char *)attr, NULL};
	struct timeval tv = {.tv_sec = wait_seconds(dir)};
	struct berval **vals = NULL;
	LDAPMessage *res = NULL, *e;
	int rc, r = PV_OK;

	*found = 0;
	*value = NULL;
	rc = ldap_search_ext_s(dir->ld, dn, LDAP_SCOPE_BASE, "(objectClass=*)", attrs, 0, NULL,
			       NULL, &tv, 1, &res);
	if (rc == LDAP_NO_SUCH_OBJECT)
		goto out;
	if (rc != LDAP_SUCCESS) {
		r = lost(dir, rc, "reading", &dir->target);
		r = pv_error_prefix(r, "'%s'", dn);
		goto out;
	}
	e = ldap_first_entry(dir->ld, res);
	if (!e)
		goto out;
	*found = 1;
	vals = ldap_get_values_len(dir->ld, e, attr);
	if (vals && vals[0]) {
		*value = strndup(vals[0]->bv_val, vals[0]->bv_len);
		if (!*value)
			r = pv_error(PV_EIO, "out of memory");
	}
out:
	ldap_value_free_len(vals);
	ldap_msgfree(res);
	return r;
}

int pv_ldap_search(struct pv_ldap *dir, const char *base, const char *filter,
		   const char *const *attrs, int page_size, pv_ldap_entry_fn fn, void *ctx)
{
	struct timeval tv = {.tv_sec = wait_seconds(dir)};
	struct berval *cookie = NULL;
	size_t nattrs = 0;
	const char **vals = NULL;
	int r = PV_OK;

	while (attrs[nattrs])
		nattrs++;
	vals = calloc(nattrs + 1, sizeof(*vals));
	if (!vals)
		return pv_error(PV_EIO, "out of memory");
	for (;;) {
		LDAPControl *page = NULL, *ctrls[2] = {NULL, NULL}, **rctrls = NULL;
		LDAPMessage *res = NULL;
		int rc, err = LDAP_SUCCESS;
		ber_int_t estimate = 0;

		rc = ldap_create_page_control(dir->ld, page_size, cookie, 1, &page);
		if (rc != LDAP_SUCCESS) {
			r = lost(dir, rc, "paged search control", &dir->target);
			break;
		}
		ctrls[0] = page;
		rc = ldap_search_ext_s(dir->ld, base, LDAP_SCOPE_SUBTREE, filter, (char **)attrs, 0,
				       ctrls, NULL, &tv, 0, &res);
		ldap_control_free(page);
		if (rc == LDAP_NO_SUCH_OBJECT) { /* the base is not there: nothing below it */
			ldap_msgfree(res);
			break;
		}
		if (rc != LDAP_SUCCESS) {
			r = lost(dir, rc, "search", &dir->target);
			r = pv_error_prefix(r, "under '%s'", base);
			ldap_msgfree(res);
			break;
		}
		for (LDAPMessage *e = ldap_first_entry(dir->ld, res); e && r == PV_OK;
		     e = ldap_next_entry(dir->ld, e)) {
			char *dn = ldap_get_dn(dir->ld, e);
			struct berval **v[64] = {NULL};

			/* berval values are not NUL-terminated by contract: hand fn copies */
			for (size_t i = 0; i < nattrs && i < 64; i++) {
				v[i] = ldap_get_values_len(dir->ld, e, attrs[i]);
				vals[i] = v[i] && v[i][0]
						  ? strndup(v[i][0]->bv_val, v[i][0]->bv_len)
						  : NULL;
			}
			r = fn(dn ? dn : "", vals, ctx);
			for (size_t i = 0; i < nattrs && i < 64; i++) {
				ldap_value_free_len(v[i]);
				free((char *)vals[i]);
				vals[i] = NULL;
			}
			ldap_memfree(dn);
		}
		rc = ldap_parse_result(dir->ld, res, &err, NULL, NULL, NULL, &rctrls, 1);
		if (r != PV_OK) {
			ldap_controls_free(rctrls);
			break;
		}
		if (rc != LDAP_SUCCESS || err != LDAP_SUCCESS) {
			r = lost(dir, rc != LDAP_SUCCESS ? rc : err, "search", &dir->target);
			ldap_controls_free(rctrls);
			break;
		}
		ber_bvfree(cookie);
		cookie = NULL;
		LDAPControl *pr =
			rctrls ? ldap_control_find(LDAP_CONTROL_PAGEDRESULTS, rctrls, NULL) : NULL;
		if (pr) {
			struct berval c = {0, NULL};

			if (ldap_parse_pageresponse_control(dir->ld, pr, &estimate, &c) ==
				    LDAP_SUCCESS &&
			    c.bv_len > 0)
				cookie = ber_bvdup(&c);
			ber_memfree(c.bv_val);
		}
		ldap_controls_free(rctrls);
		if (!cookie)
			break;
	}
	ber_bvfree(cookie);
	free(vals);
	return r;
}

/* Wait up to seconds for the result of msgid, calling tick(arg) about once a second when tick
 * is set; returns the LDAP result code and the diagnostic (caller frees with ldap_memfree), or
 * -1 with a message recorded when the wait itself failed. */
static int wait_result(struct pv_ldap *dir, int msgid, int seconds, void (*tick)(void *), void *arg,
		       char **diag)
{
	time_t deadline = time(NULL) + seconds;
	LDAPMessage *res = NULL;
	int rc, err = LDAP_OTHER;

	for (;;) {
		struct timeval tv = {.tv_sec = tick ? 1 : seconds};

		rc = ldap_result(dir->ld, msgid, LDAP_MSG_ALL, &tv, &res);
		if (rc != 0 || !tick || time(NULL) >= deadline)
			break;
		tick(arg);
	}
	if (rc <= 0) {
		int e = LDAP_TIMEOUT;

		if (rc < 0)
			ldap_get_option(dir->ld, LDAP_OPT_RESULT_CODE, &e);
		lost(dir, e, "waiting for the DC", &dir->target);
		ldap_msgfree(res);
		return -1;
	}
	rc = ldap_parse_result(dir->ld, res, &err, NULL, diag, NULL, NULL, 1);
	if (rc != LDAP_SUCCESS) {
		lost(dir, rc, "reading the DC's answer", &dir->target);
		return -1;
	}
	return err;
}

/* The DC refused this one request (rc): REJECTED, the message recorded, PV_OK returned. */
static int reject_one(int rc, char *diag, const char *what, const char *dn,
		      enum pv_ldap_result *result)
{
	char msg[1024];

	result_message(msg, sizeof(msg), what, dn, rc, diag);
	ldap_memfree(diag);
	*result = PV_LDAP_REJECTED;
	pv_error(PV_OK, "%s", msg);
	return PV_OK;
}

static int finish_one(int rc, char *diag, const char *what, const char *dn, bool del,
		      enum pv_ldap_result *result)
{
	char msg[1024];

	*result = classify(rc, del);
	if (*result != PV_LDAP_DONE) {
		result_message(msg, sizeof(msg), what, dn, rc, diag);
		pv_error(*result == PV_LDAP_FATAL ? PV_EDIR : PV_OK, "%s", msg);
	}
	ldap_memfree(diag);
	return *result == PV_LDAP_FATAL ? PV_EDIR : PV_OK;
}

int pv_ldap_add(struct pv_ldap *dir, const char *dn, const struct pv_ldap_attr *attrs,
		size_t nattrs, enum pv_ldap_result *result)
{
	LDAPMod **mods = mods_new(attrs, nattrs, LDAP_MOD_ADD);
	char *diag = NULL;
	int msgid, rc;

	if (!mods)
		return pv_error(PV_EIO, "out of memory");
	rc = ldap_add_ext(dir->ld, dn, mods, NULL, NULL, &msgid);
	mods_free(mods);
	if (rc != LDAP_SUCCESS) {
		*result = PV_LDAP_FATAL;
		return pv_error_prefix(lost(dir, rc, "sending add", &dir->target), "'%s'", dn);
	}
	rc = wait_result(dir, msgid, wait_seconds(dir), NULL, NULL, &diag);
	if (rc < 0) {
		*result = PV_LDAP_FATAL;
		return PV_EDIR;
	}
	return finish_one(rc, diag, "adding", dn, false, result);
}

int pv_ldap_delete(struct pv_ldap *dir, const char *dn, enum pv_ldap_result *result)
{
	char *diag = NULL;
	int msgid, rc;

	rc = ldap_delete_ext(dir->ld, dn, NULL, NULL, &msgid);
	if (rc != LDAP_SUCCESS) {
		*result = PV_LDAP_FATAL;
		return pv_error_prefix(lost(dir, rc, "sending delete", &dir->target), "'%s'", dn);
	}
	rc = wait_result(dir, msgid, wait_seconds(dir), NULL, NULL, &diag);
	if (rc < 0) {
		*result = PV_LDAP_FATAL;
		return PV_EDIR;
	}
	return finish_one(rc, diag, "deleting", dn, true, result);
}

#define TREE_DELETE_OID "1.2.840.113556.1.4.805"

int pv_ldap_delete_tree(struct pv_ldap *dir, const char *dn, int budget, void (*tick)(void *),
			void *arg, enum pv_ldap_result *result)
{
	LDAPControl ctrl = {.ldctl_oid = (char *)TREE_DELETE_OID, .ldctl_iscritical = 1};
	LDAPControl *ctrls[] = {&ctrl, NULL};
	time_t deadline = time(NULL) + budget;

	for (;;) {
		char *diag = NULL;
		int msgid, rc, left = (int)(deadline - time(NULL));

		rc = ldap_delete_ext(dir->ld, dn, ctrls, NULL, &msgid);
		if (rc != LDAP_SUCCESS) {
			*result = PV_LDAP_FATAL;
			return pv_error_prefix(lost(dir, rc, "sending tree delete", &dir->target),
					       "'%s'", dn);
		}
		rc = wait_result(dir, msgid, left > 1 ? left : 1, tick, arg, &diag);
		if (rc < 0) {
			*result = PV_LDAP_FATAL;
			return pv_error_prefix(PV_EDIR, "tree delete of '%s' (%d s)", dn, budget);
		}
		if (rc == LDAP_ADMINLIMIT_EXCEEDED) { /* AD deletes a part per request */
			ldap_memfree(diag);
			continue;
		}
		if (rc == LDAP_UNAVAILABLE_CRITICAL_EXTENSION || rc == LDAP_UNWILLING_TO_PERFORM)
			return reject_one(rc, diag, "tree delete of", dn, result);
		return finish_one(rc, diag, "tree delete of", dn, true, result);
	}
}

/* ---- multi-valued attributes ---- */

void pv_ldap_values_free(char **values, size_t n)
{
	if (!values)
		return;
	for (size_t i = 0; i < n; i++)
		free(values[i]);
	free(values);
}

struct vlist {
	char **v;
	size_t n, cap;
};

static int vlist_add(struct vlist *l, const struct berval *bv)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 16;
		char **p = realloc(l->v, cap * sizeof(*p));

		if (!p)
			return -1;
		l->v = p;
		l->cap = cap;
	}
	if (!(l->v[l->n] = strndup(bv->bv_val, bv->bv_len)))
		return -1;
	l->n++;
	return 0;
}

int pv_ldap_read_values(struct pv_ldap *dir, const char *dn, const char *attr, int *found,
			char ***values, size_t *n)
{
	struct timeval tv = {.tv_sec = wait_seconds(dir)};
	struct vlist l = {NULL, 0, 0};
	struct pv_ldap_range rg = {0, 0, false, false};
	char want[256];
	int more = 1;
	int r = PV_OK;

	*found = 0;
	snprintf(want, sizeof(want), "%s", attr);
	while (more && r == PV_OK) {
		char *attrs[] = {want, NULL};
		LDAPMessage *res = NULL, *e;
		BerElement *ber = NULL;
		int rc;

		more = 0;
		pv_ldap_range_answer(&rg);
		rc = ldap_search_ext_s(dir->ld, dn, LDAP_SCOPE_BASE, "(objectClass=*)", attrs, 0,
				       NULL, NULL, &tv, 1, &res);
		if (rc == LDAP_NO_SUCH_OBJECT) {
			ldap_msgfree(res);
			break;
		}
		if (rc != LDAP_SUCCESS) {
			r = pv_error_prefix(lost(dir, rc, "reading", &dir->target), "'%s'", dn);
			ldap_msgfree(res);
			break;
		}
		if (!(e = ldap_first_entry(dir->ld, res))) {
			ldap_msgfree(res);
			break;
		}
		*found = 1;
		for (char *a = ldap_first_attribute(dir->ld, e, &ber); a && r == PV_OK;
		     a = ldap_next_attribute(dir->ld, e, ber)) {
			struct berval **bv = ldap_get_values_len(dir->ld, e, a);
			size_t nv = 0;
			int t;

			while (bv && bv[nv])
				nv++;
			if ((t = pv_ldap_range_take(&rg, a, attr, nv)) < 0)
				r = pv_error_prefix(PV_EDIR, "reading '%s' of '%s'", attr, dn);
			for (size_t i = 0; t == 1 && i < nv && r == PV_OK; i++)
				if (vlist_add(&l, bv[i]) < 0)
					r = pv_error(PV_EIO, "out of memory");
			ldap_value_free_len(bv);
			ldap_memfree(a);
		}
		ber_free(ber, 0);
		ldap_msgfree(res);
		if (r == PV_OK && (more = pv_ldap_range_next(&rg, attr, want, sizeof(want))) < 0)
			r = pv_error_prefix(PV_EDIR, "reading '%s' of '%s'", attr, dn);
	}
	if (r != PV_OK) {
		pv_ldap_values_free(l.v, l.n);
		*found = 0;
		return r;
	}
	*values = l.v;
	*n = l.n;
	return PV_OK;
}

int pv_ldap_modify_values(struct pv_ldap *dir, const char *dn, const char *attr,
			  enum pv_ldap_mod op, const char *const *values, size_t n,
			  enum pv_ldap_result *result)
{
	static const int ops[] = {LDAP_MOD_ADD, LDAP_MOD_DELETE, LDAP_MOD_REPLACE};
	struct pv_ldap_attr a = {attr, values, NULL, n};
	LDAPMod *empty[2] = {NULL, NULL}, blank, **mods = NULL;
	char *diag = NULL;
	int msgid, rc;

	if (n == 0 && op != PV_LDAP_MOD_REPLACE) {
		*result = PV_LDAP_DONE;
		return PV_OK;
	}
	if (n == 0) { /* replace with nothing: an LDAPMod with no values removes the attribute */
		memset(&blank, 0, sizeof(blank));
		blank.mod_op = LDAP_MOD_REPLACE | LDAP_MOD_BVALUES;
		blank.mod_type = (char *)attr;
		empty[0] = &blank;
		rc = ldap_modify_ext(dir->ld, dn, empty, NULL, NULL, &msgid);
	} else {
		if (!(mods = mods_new(&a, 1, ops[op])))
			return pv_error(PV_EIO, "out of memory");
		rc = ldap_modify_ext(dir->ld, dn, mods, NULL, NULL, &msgid);
		mods_free(mods);
	}
	if (rc != LDAP_SUCCESS) {
		*result = PV_LDAP_FATAL;
		return pv_error_prefix(lost(dir, rc, "sending modify", &dir->target), "'%s'", dn);
	}
	rc = wait_result(dir, msgid, wait_seconds(dir), NULL, NULL, &diag);
	if (rc < 0) {
		*result = PV_LDAP_FATAL;
		return PV_EDIR;
	}
	/* a value already present (add) or absent (delete) concerns this request only */
	if (rc == LDAP_NO_SUCH_ATTRIBUTE || rc == LDAP_TYPE_OR_VALUE_EXISTS ||
	    rc == LDAP_UNWILLING_TO_PERFORM)
		return reject_one(rc, diag, "modifying", dn, result);
	return finish_one(rc, diag, "modifying", dn, true, result);
}

/* ---- pipeline ---- */

enum op { OP_ADD, OP_DELETE, OP_REPLACE };

static const char *const op_verb[] = {"adding", "deleting", "modifying"};

struct slot {
	int msgid; /* 0: free */
	enum op op;
	void *tag;
	char *dn; /* for messages */
};

struct pv_ldap_pipe {
	struct pv_ldap *dir;
	struct slot *slots;
	int window, outstanding;
	pv_ldap_done_fn done;
	void *ctx;
	int stopped; /* code that stopped the pipeline, PV_OK while running */
};

int pv_ldap_pipe_new(struct pv_ldap *dir, int window, pv_ldap_done_fn done, void *ctx,
		     struct pv_ldap_pipe **out)
{
	struct pv_ldap_pipe *p = calloc(1, sizeof(*p));

	if (window < 1)
		window = 1;
	if (!p || !(p->slots = calloc((size_t)window, sizeof(*p->slots)))) {
		free(p);
		return pv_error(PV_EIO, "out of memory");
	}
	p->dir = dir;
	p->window = window;
	p->done = done;
	p->ctx = ctx;
	*out = p;
	return PV_OK;
}

/* Collect one result (waiting up to the DC timeout) and report it. */
static int collect_one(struct pv_ldap_pipe *p)
{
	struct timeval tv = {.tv_sec = wait_seconds(p->dir)};
	LDAPMessage *res = NULL;
	enum pv_ldap_result result;
	char *diag = NULL, msg[1024];
	struct slot *s = NULL;
	int rc, err = LDAP_OTHER, msgid;

	rc = ldap_result(p->dir->ld, LDAP_RES_ANY, LDAP_MSG_ONE, &tv, &res);
	if (rc <= 0) {
		int e = LDAP_TIMEOUT;

		if (rc < 0)
			ldap_get_option(p->dir->ld, LDAP_OPT_RESULT_CODE, &e);
		ldap_msgfree(res);
		p->stopped = lost(p->dir, e, "waiting for its answers", &p->dir->target);
		return p->stopped;
	}
	msgid = ldap_msgid(res);
	for (int i = 0; i < p->window; i++)
		if (p->slots[i].msgid == msgid)
			s = &p->slots[i];
	rc = ldap_parse_result(p->dir->ld, res, &err, NULL, &diag, NULL, NULL, 1);
	if (!s) { /* not ours (e.g. an unsolicited notice): ignore */
		ldap_memfree(diag);
		return PV_OK;
	}
	if (rc != LDAP_SUCCESS)
		err = rc;
	result = classify(err, s->op == OP_DELETE);
	msg[0] = '\0';
	if (result != PV_LDAP_DONE)
		result_message(msg, sizeof(msg), op_verb[s->op], s->dn, err, diag);
	ldap_memfree(diag);
	p->outstanding--;
	s->msgid = 0;
	free(s->dn);
	s->dn = NULL;
	if (p->done(s->tag, result, msg, p->ctx) != 0 && p->stopped == PV_OK)
		p->stopped = result == PV_LDAP_FATAL ? PV_EDIR : PV_EFAIL;
	if (result == PV_LDAP_FATAL && p->stopped == PV_OK)
		p->stopped = pv_error(PV_EDIR, "%s", msg);
	return p->stopped;
}

static int submit(struct pv_ldap_pipe *p, const char *dn, const struct pv_ldap_attr *attrs,
		  size_t nattrs, enum op op, void *tag)
{
	struct slot *s = NULL;
	LDAPMod **mods = NULL;
	int rc, msgid, r;

	if (p->stopped != PV_OK)
		return p->stopped;
	while (p->outstanding >= p->window)
		if ((r = collect_one(p)) != PV_OK)
			return r;
	for (int i = 0; i < p->window && !s; i++)
		if (p->slots[i].msgid == 0)
			s = &p->slots[i];
	if (!s)
		return pv_error(PV_EBUG, "LDAP pipeline has no free slot");
	if (!(s->dn = strdup(dn)))
		return pv_error(PV_EIO, "out of memory");
	if (op == OP_DELETE) {
		rc = ldap_delete_ext(p->dir->ld, dn, NULL, NULL, &msgid);
	} else {
		mods = mods_new(attrs, nattrs, op == OP_ADD ? LDAP_MOD_ADD : LDAP_MOD_REPLACE);
		if (!mods) {
			free(s->dn);
			s->dn = NULL;
			return pv_error(PV_EIO, "out of memory");
		}
		if (op == OP_ADD)
			rc = ldap_add_ext(p->dir->ld, dn, mods, NULL, NULL, &msgid);
		else
			rc = ldap_modify_ext(p->dir->ld, dn, mods, NULL, NULL, &msgid);
		mods_free(mods);
	}
	if (rc != LDAP_SUCCESS) {
		free(s->dn);
		s->dn = NULL;
		p->stopped = lost(p->dir, rc, "sending a request", &p->dir->target);
		return p->stopped;
	}
	s->msgid = msgid;
	s->op = op;
	s->tag = tag;
	p->outstanding++;
	return PV_OK;
}

int pv_ldap_pipe_add(struct pv_ldap_pipe *p, const char *dn, const struct pv_ldap_attr *attrs,
		     size_t nattrs, void *tag)
{
	return submit(p, dn, attrs, nattrs, OP_ADD, tag);
}

int pv_ldap_pipe_replace(struct pv_ldap_pipe *p, const char *dn, const struct pv_ldap_attr *attrs,
			 size_t nattrs, void *tag)
{
	return submit(p, dn, attrs, nattrs, OP_REPLACE, tag);
}

int pv_ldap_pipe_delete(struct pv_ldap_pipe *p, const char *dn, void *tag)
{
	return submit(p, dn, NULL, 0, OP_DELETE, tag);
}

int pv_ldap_pipe_drain(struct pv_ldap_pipe *p)
{
	int r;

	while (p->outstanding > 0 && p->stopped == PV_OK)
		if ((r = collect_one(p)) != PV_OK)
			return r;
	return p->stopped;
}

void pv_ldap_pipe_free(struct pv_ldap_pipe *p)
{
	if (!p)
		return;
	for (int i = 0; i < p->window; i++) {
		if (p->slots[i].msgid)
			ldap_abandon_ext(p->dir->ld, p->slots[i].msgid, NULL, NULL);
		free(p->slots[i].dn);
	}
	free(p->slots);
	free(p);
}
