/* samba/samba.c: running scripts on the Samba server, its service command, the probe and its
 * facts, the admin's ticket there, and the computer account (see samba.h). */
#include "samba/samba.h"

#include "ldap/encode.h"
#include "ldap/ops.h"
#include "remote/quote.h"
#include "remote/remote.h"
#include "util/err.h"
#include "util/log.h"
#include "util/strset.h"

#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

extern const char pv_samba_probe_sh[];
extern const char pv_samba_as_admin_sh[];
extern const char pv_samba_version_sh[];
extern const char pv_samba_config_sh[];

int pv_samba_run_text(struct pv_remote *rem, const char *what, const char *script, const void *in,
		      size_t inlen, struct pv_buf *out, int *status, int timeout)
{
	struct pv_buf b = PV_BUF_INIT;
	int r;

	pv_buf_addstr(&b, script);
	r = pv_remote_sh(rem, what, &b, in, inlen, out, status, timeout);
	pv_buf_release(&b, 0);
	return r;
}

int pv_samba_as_admin(struct pv_remote *rem, const char *princ, const struct pv_secret *admin,
		      const char *what, const struct pv_buf *body, int *status, int timeout)
{
	struct pv_buf s = PV_BUF_INIT;
	int r;

	pv_remote_var(&s, "princ", princ);
	pv_buf_addstr(&s, pv_samba_as_admin_sh);
	if (pv_buf_failed(body))
		s.failed = true;
	else
		pv_buf_add(&s, body->data ? body->data : "", body->len);
	r = pv_remote_sh(rem, what, &s, admin->data, admin->len, NULL, status, timeout);
	pv_buf_release(&s, 0);
	return r;
}

/* The systemd units a service may be under: Debian and Ubuntu say smbd and winbind, RHEL and
 * SUSE smb and winbind. */
static const char *units_of(const char *service)
{
	return !strcmp(service, "winbindd") ? "winbind winbindd"
	       : !strcmp(service, "smbd")   ? "smbd smb"
					    : service;
}

int pv_samba_service_script(const char *tmpl, const char *action, const char *service,
			    struct pv_buf *out)
{
	if (strstr(tmpl, "{unit}")) {
		pv_buf_addf(
			out,
			"unit=\n"
			"for u in %s; do\n"
			"\tif systemctl cat \"$u.service\" >/dev/null 2>&1; then unit=$u; break; "
			"fi\n"
			"done\n"
			"if [ -z \"$unit\" ]; then\n"
			"\techo \"no systemd unit for %s here (tried: %s): set server.service to "
			"the command that starts and stops it\" >&2\n"
			"\texit 1\n"
			"fi\n",
			units_of(service), service, units_of(service));
	}
	for (const char *p = tmpl; *p;) {
		if (strncmp(p, "{action}", 8) == 0) {
			pv_buf_addstr(out, action);
			p += 8;
		} else if (strncmp(p, "{service}", 9) == 0) {
			pv_buf_addstr(out, service);
			p += 9;
		} else if (strncmp(p, "{unit}", 6) == 0) {
			pv_buf_addstr(out, "\"$unit\"");
			p += 6;
		} else {
			pv_buf_add(out, p++, 1);
		}
	}
	pv_buf_addstr(out, "\n");
	return pv_buf_failed(out) ? pv_error(PV_EIO, "out of memory") : PV_OK;
}

int pv_samba_service(struct pv_remote *rem, const char *tmpl, const char *action,
		     const char *service)
{
	struct pv_buf cmd = PV_BUF_INIT, out = PV_BUF_INIT;
	char what[128];
	int r;

	if ((r = pv_samba_service_script(tmpl, action, service, &cmd)) != PV_OK)
		goto out;
	snprintf(what, sizeof(what), "'%s %s' (server.service)", action, service);
	r = pv_remote_sh(rem, what, &cmd, NULL, 0, &out, NULL, 120);
	if (r == PV_OK) {
		pv_remote_reason(out.data, what, sizeof(what));
		pv_log(PV_LOG_DEBUG, "%s: %s %s: %s", pv_remote_name(rem), action, service, what);
	}
out:
	pv_buf_release(&cmd, 0);
	pv_buf_release(&out, 0);
	return r;
}

/* ---- the probe ---- */

static int add_share(struct pv_samba_facts *f, const char *line, size_t len)
{
	const char *p = line, *end = line + len;
	char *field[4] = {NULL, NULL, NULL, NULL};
	struct pv_samba_share *n;
	int k = 0;

	while (k < 4) {
		const char *us = memchr(p, '\037', (size_t)(end - p));
		size_t l = us ? (size_t)(us - p) : (size_t)(end - p);

		if (!(field[k++] = strndup(p, l)))
			goto oom;
		if (!us)
			break;
		p = us + 1;
	}
	if (k != 4) { /* not a share line after all: ignore it */
		for (int i = 0; i < k; i++)
			free(field[i]);
		return PV_OK;
	}
	if (!(n = realloc(f->shares, (f->nshares + 1) * sizeof(*n))))
		goto oom;
	f->shares = n;
	f->shares[f->nshares++] =
		(struct pv_samba_share){field[0], field[1], field[2], strcmp(field[3], "1") == 0};
	free(field[3]);
	return PV_OK;
oom:
	for (int i = 0; i < 4; i++)
		free(field[i]);
	return pv_error(PV_EIO, "out of memory");
}

static void copy(char *out, size_t outlen, const char *v, size_t vlen)
{
	snprintf(out, outlen, "%.*s", (int)vlen, v);
}

static enum pv_samba_kmethod kmethod(const char *v, size_t len)
{
	static const struct {
		const char *name;
		enum pv_samba_kmethod m;
	} names[] = {
		{"secrets only", PV_SAMBA_KMETHOD_SECRETS_ONLY},
		{"system keytab", PV_SAMBA_KMETHOD_SYSTEM_KEYTAB},
		{"dedicated keytab", PV_SAMBA_KMETHOD_DEDICATED_KEYTAB},
		{"secrets and keytab", PV_SAMBA_KMETHOD_SECRETS_AND_KEYTAB},
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strlen(names[i].name) == len && strncasecmp(v, names[i].name, len) == 0)
			return names[i].m;
	return PV_SAMBA_KMETHOD_SECRETS_ONLY; /* Samba's default ('default' is secrets only) */
}

int pv_samba_parse_facts(const char *text, struct pv_samba_facts *f)
{
	char ktfile[512] = "";

	for (const char *p = text; p && *p;) {
		const char *nl = strchr(p, '\n'), *eq;
		size_t n = nl ? (size_t)(nl - p) : strlen(p), klen, vlen;
		const char *v;
		char num[32];

		eq = memchr(p, '=', n);
		if (!eq)
			goto next;
		klen = (size_t)(eq - p);
		v = eq + 1;
		vlen = n - klen - 1;
		copy(num, sizeof(num), v, vlen);
#define KEY(k) (klen == strlen(k) && strncmp(p, k, klen) == 0)
		if (KEY("netbios"))
			copy(f->netbios, sizeof(f->netbios), v, vlen);
		else if (KEY("realm"))
			copy(f->realm, sizeof(f->realm), v, vlen);
		else if (KEY("security"))
			copy(f->security, sizeof(f->security), v, vlen);
		else if (KEY("info"))
			copy(f->info, sizeof(f->info), v, vlen);
		else if (KEY("kmethod"))
			f->kmethod = kmethod(v, vlen);
		else if (KEY("ktfile"))
			copy(ktfile, sizeof(ktfile), v, vlen);
		else if (KEY("offset")) {
			f->has_offset = vlen > 0;
			f->offset = strtol(num, NULL, 10);
		} else if (KEY("joined"))
			f->joined = vlen == 1 && v[0] == '1';
		else if (KEY("sep"))
			copy(f->sep, sizeof(f->sep), v, vlen);
		else if (KEY("dc"))
			copy(f->dc, sizeof(f->dc), v, vlen);
		else if (KEY("keytab"))
			f->keytab_entries = strtol(num, NULL, 10);
		else if (KEY("cores"))
			f->cores = (unsigned)strtoul(num, NULL, 10);
		else if (KEY("smbd"))
			f->smbd_running = vlen == 1 && v[0] == '1';
		else if (KEY("winbindd"))
			f->winbindd_running = vlen == 1 && v[0] == '1';
		else if (KEY("share")) {
			if (add_share(f, v, vlen) != PV_OK)
				return PV_EIO;
		} else if (KEY("kt")) {
			char princ[512], *at;

			copy(princ, sizeof(princ), v, vlen);
			if ((at = strrchr(princ, '@')))
				*at = '\0';
			if (!f->principals && !(f->principals = pv_strset_new()))
				return pv_error(PV_EIO, "out of memory");
			if (*princ && pv_strset_add(f->principals, princ) < 0)
				return pv_error(PV_EIO, "out of memory");
		} else if (KEY("ktlisted"))
			f->keytab_listed = true;
		else if (KEY("statedir"))
			copy(f->state_dir, sizeof(f->state_dir), v, vlen);
		else if (KEY("joinmark"))
			f->join_mark = vlen == 1 && v[0] == '1';
#undef KEY
	next:
		p = nl ? nl + 1 : NULL;
	}
	f->needs_keytab = f->kmethod != PV_SAMBA_KMETHOD_SECRETS_ONLY;
	if (f->kmethod == PV_SAMBA_KMETHOD_DEDICATED_KEYTAB)
		snprintf(f->keytab, sizeof(f->keytab), "%s", ktfile);
	if (f->keytab_listed && !f->principals && !(f->principals = pv_strset_new()))
		return pv_error(PV_EIO, "out of memory");
	for (char *c = f->netbios; *c; c++)
		*c = (char)toupper((unsigned char)*c);
	return PV_OK;
}

int pv_samba_probe(struct pv_remote *rem, enum pv_samba_probe_how how, const char *lab,
		   struct pv_samba_facts *f)
{
	struct pv_buf out = PV_BUF_INIT, sc = PV_BUF_INIT;
	int r;

	memset(f, 0, sizeof(*f));
	pv_buf_addf(&sc, "full=%d\nquick=%d\n", how == PV_SAMBA_PROBE_CLOCK,
		    how == PV_SAMBA_PROBE_QUICK);
	pv_remote_var(&sc, "lab", lab);
	pv_buf_addstr(&sc, pv_samba_probe_sh);
	r = pv_remote_sh(rem, "probing Samba", &sc, NULL, 0, &out, NULL, 60);
	pv_buf_release(&sc, 0);
	if (r == PV_OK)
		r = pv_samba_parse_facts(out.data ? out.data : "", f);
	if (r == PV_OK && !f->netbios[0])
		r = pv_error(PV_EREMOTE,
			     "'%s' has no usable smb.conf ('testparm' found no netbios "
			     "name)",
			     pv_remote_name(rem));
	pv_buf_release(&out, 0);
	return r;
}

void pv_samba_facts_release(struct pv_samba_facts *f)
{
	for (size_t i = 0; i < f->nshares; i++) {
		free(f->shares[i].name);
		free(f->shares[i].comment);
		free(f->shares[i].path);
	}
	free(f->shares);
	f->shares = NULL;
	f->nshares = 0;
	pv_strset_free(f->principals);
	f->principals = NULL;
}

const struct pv_samba_share *pv_samba_share(const struct pv_samba_facts *f, const char *name)
{
	for (size_t i = 0; i < f->nshares; i++)
		if (strcasecmp(f->shares[i].name, name) == 0)
			return &f->shares[i];
	return NULL;
}

/* ---- the computer account ---- */

struct account_find {
	char *dn, *desc;
};

static int take_account(const char *dn, const char *const *vals, void *arg)
{
	struct account_find *a = arg;

	if (a->dn)
		return PV_OK;
	a->dn = strdup(dn);
	a->desc = vals[0] ? strdup(vals[0]) : NULL;
	if (!a->dn || (vals[0] && !a->desc))
		return pv_error(PV_EIO, "out of memory");
	return PV_OK;
}

void pv_samba_version(struct pv_remote *rem, char *out, size_t len)
{
	struct pv_buf text = PV_BUF_INIT;
	int status = 0;

	out[0] = '\0';
	if (pv_remote_exec(rem, pv_samba_version_sh, NULL, 0, &text, NULL, &status, 0) == PV_OK &&
	    text.data) {
		for (char *c = text.data; *c; c++)
			if (*c == '\n' && c[1])
				*c = ';';
		snprintf(out, len, "%.*s", (int)strcspn(text.data, "\n"), text.data);
	}
	pv_buf_release(&text, 0);
}

int pv_samba_dgram_qlen(struct pv_remote *rem)
{
	struct pv_buf text = PV_BUF_INIT;
	int status = 0, v = -1;
	char *end;
	long n;

	if (pv_remote_exec_max(rem, "cat /proc/sys/net/unix/max_dgram_qlen", &text, 64, NULL,
			       &status, 0) == PV_OK &&
	    status == 0 && text.data) {
		n = strtol(text.data, &end, 10);
		if (end != text.data && (*end == '\n' || *end == '\0') && n >= 0 && n <= INT_MAX)
			v = (int)n;
	}
	pv_buf_release(&text, 0);
	return v;
}

char *pv_samba_config(struct pv_remote *rem)
{
	struct pv_buf text = PV_BUF_INIT;
	char *out = NULL;
	int status = 0;

	if (pv_remote_exec(rem, pv_samba_config_sh, NULL, 0, &text, NULL, &status, 0) == PV_OK &&
	    status == 0 && text.len && !pv_buf_failed(&text)) {
		if (text.len > PV_SAMBA_CONFIG_MAX)
			text.data[text.len = PV_SAMBA_CONFIG_MAX] = '\0';
		out = pv_buf_detach(&text);
	}
	pv_buf_release(&text, 0);
	return out;
}

int pv_samba_account(struct pv_ldap *dir, const char *base_dn, const char *netbios, char **dn,
		     char **desc)
{
	struct pv_buf filter = PV_BUF_INIT, sam = PV_BUF_INIT;
	struct account_find a = {NULL, NULL};
	const char *attrs[] = {"description", NULL};
	int r;

	*dn = *desc = NULL;
	pv_buf_addf(&sam, "%s$", netbios);
	pv_buf_addstr(&filter, "(&(objectClass=computer)(sAMAccountName=");
	if (pv_buf_failed(&sam) || pv_ldap_filter_escape(&filter, sam.data) < 0 ||
	    pv_buf_addstr(&filter, "))") < 0) {
		r = pv_error(PV_EIO, "out of memory");
		goto out;
	}
	r = pv_ldap_search(dir, base_dn, filter.data, attrs, 100, take_account, &a);
	if (r == PV_OK) {
		*dn = a.dn;
		*desc = a.desc;
		a.dn = a.desc = NULL;
	}
out:
	free(a.dn);
	free(a.desc);
	pv_buf_release(&filter, 0);
	pv_buf_release(&sam, 0);
	return r;
}
