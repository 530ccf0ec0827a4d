/* playbooks/playbook.c: the playbook schema: node tree -> validated struct pv_playbook.
 *
 * Each section is read by one function that first checks the mapping's keys (unknown,
 * duplicate), then reads each key with a typed getter that names the exact node on failure.
 * Processing stops at the first error; everything already filled in is freed by
 * pv_playbook_free(), so no error path frees by hand. */
#include "playbooks/playbook.h"

#include "playbooks/inventory.h"
#include "playbooks/names.h"
#include "playbooks/tree.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/file.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#define PLAYBOOK_MAX (16u << 20) /* a playbook larger than this is surely not one */

#define DEFAULT_LAB	       "provision"
#define DEFAULT_SSH_USER       "root"
#define DEFAULT_ADMIN	       "Administrator"
#define DEFAULT_USER_TEMPLATE  "{client}-u{n}"
#define DEFAULT_ALIAS_TEMPLATE "{server}u{n}"
#define DEFAULT_SHARE_TEMPLATE "fsroot{k}"
#define DEFAULT_SHARE_PATH     "/srv/provision"
#define DEFAULT_SERVICE	       "systemctl {action} {service}"
#define DEFAULT_DRIVER	       "command"
#define DEFAULT_METRIC	       "req_queue"

static const char *const top_keys[] = {"lab",	 "ssh",	    "domain",	  "users",
				       "server", "clients", "controller", "driver",
				       "drain",	 "load",    "fanout",	  NULL};
static const char *const ssh_keys[] = {"user",	     "port",	"identity", "known_hosts",
				       "accept_new", "timeout", NULL};
static const char *const domain_keys[] = {"realm",
					  "netbios",
					  "dns_domain",
					  "base_dn",
					  "dc",
					  "dc_address",
					  "transport",
					  "ca_file",
					  "timeout",
					  "admin",
					  "admin_password",
					  "other_dcs",
					  "replication_timeout",
					  "ssh",
					  NULL};
static const char *const dc_ref_keys[] = {"name", "address", NULL};
static const char *const users_keys[] = {"per_client", "name_template", "ou", "password", NULL};
static const char *const server_keys[] = {
	"name",		  "address",	"ssh",	   "alias_template", "shares",
	"share_template", "share_path", "fileset", "service",	     "alias_spns",
	"smb_encrypt",	  "kind",	NULL};
const char *const pv_server_kinds[] = {"samba", "windows", "nas", NULL};
/* Samba's words for a share's "smb encrypt" (smb.conf(5), 4.17: "if_required" is its
 * default) */
static const char *const smb_encrypts[] = {"off", "if_required", "desired", "required", NULL};
static const char *const client_keys[] = {"name", "address", "os", "ssh", NULL};
static const char *const inventory_keys[] = {"inventory", "group", "hosts", NULL};
static const char *const override_keys[] = {"address", "os", "ssh", NULL};
static const char *const controller_keys[] = {"results", "host", NULL};
static const char *const chost_keys[] = {"name", "address", "ssh", NULL};
static const char *const driver_keys[] = {"name",      "client_command", "controller_command",
					  "min_users", "max_users",	 "step",
					  "duration",  "warmup",	 "timeout",
					  "watch",     "fsct",		 "refine",
					  NULL};
static const char *const fsct_keys[] = {"path", "workload", NULL};
static const char *const drivers[] = {"command", "fsct", "builtin", NULL};
static const char *const drain_keys[] = {"probe",     "command",       "metric",
					 "threshold", "interval",      "settle",
					 "timeout",   "between_steps", NULL};
static const char *const load_keys[] = {"rate",		  "scenarios", "late", "overload",
					"interval",	  "seed",      "auth", "encryption",
					"keep_logged_on", "threads",   NULL};
static const char *const load_auths[] = {"ntlm", "kerberos", NULL};
static const char *const scenario_keys[] = {"weight", "limit", NULL};
static const char *const probes[] = {"command", "writeback", "inflight", "smb", NULL};
static const char *const secret_keys[] = {"file", "env", "stdin", "prompt", NULL};
static const char *const transports[] = {"ldaps", "starttls", "gssapi", NULL};
static const char *const oses[] = {"linux", "windows", NULL};

#define SECRET_FORMS "{file: PATH}, {env: NAME}, {stdin: true} or {prompt: true}"
#define NOT_A_NAME                                                                                 \
	"'%s' is not a variable name (not repeated here: it may be a password); expected a "       \
	"name of letters, digits and '_', not starting with a digit"

struct ctx {
	const char *name;	/* file name in messages */
	const char *const *ovr; /* overrides, for messages about nodes they made */
	bool redact;		/* hide the override's value in the next message */
	struct pv_playbook *pb;
	struct pv_ssh ssh; /* top-level ssh: the defaults every host starts from */
	const struct pv_node *name_template, *alias_template, *share_template, *server_name;
	const struct pv_node **client_at; /* where each client is named (nclients) */
};

/* ---- messages ---------------------------------------------------------------------------- */

static int oom(void)
{
	return pv_error(PV_EIO, "out of memory");
}

/* "command line: option 'K=V'", the value hidden when it may be a password. */
static void option_name(const char *o, bool redact, char *buf, size_t sz)
{
	const char *eq = strchr(o, '=');
	size_t kl = eq ? (size_t)(eq - o) : strlen(o);

	if (eq && (redact || memmem(o, kl, "pass", 4) || memmem(o, kl, "secret", 6)))
		snprintf(buf, sz, "command line: option '%.*s=<hidden>'", (int)kl, o);
	else
		snprintf(buf, sz, "command line: option '%s'", o);
}

/* Where a node came from: "FILE:LINE:COL" or the override that made it. */
static void where(const struct ctx *c, const struct pv_node *at, char *buf, size_t sz)
{
	if (!at)
		snprintf(buf, sz, "%s", c->name);
	else if (at->origin < 0)
		snprintf(buf, sz, "%s:%d:%d", c->name, at->line, at->col);
	else
		option_name(c->ovr[at->origin], c->redact, buf, sz);
}

static int fail(struct ctx *c, const struct pv_node *at, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(struct ctx *c, const struct pv_node *at, const char *fmt, ...)
{
	char loc[512], msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	where(c, at, loc, sizeof(loc));
	return pv_error(PV_ECONFIG, "%s: %s", loc, msg);
}

/* Put the location (and the key path, when given) in front of the message a helper
 * (names.c) just recorded, and a hint after it. */
static int fail_recorded(struct ctx *c, const struct pv_node *at, const char *path,
			 const char *hint)
{
	char loc[512], msg[1024];

	where(c, at, loc, sizeof(loc));
	snprintf(msg, sizeof(msg), "%s", pv_errmsg());
	return pv_error(PV_ECONFIG, "%s: %s%s%s%s%s", loc, path ? "'" : "", path ? path : "",
			path ? "': " : "", msg, hint ? hint : "");
}

static const char *kind_name(const struct pv_node *n)
{
	if (n->kind == PV_NODE_MAPPING)
		return "a mapping";
	if (n->kind == PV_NODE_SEQUENCE)
		return "a sequence";
	return pv_tree_is_null(n) ? "empty" : "a string";
}

/* Optimal string alignment distance (edits and adjacent swaps), capped for short keys. */
static size_t distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), d[33][33];

	if (la > 32 || lb > 32)
		return 99;
	for (size_t i = 0; i <= la; i++)
		d[i][0] = i;
	for (size_t j = 0; j <= lb; j++)
		d[0][j] = j;
	for (size_t i = 1; i <= la; i++) {
		for (size_t j = 1; j <= lb; j++) {
			size_t cost = a[i - 1] != b[j - 1], v = d[i - 1][j - 1] + cost;

			if (d[i - 1][j] + 1 < v)
				v = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < v)
				v = d[i][j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    d[i - 2][j - 2] + 1 < v)
				v = d[i - 2][j - 2] + 1;
			d[i][j] = v;
		}
	}
	return d[la][lb];
}

/* " (did you mean 'x'?)" for the closest word within 2 edits, else "". */
static void suggest(const char *word, const char *const *words, char *buf, size_t sz)
{
	size_t best = 3, d;
	const char *pick = NULL;

	for (size_t i = 0; words[i]; i++) {
		d = distance(word, words[i]);
		if (d < best) {
			best = d;
			pick = words[i];
		}
	}
	if (pick)
		snprintf(buf, sz, " (did you mean '%s'?)", pick);
	else
		buf[0] = '\0';
}

static void join_words(const char *const *words, char *buf, size_t sz)
{
	size_t used = 0;

	buf[0] = '\0';
	for (size_t i = 0; words[i] && used < sz; i++) {
		int w = snprintf(buf + used, sz - used, "%s%s", i ? ", " : "", words[i]);

		if (w < 0)
			return;
		used += (size_t)w;
	}
}

static void key_path(char *buf, size_t sz, const char *parent, const char *key)
{
	if (parent && *parent)
		snprintf(buf, sz, "%s.%s", parent, key);
	else
		snprintf(buf, sz, "%s", key);
}

static char *dir_of(const char *path);

/* ---- typed getters ------------------------------------------------------------------------ */

/* map is a mapping whose keys are all in keys[], each once. path "" is the top level. */
static int check_map(struct ctx *c, const struct pv_node *map, const char *path,
		     const char *const *keys, const char *expect)
{
	char list[256], hint[64], in[160];

	if (map->kind != PV_NODE_MAPPING) {
		if (!*path)
			return fail(c, map, "the playbook is %s; expected a mapping of settings",
				    kind_name(map));
		return fail(c, map, "'%s' is %s; expected %s", path, kind_name(map), expect);
	}
	if (*path)
		snprintf(in, sizeof(in), "in '%s'", path);
	else
		snprintf(in, sizeof(in), "at top level");
	for (size_t i = 0; i < map->n; i++) {
		const struct pv_node *k = map->keys[i];
		bool known = false;

		for (size_t j = 0; keys[j] && !known; j++)
			known = !strcmp(keys[j], k->text);
		if (!known) {
			suggest(k->text, keys, hint, sizeof(hint));
			join_words(keys, list, sizeof(list));
			return fail(c, k, "unknown key '%s' %s%s; expected one of: %s", k->text, in,
				    hint, list);
		}
		for (size_t j = 0; j < i; j++) {
			if (strcmp(map->keys[j]->text, k->text))
				continue;
			if (map->keys[j]->origin < 0)
				return fail(c, k,
					    "duplicate key '%s' %s (first at line %d); "
					    "expected each key once",
					    k->text, in, map->keys[j]->line);
			return fail(c, k, "duplicate key '%s' %s; expected each key once", k->text,
				    in);
		}
	}
	return 0;
}

/* The text of a scalar with a value; anything else is an error naming path and expect. */
static int text_of(struct ctx *c, const struct pv_node *v, const char *path, const char *expect,
		   const char **out)
{
	if (v->kind != PV_NODE_SCALAR)
		return fail(c, v, "'%s' is %s; expected %s", path, kind_name(v), expect);
	if (pv_tree_is_null(v))
		return fail(c, v, "'%s' has no value; expected %s", path, expect);
	if (!v->text[0])
		return fail(c, v, "'%s' is empty; expected %s", path, expect);
	*out = v->text;
	return 0;
}

/* A present key as text: *out NULL when absent. */
static int get_text(struct ctx *c, const struct pv_node *map, const char *parent, const char *key,
		    const char *expect, const char **out, const struct pv_node **at)
{
	const struct pv_node *v = pv_tree_get(map, key);
	char path[256];

	*out = NULL;
	if (at)
		*at = v;
	if (!v)
		return 0;
	key_path(path, sizeof(path), parent, key);
	return text_of(c, v, path, expect, out);
}

static int set_str(char **dst, const char *s)
{
	char *d = strdup(s);

	if (!d)
		return oom();
	free(*dst);
	*dst = d;
	return 0;
}

/* A string key: *dst replaced when present, kept (a default or NULL) when absent. */
static int get_str(struct ctx *c, const struct pv_node *map, const char *parent, const char *key,
		   const char *expect, char **dst, const struct pv_node **at)
{
	const char *s;
	int r;

	if ((r = get_text(c, map, parent, key, expect, &s, at)) || !s)
		return r;
	return set_str(dst, s);
}

static int get_long(struct ctx *c, const struct pv_node *map, const char *parent, const char *key,
		    long lo, long hi, long *dst, const struct pv_node **at)
{
	const struct pv_node *v;
	char expect[64], path[256], *end;
	const char *s;
	long val;
	int r;

	snprintf(expect, sizeof(expect), "an integer from %ld to %ld", lo, hi);
	if ((r = get_text(c, map, parent, key, expect, &s, &v)) || !s)
		return r;
	if (at)
		*at = v;
	key_path(path, sizeof(path), parent, key);
	errno = 0;
	val = strtol(s, &end, 10);
	if (*end || end == s || isspace((unsigned char)*s))
		return fail(c, v, "'%s' is '%.64s', not an integer; expected %s", path, s, expect);
	if (errno == ERANGE || val < lo || val > hi)
		return fail(c, v, "'%s' is %.64s, out of range; expected %s", path, s, expect);
	*dst = val;
	return 0;
}

static int get_int(struct ctx *c, const struct pv_node *map, const char *parent, const char *key,
		   int lo, int hi, int *dst)
{
	long v = *dst;
	int r = get_long(c, map, parent, key, lo, hi, &v, NULL);

	if (!r)
		*dst = (int)v;
	return r;
}

static int get_uint(struct ctx *c, const struct pv_node *map, const char *parent, const char *key,
		    unsigned lo, unsigned hi, unsigned *dst, const struct pv_node **at)
{
	long v = *dst;
	int r = get_long(c, map, parent, key, lo, hi, &v, at);

	if (!r)
		*dst = (unsigned)v;
	return r;
}

/* A number: decimal digits with at most one '.' (0.5, 2, 1.25; no sign, exponent or hex). */
static int get_number(struct ctx *c, const struct pv_node *map, const char *parent, const char *key,
		      double lo, double hi, double *dst)
{
	const struct pv_node *v;
	char expect[96], path[256];
	const char *s;
	size_t digits, dots;
	double val;
	int r;

	snprintf(expect, sizeof(expect), "a number from %g to %g such as 1.5", lo, hi);
	if ((r = get_text(c, map, parent, key, expect, &s, &v)) || !s)
		return r;
	key_path(path, sizeof(path), parent, key);
	digits = strspn(s, "0123456789.");
	dots = 0;
	for (const char *p = s; *p; p++)
		dots += *p == '.';
	if (s[digits] || dots > 1 || !strpbrk(s, "0123456789"))
		return fail(c, v, "'%s' is '%.64s', not a number; expected %s", path, s, expect);
	val = strtod(s, NULL);
	if (!(val >= lo && val <= hi))
		return fail(c, v, "'%s' is %.64s, out of range; expected %s", path, s, expect);
	*dst = val;
	return 0;
}

static int parse_bool(const char *s, bool *out)
{
	if (!strcasecmp(s, "true") || !strcasecmp(s, "yes"))
		*out = true;
	else if (!strcasecmp(s, "false") || !strcasecmp(s, "no"))
		*out = false;
	else
		return -1;
	return 0;
}

static int get_bool(struct ctx *c, const struct pv_node *map, const char *parent, const char *key,
		    bool *dst)
{
	const struct pv_node *v;
	const char *expect = "true or false (yes or no)", *s;
	char path[256];
	int r;

	if ((r = get_text(c, map, parent, key, expect, &s, &v)) || !s)
		return r;
	key_path(path, sizeof(path), parent, key);
	if (parse_bool(s, dst))
		return fail(c, v, "'%s' is '%.64s'; expected %s", path, s, expect);
	return 0;
}

static int get_enum(struct ctx *c, const struct pv_node *map, const char *parent, const char *key,
		    const char *const *names, int *dst)
{
	const struct pv_node *v;
	char expect[128], path[256], hint[64];
	const char *s;
	int r;

	snprintf(expect, sizeof(expect), "one of: ");
	join_words(names, expect + strlen(expect), sizeof(expect) - strlen(expect));
	if ((r = get_text(c, map, parent, key, expect, &s, &v)) || !s)
		return r;
	for (int i = 0; names[i]; i++) {
		if (!strcmp(names[i], s)) {
			*dst = i;
			return 0;
		}
	}
	key_path(path, sizeof(path), parent, key);
	suggest(s, names, hint, sizeof(hint));
	return fail(c, v, "'%s' is '%.64s'%s; expected %s", path, s, hint, expect);
}

static int require(struct ctx *c, const struct pv_node *map, const char *parent, const char *key,
		   const char *form)
{
	if (pv_tree_get(map, key))
		return 0;
	if (*parent)
		return fail(c, map, "missing required key '%s' in '%s'; expected %s: %s", key,
			    parent, key, form);
	return fail(c, map, "missing required key '%s' at top level; expected %s: %s", key, key,
		    form);
}

/* ---- paths -------------------------------------------------------------------------------- */

static const char *home(void)
{
	const char *h = getenv("HOME");
	const struct passwd *pw;

	if (h && *h)
		return h;
	pw = getpwuid(getuid());
	return pw && pw->pw_dir ? pw->pw_dir : "/";
}

/* p made absolute: "~/x" under $HOME, a relative path under the playbook's folder. */
static char *resolve(const char *dir, const char *p)
{
	char *out;

	if (p[0] == '/')
		return strdup(p);
	if (p[0] == '~' && (p[1] == '/' || !p[1]))
		return asprintf(&out, "%s%s", home(), p + 1) < 0 ? NULL : out;
	while (p[0] == '.' && p[1] == '/')
		p += 2;
	return asprintf(&out, "%s/%s", dir, p) < 0 ? NULL : out;
}

static int get_path(struct ctx *c, const struct pv_node *map, const char *parent, const char *key,
		    char **dst)
{
	const struct pv_node *v;
	const char *s;
	char *abs, cwd[PATH_MAX] = "";
	int r;

	if ((r = get_text(c, map, parent, key, "a file path", &s, &v)) || !s)
		return r;
	/* a path typed on the command line means what it means in the shell it was typed in */
	if (v->origin >= 0 && s[0] != '/' && s[0] != '~' && !getcwd(cwd, sizeof(cwd)))
		return pv_error(PV_EIO, "cannot find the current folder: %s", strerror(errno));
	if (!(abs = resolve(v->origin >= 0 ? cwd : c->pb->dir, s)))
		return oom();
	free(*dst);
	*dst = abs;
	return 0;
}

/* ---- value checks ------------------------------------------------------------------------- */

static bool is_ip(const char *s)
{
	unsigned char buf[sizeof(struct in6_addr)];

	return inet_pton(AF_INET, s, buf) == 1 || inet_pton(AF_INET6, s, buf) == 1;
}

static int get_ip(struct ctx *c, const struct pv_node *map, const char *parent, const char *key,
		  char **dst)
{
	const char *expect = "an IPv4 or IPv6 address such as 198.18.0.20", *s;
	const struct pv_node *v;
	char path[256];
	int r;

	if ((r = get_text(c, map, parent, key, expect, &s, &v)) || !s)
		return r;
	key_path(path, sizeof(path), parent, key);
	if (!is_ip(s))
		return fail(c, v, "'%s' is '%.64s', not an IP address; expected %s", path, s,
			    expect);
	return set_str(dst, s);
}

/* DNS-style name: dot-separated labels of letters, digits, '-' and (for hosts) '_'.
 * Returns NULL when fine, else what is wrong. */
static const char *bad_dns(const char *s, bool underscore)
{
	size_t label = 0;

	if (strlen(s) > 253)
		return "is longer than 253 characters";
	for (const char *p = s;; p++) {
		if (*p == '.' || !*p) {
			if (!label)
				return "has an empty label";
			if (p[-1] == '-')
				return "has a label ending with '-'";
			if (label > 63)
				return "has a label longer than 63 characters";
			if (!*p)
				return NULL;
			label = 0;
			continue;
		}
		if (!isalnum((unsigned char)*p) && *p != '-' && !(underscore && *p == '_'))
			return "contains a character other than letters, digits, '-' and '.'";
		if (!label && *p == '-')
			return "has a label starting with '-'";
		label++;
	}
}

static int get_dns(struct ctx *c, const struct pv_node *map, const char *parent, const char *key,
		   bool underscore, const char *expect, char **dst, const struct pv_node **at)
{
	const struct pv_node *v;
	const char *s, *why;
	char path[256];
	int r;

	if ((r = get_text(c, map, parent, key, expect, &s, &v)) || !s)
		return r;
	if (at)
		*at = v;
	key_path(path, sizeof(path), parent, key);
	if ((why = bad_dns(s, underscore)))
		return fail(c, v, "'%s' value '%.64s' %s; expected %s", path, s, why, expect);
	return set_str(dst, s);
}

static void upcase(char *s)
{
	for (; *s; s++)
		*s = (char)toupper((unsigned char)*s);
}

static void downcase(char *s)
{
	for (; *s; s++)
		*s = (char)tolower((unsigned char)*s);
}

/* A distinguished name, checked loosely: every comma-separated part is ATTR=VALUE. */
static int get_dn(struct ctx *c, const struct pv_node *map, const char *parent, const char *key,
		  char **dst)
{
	const char *expect = "a DN such as OU=provision,DC=lab,DC=test", *s;
	const struct pv_node *v;
	char path[256];
	int r;

	if ((r = get_text(c, map, parent, key, expect, &s, &v)) || !s)
		return r;
	key_path(path, sizeof(path), parent, key);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (*p < 0x20 || *p == 0x7f)
			return fail(c, v, "'%s' contains the control character 0x%02x; expected %s",
				    path, *p, expect);
	for (const char *p = s; *p;) {
		size_t len = strcspn(p, ",");
		const char *eq = memchr(p, '=', len);

		if (!eq || eq == p || eq == p + len - 1)
			return fail(c, v, "'%s' is '%.64s', not a DN; expected %s", path, s,
				    expect);
		/* the OU's name reaches the hosts in the lab's tags and messages */
		if (eq[1] == '-')
			return fail(c, v,
				    "'%s' is '%.64s', in which '%.*s' starts with '-'; expected "
				    "names starting with a letter or digit",
				    path, s, (int)(p + len - eq - 1), eq + 1);
		p += len;
		if (*p == ',' && !*++p)
			return fail(c, v, "'%s' ends with ','; expected %s", path, expect);
	}
	return set_str(dst, s);
}

/* A folder path as given for key (at v): normalized (playbooks/names.h), absolute when
 * absolute, and not the root folder. where ends the expected form ("on the server such as
 * /srv/provision"). */
static int check_folder(struct ctx *c, const struct pv_node *v, const char *key, const char *p,
			bool absolute, const char *where)
{
	char what[128], hint[192];

	snprintf(what, sizeof(what), "'%s'", key);
	snprintf(hint, sizeof(hint), "; expected %s normalized path %s",
		 absolute ? "an absolute," : "a", where);
	if (pv_names_check_path(what, p, absolute))
		return fail_recorded(c, v, NULL, hint);
	if (!strcmp(p, "/"))
		return fail(c, v, "'%s' is '/', the root folder; expected a folder below it%s", key,
			    hint + 1);
	if (pv_names_check_safe(what, p, 1))
		return fail_recorded(c, v, NULL, NULL);
	return 0;
}

/* A template key: placeholders checked against allowed and required. */
static int get_template(struct ctx *c, const struct pv_node *map, const char *parent,
			const char *key, unsigned allowed, unsigned required, char **dst,
			const struct pv_node **at)
{
	const struct pv_node *v;
	const char *s;
	int r;

	if ((r = get_text(c, map, parent, key, "a name template", &s, &v)) || !s)
		return r;
	if (at)
		*at = v;
	if (pv_names_check_template(s, allowed, required)) {
		char path[256];

		key_path(path, sizeof(path), parent, key);
		return fail_recorded(c, v, path, NULL);
	}
	return set_str(dst, s);
}

/* ---- sections ----------------------------------------------------------------------------- */

static void ssh_release(struct pv_ssh *s)
{
	free(s->user);
	free(s->identity);
	free(s->known_hosts);
	memset(s, 0, sizeof(*s));
}

static int ssh_copy(struct pv_ssh *dst, const struct pv_ssh *src)
{
	*dst = *src;
	dst->user = dst->identity = dst->known_hosts = NULL;
	if ((src->user && !(dst->user = strdup(src->user))) ||
	    (src->identity && !(dst->identity = strdup(src->identity))) ||
	    (src->known_hosts && !(dst->known_hosts = strdup(src->known_hosts)))) {
		ssh_release(dst);
		return oom();
	}
	return 0;
}

static int ssh_defaults(struct pv_ssh *s)
{
	memset(s, 0, sizeof(*s));
	s->port = 22;
	s->timeout = 10;
	s->user = strdup(DEFAULT_SSH_USER);
	if (asprintf(&s->known_hosts, "%s/.ssh/known_hosts", home()) < 0)
		s->known_hosts = NULL;
	if (!s->user || !s->known_hosts) {
		ssh_release(s);
		return oom();
	}
	return 0;
}

/* Apply an ssh: mapping (at map[key]) over *s. */
static int parse_ssh(struct ctx *c, const struct pv_node *parent_map, const char *parent,
		     struct pv_ssh *s)
{
	const struct pv_node *m = pv_tree_get(parent_map, "ssh");
	char path[128];
	int r;

	if (!m)
		return 0;
	key_path(path, sizeof(path), parent, "ssh");
	if ((r = check_map(c, m, path, ssh_keys, "a mapping of ssh settings (user, port, ...)")) ||
	    (r = get_str(c, m, path, "user", "a login name", &s->user, NULL)) ||
	    (r = get_int(c, m, path, "port", 1, 65535, &s->port)) ||
	    (r = get_path(c, m, path, "identity", &s->identity)) ||
	    (r = get_path(c, m, path, "known_hosts", &s->known_hosts)) ||
	    (r = get_bool(c, m, path, "accept_new", &s->accept_new)) ||
	    (r = get_int(c, m, path, "timeout", 1, 3600, &s->timeout)))
		return r;
	return 0;
}

/* name, address, os and ssh of a host mapping already key-checked. */
static int parse_host(struct ctx *c, const struct pv_node *m, const char *path, bool need_address,
		      bool has_os, struct pv_host *h, const struct pv_node **name_at)
{
	const char *expect = "a host name such as srv or srv.lab.test";
	int os = PV_OS_LINUX, r;

	h->line = m->line;
	h->col = m->col;
	if ((r = require(c, m, path, "name", "HOST")) ||
	    (need_address && (r = require(c, m, path, "address", "IP-ADDRESS"))) ||
	    (r = get_dns(c, m, path, "name", true, expect, &h->name, name_at)) ||
	    (r = get_ip(c, m, path, "address", &h->address)) ||
	    (has_os && (r = get_enum(c, m, path, "os", oses, &os))) ||
	    (r = ssh_copy(&h->ssh, &c->ssh)) || (r = parse_ssh(c, m, path, &h->ssh)))
		return r;
	h->os = (enum pv_os)os;
	return 0;
}

static void host_release(struct pv_host *h)
{
	free(h->name);
	free(h->address);
	ssh_release(&h->ssh);
	memset(h, 0, sizeof(*h));
}

static int parse_secret(struct ctx *c, const struct pv_node *map, const char *parent,
			const char *key, struct pv_secret_ref *ref)
{
	const struct pv_node *m = pv_tree_get(map, key), *v;
	char path[256], sub[320];
	const char *s;
	bool yes;
	int r;

	if (!m)
		return 0;
	key_path(path, sizeof(path), parent, key);
	if (m->kind == PV_NODE_SCALAR && !pv_tree_is_null(m)) {
		c->redact = true; /* the value may be the password itself */
		r = fail(c, m,
			 "plain string for '%s': secrets are not allowed in a playbook; "
			 "use " SECRET_FORMS,
			 path);
		c->redact = false;
		return r;
	}
	/* an unknown key is not repeated: {Sup3r-Secret!} is a mapping whose key is a password */
	for (size_t i = 0; m->kind == PV_NODE_MAPPING && i < m->n; i++) {
		bool known = false;
		char hint[64];

		for (size_t j = 0; secret_keys[j] && !known; j++)
			known = !strcmp(secret_keys[j], m->keys[i]->text);
		if (known)
			continue;
		suggest(m->keys[i]->text, secret_keys, hint, sizeof(hint));
		return fail(c, m->keys[i],
			    "unknown key in '%s'%s; expected one of: file, env, stdin, prompt (the "
			    "key is not repeated here: it may be a password)",
			    path, hint);
	}
	if ((r = check_map(c, m, path, secret_keys, "a secret reference: " SECRET_FORMS)))
		return r;
	if (m->n != 1)
		return fail(c, m, "'%s' %s; expected exactly one of " SECRET_FORMS, path,
			    m->n ? "names more than one source" : "is empty");
	ref->line = m->line;
	ref->col = m->col;
	v = m->items[0];
	key_path(sub, sizeof(sub), path, m->keys[0]->text);
	{
		char loc[512];

		c->redact = true;
		where(c, v, loc, sizeof(loc));
		c->redact = false;
		if ((r = set_str(&ref->where, loc)))
			return r;
	}
	if (!strcmp(m->keys[0]->text, "file")) {
		ref->source = PV_SECRET_FILE;
		return get_path(c, m, path, "file", &ref->value);
	}
	if (!strcmp(m->keys[0]->text, "env")) {
		ref->source = PV_SECRET_ENV;
		if ((r = text_of(c, v, sub, "an environment variable name", &s)))
			return r;
		/* never repeated: a password written as {env: <password>} lands here */
		for (const char *p = s; *p; p++)
			if (!(isalnum((unsigned char)*p) || *p == '_') ||
			    isdigit((unsigned char)*s))
				return fail(c, v, NOT_A_NAME, sub);
		return set_str(&ref->value, s);
	}
	ref->source = !strcmp(m->keys[0]->text, "stdin") ? PV_SECRET_STDIN : PV_SECRET_PROMPT;
	if ((r = text_of(c, v, sub, "true", &s)))
		return r;
	if (parse_bool(s, &yes) || !yes)
		return fail(c, v,
			    "'%s' is not true (the value is not repeated here: it may be a "
			    "password); expected true (leave the key out otherwise)",
			    sub);
	return 0;
}

/* domain.other_dcs: [{name: DC2, address: IP}, ...], none of them the domain's dc; and
 * domain.replication_timeout. */
static int parse_other_dcs(struct ctx *c, const struct pv_node *m)
{
	struct pv_domain *d = &c->pb->domain;
	const struct pv_node *seq = pv_tree_get(m, "other_dcs"), *at;
	const char *expect = "the DC's host name as in its certificate, such as dc2.lab.test";
	char path[48];
	int r;

	d->replication_timeout = 600;
	if ((r = get_int(c, m, "domain", "replication_timeout", 0, 86400,
			 &d->replication_timeout)) ||
	    !seq)
		return r;
	if (seq->kind != PV_NODE_SEQUENCE || !seq->n)
		return fail(c, seq,
			    "'domain.other_dcs' is %s; expected a sequence of DCs ('- {name: "
			    "dc2.lab.test, address: IP}')",
			    seq->kind == PV_NODE_SEQUENCE ? "empty" : kind_name(seq));
	if (!(d->other_dcs = calloc(seq->n, sizeof(*d->other_dcs))))
		return oom();
	for (size_t i = 0; i < seq->n; i++) {
		snprintf(path, sizeof(path), "domain.other_dcs.%zu", i);
		d->nother_dcs = i + 1;
		if ((r = check_map(c, seq->items[i], path, dc_ref_keys,
				   "a mapping {name: DC, address: IP}")) ||
		    (r = require(c, seq->items[i], path, "name", "DC-HOST-NAME")) ||
		    (r = get_dns(c, seq->items[i], path, "name", true, expect,
				 &d->other_dcs[i].name, &at)) ||
		    (r = get_ip(c, seq->items[i], path, "address", &d->other_dcs[i].address)))
			return r;
		if (!strcasecmp(d->other_dcs[i].name, d->dc_name))
			return fail(c, at,
				    "'%s' is domain.dc itself; expected the domain's other DCs "
				    "(dc is the one provision writes to)",
				    d->other_dcs[i].name);
		for (size_t j = 0; j < i; j++)
			if (!strcasecmp(d->other_dcs[j].name, d->other_dcs[i].name))
				return fail(c, at, "DC '%s' is named twice; expected each DC once",
					    d->other_dcs[i].name);
	}
	return 0;
}

static int parse_domain(struct ctx *c, const struct pv_node *root)
{
	struct pv_domain *d = &c->pb->domain;
	const struct pv_node *m = pv_tree_get(root, "domain"), *v;
	int transport = PV_LDAP_LDAPS, r;
	const char *s;

	if ((r = require(c, root, "", "domain", "{realm: ..., netbios: ..., dc: ..., ...}")) ||
	    (r = check_map(c, m, "domain", domain_keys,
			   "a mapping of domain settings (realm, ...)")) ||
	    (r = require(c, m, "domain", "realm", "REALM such as LAB.TEST")) ||
	    (r = require(c, m, "domain", "netbios", "NETBIOS-NAME such as LAB")) ||
	    (r = require(c, m, "domain", "dc", "DC-HOST-NAME such as dc.lab.test")) ||
	    (r = require(c, m, "domain", "admin_password", SECRET_FORMS)))
		return r;

	if ((r = get_dns(c, m, "domain", "realm", false,
			 "a realm of letters, digits, '.' and '-' "
			 "such as LAB.TEST",
			 &d->realm, NULL)))
		return r;
	upcase(d->realm);
	if ((r = get_text(c, m, "domain", "netbios", "a NetBIOS domain name such as LAB", &s, &v)))
		return r;
	if (pv_names_check_host("NetBIOS domain name", s))
		return fail_recorded(c, v, NULL, NULL);
	if ((r = set_str(&d->netbios, s)))
		return r;
	upcase(d->netbios);

	if ((r = set_str(&d->dns_domain, d->realm)))
		return r;
	if ((r = get_dns(c, m, "domain", "dns_domain", false, "a DNS domain such as lab.test",
			 &d->dns_domain, NULL)))
		return r;
	downcase(d->dns_domain);
	if ((r = get_dn(c, m, "domain", "base_dn", &d->base_dn)))
		return r;
	if (!d->base_dn) {
		/* DC=<label> for each DNS label (RFC 2247) */
		struct pv_buf b = PV_BUF_INIT;

		for (const char *p = d->dns_domain; *p;) {
			size_t len = strcspn(p, ".");

			if (pv_buf_addf(&b, "%sDC=%.*s", b.len ? "," : "", (int)len, p) < 0) {
				pv_buf_release(&b, 0);
				return oom();
			}
			p += len;
			if (*p)
				p++;
		}
		if (!(d->base_dn = pv_buf_detach(&b)))
			return oom();
	}
	if ((r = get_dns(c, m, "domain", "dc", true,
			 "the DC's host name as in its certificate, "
			 "such as dc.lab.test",
			 &d->dc_name, NULL)) ||
	    (r = get_ip(c, m, "domain", "dc_address", &d->dc_address)) ||
	    (r = get_enum(c, m, "domain", "transport", transports, &transport)))
		return r;
	d->transport = (enum pv_ldap_transport)transport;
	if (d->transport != PV_LDAP_GSSAPI &&
	    (r = require(c, m, "domain", "ca_file",
			 "PATH (the CA that signed the DC's certificate; needed unless transport "
			 "is gssapi)")))
		return r;
	d->timeout = 10;
	if ((r = get_path(c, m, "domain", "ca_file", &d->ca_file)) ||
	    (r = get_int(c, m, "domain", "timeout", 1, 3600, &d->timeout)) ||
	    (r = set_str(&d->admin, DEFAULT_ADMIN)) ||
	    (r = get_str(c, m, "domain", "admin", "an account name such as Administrator",
			 &d->admin, &v)))
		return r;
	if (v && pv_names_check_account("'domain.admin'", d->admin))
		return fail_recorded(c, v, NULL,
				     "; expected an account name such as Administrator");
	/* ssh: the DC is a host run can reach (its watch): by its address, else its name */
	if (pv_tree_get(m, "ssh")) {
		d->has_host = true;
		if ((r = set_str(&d->host.name, d->dc_name)) ||
		    (d->dc_address && (r = set_str(&d->host.address, d->dc_address))) ||
		    (r = ssh_copy(&d->host.ssh, &c->ssh)) ||
		    (r = parse_ssh(c, m, "domain", &d->host.ssh)))
			return r;
	}
	if ((r = parse_other_dcs(c, m)))
		return r;
	return parse_secret(c, m, "domain", "admin_password", &d->admin_password);
}

static int parse_users(struct ctx *c, const struct pv_node *root)
{
	struct pv_users *u = &c->pb->users;
	const struct pv_node *m = pv_tree_get(root, "users");
	int r;

	u->per_client = 1;
	if ((r = set_str(&u->name_template, DEFAULT_USER_TEMPLATE)))
		return r;
	if (m) {
		if ((r = check_map(c, m, "users", users_keys,
				   "a mapping of user settings (per_client, ...)")) ||
		    (r = get_uint(c, m, "users", "per_client", 1, 100000000, &u->per_client,
				  NULL)) ||
		    (r = get_template(c, m, "users", "name_template",
				      PV_NAMES_CLIENT | PV_NAMES_SERVER | PV_NAMES_N, PV_NAMES_N,
				      &u->name_template, &c->name_template)) ||
		    (r = get_dn(c, m, "users", "ou", &u->ou)) ||
		    (r = parse_secret(c, m, "users", "password", &u->password)))
			return r;
	}
	if (!u->ou && asprintf(&u->ou, "OU=%s,%s", c->pb->lab, c->pb->domain.base_dn) < 0) {
		u->ou = NULL;
		return oom();
	}
	return 0;
}

static int parse_server(struct ctx *c, const struct pv_node *root)
{
	struct pv_server *s = &c->pb->server;
	const struct pv_node *m = pv_tree_get(root, "server"), *v;
	int r;

	if (!m)
		return 0;
	c->pb->has_server = true;
	s->shares = 1;
	if ((r = check_map(c, m, "server", server_keys,
			   "a mapping of file server settings (name, address, ...)")) ||
	    (r = parse_host(c, m, "server", true, false, &s->host, &c->server_name)) ||
	    (r = set_str(&s->alias_template, DEFAULT_ALIAS_TEMPLATE)) ||
	    (r = get_template(c, m, "server", "alias_template", PV_NAMES_SERVER | PV_NAMES_N,
			      PV_NAMES_N, &s->alias_template, &c->alias_template)) ||
	    (r = get_uint(c, m, "server", "shares", 1, 64, &s->shares, NULL)) ||
	    (r = set_str(&s->share_template, DEFAULT_SHARE_TEMPLATE)) ||
	    (r = get_template(c, m, "server", "share_template", PV_NAMES_SERVER | PV_NAMES_K,
			      PV_NAMES_K, &s->share_template, &c->share_template)) ||
	    (r = set_str(&s->share_path, DEFAULT_SHARE_PATH)) ||
	    (r = get_str(c, m, "server", "share_path", "an absolute path on the server",
			 &s->share_path, &v)))
		return r;
	if (v && (r = check_folder(c, v, "server.share_path", s->share_path, true,
				   "on the server such as /srv/provision")))
		return r;
	if ((r = get_path(c, m, "server", "fileset", &s->fileset)) ||
	    (r = set_str(&s->service, DEFAULT_SERVICE)) ||
	    (r = get_str(c, m, "server", "service", "a command containing {action}", &s->service,
			 &v)))
		return r;
	if (v && !strstr(s->service, "{action}"))
		return fail(c, v,
			    "'server.service' has no {action}; expected a command such as "
			    "'systemctl {action} {service}'");
	if (pv_tree_get(m, "smb_encrypt")) {
		int e = -1;

		if ((r = get_enum(c, m, "server", "smb_encrypt", smb_encrypts, &e)))
			return r;
		if ((r = set_str(&s->smb_encrypt, smb_encrypts[e])))
			return r;
	}
	if (pv_tree_get(m, "kind")) {
		int k = -1;

		if ((r = get_enum(c, m, "server", "kind", pv_server_kinds, &k)))
			return r;
		s->kind = (enum pv_server_kind)k;
	}
	s->alias_spns = true;
	return get_bool(c, m, "server", "alias_spns", &s->alias_spns);
}

/* A client name not given twice: the first one named, with its line when it has one. */
static int unique_client(struct ctx *c, size_t i, const struct pv_node *name_at)
{
	struct pv_playbook *pb = c->pb;

	for (size_t j = 0; j < i; j++) {
		if (strcmp(pb->clients[j].name, pb->clients[i].name))
			continue;
		if (pb->clients[j].line)
			return fail(c, name_at,
				    "duplicate client name '%s' (first at line %d); expected "
				    "unique names",
				    pb->clients[i].name, pb->clients[j].line);
		return fail(c, name_at, "duplicate client name '%s'; expected unique names",
			    pb->clients[i].name);
	}
	return 0;
}

/* One inventory host as a client: the playbook's ssh defaults, then the inventory's
 * ansible_* values (an identity relative to the inventory's folder). */
static int inventory_client(struct ctx *c, const struct pv_inventory_host *ih, const char *file,
			    const char *idir, struct pv_host *h)
{
	const char *why;

	if ((why = bad_dns(ih->name, true)))
		return pv_error(PV_ECONFIG,
				"%s:%d: host name '%.64s' %s; expected a host name such as cli1 "
				"(provision names its users after it)",
				file, ih->line, ih->name, why);
	if (ih->address && !is_ip(ih->address) && (why = bad_dns(ih->address, true)))
		return pv_error(PV_ECONFIG,
				"%s:%d: host '%s': ansible_host '%.64s' %s; expected an IP address "
				"or a host name",
				file, ih->line, ih->name, ih->address, why);
	h->line = 0;
	if ((h->name = strdup(ih->name)) == NULL ||
	    (ih->address && !(h->address = strdup(ih->address))))
		return oom();
	if (ssh_copy(&h->ssh, &c->ssh))
		return PV_EIO;
	if (ih->port)
		h->ssh.port = ih->port;
	if (ih->user && set_str(&h->ssh.user, ih->user))
		return PV_EIO;
	if (ih->identity) {
		char *abs = resolve(idir, ih->identity);

		if (!abs)
			return oom();
		free(h->ssh.identity);
		h->ssh.identity = abs;
	}
	return 0;
}

/* clients.hosts.NAME: what the playbook says of one inventory host, over the inventory. */
static int client_override(struct ctx *c, const struct pv_node *key, const struct pv_node *m)
{
	struct pv_playbook *pb = c->pb;
	char path[320];
	int os, r;

	snprintf(path, sizeof(path), "clients.hosts.%s", key->text);
	for (size_t i = 0; i < pb->nclients; i++) {
		struct pv_host *h = &pb->clients[i];

		if (strcmp(h->name, key->text) != 0)
			continue;
		os = h->os;
		if ((r = check_map(c, m, path, override_keys,
				   "a mapping of host settings (address, os, ssh)")) ||
		    (r = get_ip(c, m, path, "address", &h->address)) ||
		    (r = get_enum(c, m, path, "os", oses, &os)) ||
		    (r = parse_ssh(c, m, path, &h->ssh)))
			return r;
		h->os = (enum pv_os)os;
		c->client_at[i] = key;
		return 0;
	}
	return fail(c, key,
		    "'clients.hosts' names '%s', which is not a host of group '%s' in %s; expected "
		    "one of the inventory's hosts",
		    key->text, pb->inventory_group, pb->inventory);
}

/* clients: {inventory: FILE, group: NAME, hosts: {NAME: {address, os, ssh}}} */
static int parse_inventory(struct ctx *c, const struct pv_node *m)
{
	struct pv_playbook *pb = c->pb;
	const struct pv_node *at, *gat, *over;
	struct pv_inventory *inv = NULL;
	char *idir = NULL;
	int r;

	if ((r = check_map(c, m, "clients", inventory_keys,
			   "a sequence of hosts, or {inventory: FILE, group: NAME}")) ||
	    (r = require(c, m, "clients", "inventory",
			 "PATH (an Ansible inventory, INI or YAML)")) ||
	    (r = get_path(c, m, "clients", "inventory", &pb->inventory)) ||
	    (r = set_str(&pb->inventory_group, "all")) ||
	    (r = get_str(c, m, "clients", "group", "a group of the inventory", &pb->inventory_group,
			 &gat)))
		return r;
	at = pv_tree_get(m, "inventory");
	if ((r = pv_inventory_load(pb->inventory, pb->inventory_group, &inv)) != PV_OK) {
		r = fail_recorded(c, gat && strstr(pv_errmsg(), "no group") ? gat : at, NULL, NULL);
		goto out;
	}
	pb->inventory_format = inv->format;
	if (!(idir = dir_of(pb->inventory)) ||
	    !(pb->clients = calloc(inv->n, sizeof(*pb->clients))) ||
	    !(c->client_at = calloc(inv->n, sizeof(*c->client_at)))) {
		r = oom();
		goto out;
	}
	for (size_t i = 0; i < inv->n; i++) {
		pb->nclients = i + 1;
		c->client_at[i] = at;
		if ((r = inventory_client(c, &inv->hosts[i], pb->inventory, idir, &pb->clients[i])))
			goto out;
	}
	if ((over = pv_tree_get(m, "hosts"))) {
		if (over->kind != PV_NODE_MAPPING) {
			r = fail(c, over,
				 "'clients.hosts' is %s; expected a mapping of host names "
				 "to their settings",
				 kind_name(over));
			goto out;
		}
		for (size_t i = 0; i < over->n && !r; i++)
			r = client_override(c, over->keys[i], over->items[i]);
	}
out:
	free(idir);
	pv_inventory_free(inv);
	return r;
}

static int parse_clients(struct ctx *c, const struct pv_node *root)
{
	struct pv_playbook *pb = c->pb;
	const struct pv_node *seq = pv_tree_get(root, "clients"), *name_at;
	char path[32];
	int r;

	if (!seq)
		return 0;
	if (seq->kind == PV_NODE_MAPPING && !pv_tree_get(seq, "inventory") &&
	    (pv_tree_get(seq, "name") || pv_tree_get(seq, "address")))
		return fail(c, seq,
			    "'clients' is a mapping; expected a sequence of hosts ('- name: ...') "
			    "or {inventory: FILE, group: NAME}");
	if (seq->kind == PV_NODE_MAPPING)
		return parse_inventory(c, seq);
	if (seq->kind != PV_NODE_SEQUENCE)
		return fail(c, seq,
			    "'clients' is %s; expected a sequence of hosts ('- name: ...') or "
			    "{inventory: FILE, group: NAME}",
			    kind_name(seq));
	if (!seq->n)
		return fail(c, seq,
			    "'clients' is an empty sequence; expected at least one client "
			    "(or no 'clients' key)");
	pb->clients = calloc(seq->n, sizeof(*pb->clients));
	c->client_at = calloc(seq->n, sizeof(*c->client_at));
	if (!pb->clients || !c->client_at)
		return oom();
	for (size_t i = 0; i < seq->n; i++) {
		const struct pv_node *m = seq->items[i];

		snprintf(path, sizeof(path), "clients.%zu", i);
		pb->nclients = i + 1; /* so pv_playbook_free releases this one too */
		if ((r = check_map(c, m, path, client_keys,
				   "a mapping of client settings (name, address, os, ssh)")) ||
		    (r = parse_host(c, m, path, true, true, &pb->clients[i], &name_at)))
			return r;
		c->client_at[i] = name_at;
		if ((r = unique_client(c, i, name_at)))
			return r;
	}
	return 0;
}

static int parse_controller(struct ctx *c, const struct pv_node *root)
{
	struct pv_controller *ct = &c->pb->controller;
	const struct pv_node *m = pv_tree_get(root, "controller"), *h, *v;
	const char *s;
	int r;

	if (!m)
		return 0;
	c->pb->has_controller = true;
	if ((r = check_map(c, m, "controller", controller_keys,
			   "a mapping of controller settings (results, host)")) ||
	    (r = require(c, m, "controller", "results", "PATH (the results folder)")))
		return r;
	if ((h = pv_tree_get(m, "host"))) {
		if ((r = check_map(c, h, "controller.host", chost_keys,
				   "a mapping of host settings (name, address, ssh)")) ||
		    (r = parse_host(c, h, "controller.host", false, false, &ct->host, NULL)))
			return r;
	}
	/* a local folder is resolved like any file (a relative one under the playbook's folder);
	 * a remote one is used as given, so it must be absolute */
	if ((r = get_text(c, m, "controller", "results", "a folder path", &s, &v)))
		return r;
	if (!h) {
		const char *rel = s;

		if (rel[0] == '~' && (rel[1] == '/' || !rel[1]))
			rel += rel[1] ? 2 : 1;
		if (*rel && (r = check_folder(c, v, "controller.results", rel, false,
					      "such as /var/lib/fsct/results")))
			return r;
		return get_path(c, m, "controller", "results", &ct->results);
	}
	if ((r = check_folder(c, v, "controller.results", s, true,
			      "on the controller host such as /var/lib/fsct/results")))
		return r;
	return set_str(&ct->results, s);
}

/* A command driver's command: every {word} of lower-case letters and '_' in it must be one of
 * the placeholders (names.h), caught here rather than at the run, after every host was
 * reached. The place given is the command's own. */
static int get_command(struct ctx *c, const struct pv_node *m, const char *key, char **dst)
{
	const struct pv_node *v;
	size_t len;
	long at;
	int r;

	if ((r = get_str(c, m, "driver", key, "a command", dst, &v)) || !v)
		return r;
	if ((at = pv_placeholder_unknown(*dst, &len)) >= 0) {
		long line = 1, col = 1;
		char place[64] = "", known[512];

		for (long i = 0; i < at; i++, col++)
			if ((*dst)[i] == '\n')
				line++, col = 0;
		if (line > 1)
			snprintf(place, sizeof(place), "line %ld, ", line);
		pv_placeholder_list(known, sizeof(known));
		return fail(
			c, v,
			"'driver.%s' uses '%.*s' (%scharacter %ld of the command), which is not "
			"a placeholder; expected one of %s (other braces, such as the shell's "
			"${X}, are left alone)",
			key, (int)len, *dst + at, place, col, known);
	}
	return 0;
}

static int parse_driver(struct ctx *c, const struct pv_node *root)
{
	struct pv_driver *d = &c->pb->driver;
	const struct pv_node *m = pv_tree_get(root, "driver"), *f, *v;
	int kind = 0, r;

	d->watch = 2;
	if ((r = set_str(&d->name, DEFAULT_DRIVER)) || (r = set_str(&d->fsct_path, "fsct.exe")) ||
	    (r = set_str(&d->fsct_workload, "HomeFolders")))
		return r;
	if (!m)
		return 0;
	d->line = m->line;
	d->col = m->col;
	if ((r = check_map(c, m, "driver", driver_keys,
			   "a mapping of load driver settings (name, client_command, ...)")) ||
	    (r = get_enum(c, m, "driver", "name", drivers, &kind)) ||
	    (r = get_command(c, m, "client_command", &d->client_command)) ||
	    (r = get_command(c, m, "controller_command", &d->controller_command)) ||
	    (r = get_uint(c, m, "driver", "min_users", 1, 10000000, &d->min_users, NULL)) ||
	    (r = get_uint(c, m, "driver", "max_users", 1, 10000000, &d->max_users, NULL)) ||
	    (r = get_uint(c, m, "driver", "step", 1, 10000000, &d->step, NULL)) ||
	    (r = get_int(c, m, "driver", "duration", 1, 604800, &d->duration)) ||
	    (r = get_int(c, m, "driver", "warmup", 0, 86400, &d->warmup)) ||
	    (r = get_int(c, m, "driver", "timeout", 0, 604800, &d->timeout)) ||
	    (r = get_int(c, m, "driver", "watch", 0, 3600, &d->watch)) ||
	    (r = get_uint(c, m, "driver", "refine", 0, 10000000, &d->refine, NULL)))
		return r;
	d->kind = (enum pv_driver_kind)kind;
	if ((r = set_str(&d->name, drivers[kind])))
		return r;
	if (d->min_users && d->max_users && d->min_users > d->max_users)
		return fail(
			c, pv_tree_get(m, "min_users"),
			"'driver.min_users' (%u) is more than 'driver.max_users' (%u); expected "
			"a ramp from min_users up to max_users",
			d->min_users, d->max_users);
	if ((f = pv_tree_get(m, "fsct"))) {
		if ((r = check_map(c, f, "driver.fsct", fsct_keys,
				   "a mapping of FSCT settings (path, workload)")) ||
		    (r = get_str(c, f, "driver.fsct", "path", "the path of fsct.exe", &d->fsct_path,
				 NULL)) ||
		    (r = get_str(c, f, "driver.fsct", "workload",
				 "an FSCT workload such as HomeFolders", &d->fsct_workload, NULL)))
			return r;
	}
	(void)v;
	return 0;
}

static int parse_drain(struct ctx *c, const struct pv_node *root)
{
	struct pv_drain *d = &c->pb->drain;
	const struct pv_node *m = pv_tree_get(root, "drain");
	static const char *const metrics[] = {"req_queue", "dirty+writeback kB", "I/O in flight",
					      "SMB opens and sessions"};
	int probe = -1, r;

	d->interval = 2;
	d->settle = 4;
	d->timeout = 600;
	if (!m)
		return 0;
	c->pb->has_drain = true;
	if ((r = check_map(c, m, "drain", drain_keys,
			   "a mapping of drain settings (probe, command, threshold, ...)")) ||
	    (r = get_enum(c, m, "drain", "probe", probes, &probe)) ||
	    (r = get_str(c, m, "drain", "command", "a command printing the queue depth",
			 &d->command, NULL)))
		return r;
	if (probe < 0)
		probe = d->command ? PV_PROBE_COMMAND : -1;
	if (probe < 0)
		return fail(c, m,
			    "'drain' names no probe; expected 'probe: writeback', 'inflight' or "
			    "'smb', or a 'command' printing the queue depth (a NAS's req_queue)");
	if (probe == PV_PROBE_COMMAND && !d->command)
		return require(c, m, "drain", "command",
			       "a command printing the queue depth (wait --probe-command CMD)");
	d->probe = (enum pv_probe_kind)probe;
	if ((r = set_str(&d->metric, metrics[probe])) ||
	    (r = get_str(c, m, "drain", "metric", "a metric name such as req_queue", &d->metric,
			 NULL)) ||
	    (r = get_long(c, m, "drain", "threshold", 0, LONG_MAX, &d->threshold, NULL)) ||
	    (r = get_int(c, m, "drain", "interval", 1, 3600, &d->interval)) ||
	    (r = get_int(c, m, "drain", "settle", 0, 86400, &d->settle)) ||
	    (r = get_int(c, m, "drain", "timeout", 1, 604800, &d->timeout)) ||
	    (r = get_bool(c, m, "drain", "between_steps", &d->between_steps)))
		return r;
	return 0;
}

static int parse_scenarios(struct ctx *c, const struct pv_node *m)
{
	struct pv_load_config *l = &c->pb->load;
	double total = 0;
	int r;

	if ((r = check_map(c, m, "load.scenarios", pv_load_names,
			   "a mapping of scenario names to {weight: N, limit: SECONDS}")))
		return r;
	for (size_t i = 0; i < m->n; i++) {
		struct pv_load_scenario *k = &l->kind[pv_load_kind_of(m->keys[i]->text)];
		char path[64];

		snprintf(path, sizeof(path), "load.scenarios.%s", m->keys[i]->text);
		if ((r = check_map(c, m->items[i], path, scenario_keys,
				   "a mapping {weight: N, limit: SECONDS}")) ||
		    (r = get_number(c, m->items[i], path, "weight", 0, 36000, &k->weight)) ||
		    (r = get_number(c, m->items[i], path, "limit", 0.001, 3600, &k->limit)))
			return r;
	}
	for (int k = 0; k < PV_LOAD_KINDS; k++)
		total += l->kind[k].weight;
	if (total <= 0)
		return fail(
			c, m,
			"every scenario's weight in 'load.scenarios' is 0; expected at least one "
			"weight above 0 (the defaults are FSCT's: browse 150, open_close 50, ...)");
	return 0;
}

static int parse_load(struct ctx *c, const struct pv_node *root)
{
	struct pv_load_config *l = &c->pb->load;
	const struct pv_node *m = pv_tree_get(root, "load"), *sc;
	long seed;
	int r;

	pv_load_defaults(l);
	if (!m)
		return 0;
	c->pb->has_load = true;
	seed = (long)l->seed;
	if ((r = check_map(c, m, "load", load_keys,
			   "a mapping of load settings (rate, scenarios, late, ...)")) ||
	    (r = get_uint(c, m, "load", "rate", 1, 36000, &l->rate, NULL)) ||
	    (r = get_number(c, m, "load", "late", 0, 3600, &l->late)) ||
	    (r = get_number(c, m, "load", "overload", 0, 100, &l->overload)) ||
	    (r = get_uint(c, m, "load", "interval", 1, 3600, &l->interval, NULL)) ||
	    (r = get_long(c, m, "load", "seed", 0, LONG_MAX, &seed, NULL)) ||
	    (r = get_bool(c, m, "load", "keep_logged_on", &l->keep_logged_on)) ||
	    (r = get_uint(c, m, "load", "threads", 0, PV_LOAD_THREADS_MAX, &l->threads, NULL)))
		return r;
	{
		int auth = (int)l->auth;

		int enc = (int)l->encryption;

		if ((r = get_enum(c, m, "load", "auth", load_auths, &auth)) ||
		    (r = get_enum(c, m, "load", "encryption", pv_load_encryptions, &enc)))
			return r;
		l->auth = (enum pv_load_auth)auth;
		l->encryption = (enum pv_load_encryption)enc;
	}
	l->seed = (uint64_t)seed;
	sc = pv_tree_get(m, "scenarios");
	return sc ? parse_scenarios(c, sc) : 0;
}

/* Names must fit before anything is created: no client named as a step folder's own entry
 * (names.h), the longest user name per client (n = per_client) and alias within AD's limits. */
static int check_names(struct ctx *c)
{
	struct pv_playbook *pb = c->pb;
	char name[512];
	unsigned mask = 0;

	pv_names_placeholders(pb->users.name_template, &mask); /* checked already */
	if (pb->nclients > 1 && !(mask & PV_NAMES_CLIENT))
		return fail(c, c->name_template,
			    "'users.name_template' is '%s', which has no "
			    "{client} but there are %zu clients; expected a template with {client} "
			    "so that user names differ between clients",
			    pb->users.name_template, pb->nclients);
	for (size_t i = 0; i < pb->nclients; i++) {
		const struct pv_node *at = c->name_template ? c->name_template : c->client_at[i];

		if (pv_names_check_client("client name", pb->clients[i].name))
			return fail_recorded(c, c->client_at[i], NULL, NULL);
		if (pv_names_expand(pb->users.name_template, pb->clients[i].name,
				    pb->has_server ? pb->server.host.name : NULL,
				    pb->users.per_client, 1, name, sizeof(name)))
			return fail_recorded(c, at, NULL, NULL);
		if (pv_names_check_sam("user name", name))
			return fail_recorded(c, at, NULL,
					     ": shorten the client name or name_template");
		if (pv_names_check_safe("user name", name, 0))
			return fail_recorded(c, at, "users.name_template", NULL);
	}
	if (pb->has_server) {
		const struct pv_node *at = c->alias_template ? c->alias_template : c->server_name;

		if (pv_names_expand(pb->server.alias_template, NULL, pb->server.host.name,
				    pb->users.per_client, 1, name, sizeof(name)))
			return fail_recorded(c, at, NULL, NULL);
		if (pv_names_check_host("alias", name))
			return fail_recorded(c, at, NULL,
					     ": shorten the server name or alias_template");
		/* every share name: {k} and {server} can change what a name starts with */
		at = c->share_template ? c->share_template : c->server_name;
		for (unsigned k = 1; k <= pb->server.shares; k++) {
			if (pv_names_expand(pb->server.share_template, NULL, pb->server.host.name,
					    0, k, name, sizeof(name)))
				return fail_recorded(c, at, NULL, NULL);
			if (pv_names_check_share("share name", name) ||
			    pv_names_check_safe("share name", name, 0))
				return fail_recorded(c, at, "server.share_template", NULL);
		}
	}
	return 0;
}

static int parse_lab(struct ctx *c, const struct pv_node *root)
{
	const char *expect = "1 to 32 letters, digits, '_' or '-'", *s;
	const struct pv_node *v;
	size_t len;
	int r;

	if ((r = set_str(&c->pb->lab, DEFAULT_LAB)) ||
	    (r = get_text(c, root, "", "lab", expect, &s, &v)) || !s)
		return r;
	len = strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-");
	if (s[len])
		return fail(c, v, "'lab' is '%.64s', which contains '%c'; expected %s", s, s[len],
			    expect);
	if (len > 32)
		return fail(c, v, "'lab' is %zu characters long; expected %s", len, expect);
	/* it names the OU and tags what is made on the hosts */
	if (s[0] == '-')
		return fail(c, v,
			    "'lab' is '%s', which starts with '-'; expected %s, starting "
			    "with a letter, digit or '_'",
			    s, expect);
	return set_str(&c->pb->lab, s);
}

static int validate(struct ctx *c, const struct pv_node *root)
{
	int r;

	c->pb->fanout = 16;
	if ((r = check_map(c, root, "", top_keys, NULL)) || (r = parse_lab(c, root)) ||
	    (r = get_int(c, root, "", "fanout", 1, 256, &c->pb->fanout)) ||
	    (r = ssh_defaults(&c->ssh)) || (r = parse_ssh(c, root, "", &c->ssh)) ||
	    (r = parse_domain(c, root)) || (r = parse_users(c, root)) ||
	    (r = parse_server(c, root)) || (r = parse_clients(c, root)) ||
	    (r = parse_controller(c, root)) || (r = parse_driver(c, root)) ||
	    (r = parse_drain(c, root)) || (r = parse_load(c, root)) || (r = check_names(c)))
		return r;
	return 0;
}

/* ---- overrides ---------------------------------------------------------------------------- */

static bool secret_path(const char *path, size_t len)
{
	static const char *const parents[] = {"domain.admin_password.", "users.password.", NULL};

	for (size_t i = 0; parents[i]; i++) {
		size_t pl = strlen(parents[i]);

		if (len > pl && !strncmp(path, parents[i], pl))
			for (size_t j = 0; secret_keys[j]; j++)
				if (len - pl == strlen(secret_keys[j]) &&
				    !strncmp(path + pl, secret_keys[j], len - pl))
					return true;
	}
	return false;
}

static int apply_overrides(struct pv_node *root, const char *const *ovr)
{
	char *path;
	const char *eq;
	int r;

	for (int i = 0; ovr && ovr[i]; i++) {
		eq = strchr(ovr[i], '=');
		if (!eq || eq == ovr[i])
			return pv_error(PV_ECONFIG,
					"command line: option '%s': no %s; expected "
					"KEY.PATH=VALUE such as users.per_client=20",
					ovr[i], eq ? "key" : "'='");
		if (!(path = strndup(ovr[i], (size_t)(eq - ovr[i]))))
			return oom();
		/* switching a secret's source replaces the whole reference */
		r = pv_tree_set(root, path, eq + 1, i, secret_path(path, strlen(path)));
		free(path);
		if (r) {
			char loc[512];

			option_name(ovr[i], false, loc, sizeof(loc));
			return pv_error_prefix(r, "%s", loc);
		}
	}
	return 0;
}

/* ---- public ------------------------------------------------------------------------------- */

static char *dir_of(const char *path)
{
	const char *slash = path ? strrchr(path, '/') : NULL;
	char cwd[PATH_MAX], *out;

	if (slash && path[0] == '/')
		return slash == path ? strdup("/") : strndup(path, (size_t)(slash - path));
	if (!getcwd(cwd, sizeof(cwd)))
		return NULL;
	if (!slash)
		return strdup(cwd);
	if (asprintf(&out, "%s/%.*s", cwd, (int)(slash - path), path) < 0)
		return NULL;
	return out;
}

static int parse(const char *name, const char *path, const char *text, size_t len,
		 const char *const *overrides, struct pv_playbook **out)
{
	struct ctx c = {.name = name, .ovr = overrides};
	struct pv_node *root = NULL;
	int r;

	if (!(c.pb = calloc(1, sizeof(*c.pb))) || !(c.pb->path = strdup(path)))
		r = oom();
	else if (!(c.pb->dir = dir_of(*path ? path : NULL)))
		r = pv_error(PV_EIO, "cannot find the current folder: %s", strerror(errno));
	else if (!(r = pv_tree_parse(name, text, len, &root)) &&
		 !(r = check_map(&c, root, "", top_keys, NULL)) &&
		 !(r = apply_overrides(root, overrides)))
		r = validate(&c, root);
	pv_tree_free(root);
	ssh_release(&c.ssh);
	free(c.client_at);
	if (r) {
		pv_playbook_free(c.pb);
		return r;
	}
	*out = c.pb;
	return 0;
}

int pv_playbook_parse(const char *name, const char *text, size_t len, const char *const *overrides,
		      struct pv_playbook **out)
{
	return parse(name ? name : "playbook", "", text, len, overrides, out);
}

int pv_playbook_load(const char *path, const char *const *overrides, struct pv_playbook **out)
{
	struct stat st;
	char *text = NULL;
	size_t len = 0;
	int r;

	if ((r = pv_file_read(path, "playbook", PLAYBOOK_MAX, &text, &len, &st)) != PV_OK)
		return r;
	r = parse(path, path, text, len, overrides, out);
	free(text);
	return r;
}

static void secret_release(struct pv_secret_ref *s)
{
	free(s->value);
	free(s->where);
}

void pv_playbook_free(struct pv_playbook *pb)
{
	if (!pb)
		return;
	free(pb->path);
	free(pb->dir);
	free(pb->lab);
	free(pb->domain.realm);
	free(pb->domain.netbios);
	free(pb->domain.dns_domain);
	free(pb->domain.base_dn);
	free(pb->domain.dc_name);
	free(pb->domain.dc_address);
	free(pb->domain.ca_file);
	free(pb->domain.admin);
	secret_release(&pb->domain.admin_password);
	host_release(&pb->domain.host);
	for (size_t i = 0; i < pb->domain.nother_dcs; i++) {
		free(pb->domain.other_dcs[i].name);
		free(pb->domain.other_dcs[i].address);
	}
	free(pb->domain.other_dcs);
	free(pb->inventory);
	free(pb->inventory_group);
	free(pb->users.name_template);
	free(pb->users.ou);
	secret_release(&pb->users.password);
	host_release(&pb->server.host);
	free(pb->server.alias_template);
	free(pb->server.share_template);
	free(pb->server.share_path);
	free(pb->server.smb_encrypt);
	free(pb->server.fileset);
	free(pb->server.service);
	for (size_t i = 0; i < pb->nclients; i++)
		host_release(&pb->clients[i]);
	free(pb->clients);
	free(pb->controller.results);
	host_release(&pb->controller.host);
	free(pb->driver.name);
	free(pb->driver.fsct_path);
	free(pb->driver.fsct_workload);
	free(pb->driver.client_command);
	free(pb->driver.controller_command);
	free(pb->drain.command);
	free(pb->drain.metric);
	free(pb);
}

const struct pv_host *pv_playbook_client(const struct pv_playbook *pb, const char *name)
{
	if (!pb || !name)
		return NULL;
	for (size_t i = 0; i < pb->nclients; i++)
		if (!strcmp(pb->clients[i].name, name))
			return &pb->clients[i];
	return NULL;
}
