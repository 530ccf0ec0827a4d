/* playbooks/names.c: name template expansion and the AD / NetBIOS name checks. */
#include "playbooks/names.h"

#include "util/err.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

static const struct {
	const char *name; /* without braces */
	unsigned bit;
} placeholders[] = {
	{"client", PV_PLAYBOOK_NAMES_CLIENT},
	{"server", PV_PLAYBOOK_NAMES_SERVER},
	{"n", PV_PLAYBOOK_NAMES_N},
	{"k", PV_PLAYBOOK_NAMES_K},
};

#define NPLACEHOLDERS (sizeof(placeholders) / sizeof(placeholders[0]))

/* Characters sAMAccountName may not hold (MS-ADTS 3.1.1.5.2.3 and the ADUC rules). */
static const char sam_forbidden[] = "\"/\\[]:;|=,+*?<>@";

/* The placeholder starting at p (which points at '{'): its bit, and *len its length with the
 * braces. 0 with a recorded error when unknown or unterminated. */
static unsigned placeholder_at(const char *tmpl, const char *p, size_t *len)
{
	const char *end = strchr(p, '}');

	if (!end) {
		pv_error(PV_ECONFIG,
			 "unterminated placeholder in template '%s'; expected {client}, "
			 "{server}, {n} or {k}",
			 tmpl);
		return 0;
	}
	for (size_t i = 0; i < NPLACEHOLDERS; i++) {
		size_t nl = strlen(placeholders[i].name);

		if ((size_t)(end - p - 1) == nl && !strncmp(p + 1, placeholders[i].name, nl)) {
			*len = nl + 2;
			return placeholders[i].bit;
		}
	}
	pv_error(PV_ECONFIG,
		 "unknown placeholder '%.*s' in template '%s'; expected {client}, "
		 "{server}, {n} or {k}",
		 (int)(end - p + 1), p, tmpl);
	return 0;
}

int pv_playbook_names_placeholders(const char *tmpl, unsigned *mask)
{
	unsigned m = 0, bit;
	size_t len;

	for (const char *p = tmpl; *p; p++) {
		if (*p != '{')
			continue;
		bit = placeholder_at(tmpl, p, &len);
		if (!bit)
			return PV_ECONFIG;
		m |= bit;
		p += len - 1;
	}
	*mask = m;
	return 0;
}

static void list_bits(unsigned bits, char *out, size_t outsz)
{
	size_t used = 0;
	int first = 1;

	out[0] = '\0';
	for (size_t i = 0; i < NPLACEHOLDERS; i++) {
		if (!(bits & placeholders[i].bit))
			continue;
		int w = snprintf(out + used, outsz - used, "%s{%s}", first ? "" : ", ",
				 placeholders[i].name);
		if (w < 0 || (size_t)w >= outsz - used)
			return;
		used += (size_t)w;
		first = 0;
	}
}

int pv_playbook_names_check_template(const char *tmpl, unsigned allowed, unsigned required)
{
	char list[64];
	unsigned mask;

	list_bits(allowed, list, sizeof(list));
	if (!*tmpl)
		return pv_error(PV_ECONFIG, "template is empty; expected text using %s", list);
	if (pv_playbook_names_placeholders(tmpl, &mask))
		return PV_ECONFIG;
	for (size_t i = 0; i < NPLACEHOLDERS; i++) {
		unsigned bit = placeholders[i].bit;

		if ((mask & bit) && !(allowed & bit))
			return pv_error(PV_ECONFIG,
					"placeholder {%s} cannot be used in template '%s'; "
					"expected only %s",
					placeholders[i].name, tmpl, list);
		if ((required & bit) && !(mask & bit))
			return pv_error(PV_ECONFIG,
					"template '%s' has no {%s}; expected a template "
					"containing {%s} so that every name differs",
					tmpl, placeholders[i].name, placeholders[i].name);
	}
	return 0;
}

int pv_playbook_names_expand(const char *tmpl, const char *client, const char *server,
			     unsigned long n, unsigned long k, char *out, size_t outsz)
{
	char num[24];
	const char *val;
	size_t used = 0, vl, len;
	unsigned bit;

	if (!outsz)
		return pv_error(PV_ECONFIG, "no room to expand template '%s'", tmpl);
	for (const char *p = tmpl; *p; p++) {
		if (*p != '{') {
			val = p;
			vl = 1;
		} else {
			bit = placeholder_at(tmpl, p, &len);
			if (!bit)
				return PV_ECONFIG;
			p += len - 1;
			if (bit == PV_PLAYBOOK_NAMES_CLIENT)
				val = client;
			else if (bit == PV_PLAYBOOK_NAMES_SERVER)
				val = server;
			else {
				snprintf(num, sizeof(num), "%lu",
					 bit == PV_PLAYBOOK_NAMES_N ? n : k);
				val = num;
			}
			if (!val)
				return pv_error(
					PV_ECONFIG,
					"template '%s' uses {%s} but no %s name "
					"is known",
					tmpl, bit == PV_PLAYBOOK_NAMES_CLIENT ? "client" : "server",
					bit == PV_PLAYBOOK_NAMES_CLIENT ? "client" : "server");
			vl = strlen(val);
		}
		if (vl >= outsz - used)
			return pv_error(PV_ECONFIG,
					"name from template '%s' is longer than %zu "
					"bytes",
					tmpl, outsz - 1);
		memcpy(out + used, val, vl);
		used += vl;
	}
	out[used] = '\0';
	return 0;
}

size_t pv_playbook_names_length(const char *name)
{
	size_t n = 0;

	/* Count every byte that is not a UTF-8 continuation byte (10xxxxxx). */
	for (const unsigned char *p = (const unsigned char *)name; *p; p++)
		if ((*p & 0xc0) != 0x80)
			n++;
	return n;
}

int pv_playbook_names_check_sam(const char *what, const char *name)
{
	size_t len = pv_playbook_names_length(name);

	if (!len)
		return pv_error(PV_ECONFIG, "%s is empty; expected 1 to %d characters", what,
				PV_PLAYBOOK_NAMES_SAM_MAX);
	if (len > PV_PLAYBOOK_NAMES_SAM_MAX)
		return pv_error(PV_ECONFIG,
				"%s '%s' is %zu characters; sAMAccountName allows at "
				"most %d",
				what, name, len, PV_PLAYBOOK_NAMES_SAM_MAX);
	for (const unsigned char *p = (const unsigned char *)name; *p; p++) {
		if (*p < 0x20 || *p == 0x7f)
			return pv_error(PV_ECONFIG,
					"%s contains the control character 0x%02x; "
					"sAMAccountName forbids control characters",
					what, *p);
		if (strchr(sam_forbidden, *p))
			return pv_error(PV_ECONFIG,
					"%s '%s' contains '%c'; sAMAccountName "
					"forbids any of %s",
					what, name, *p, sam_forbidden);
	}
	if (name[strlen(name) - 1] == '.')
		return pv_error(PV_ECONFIG,
				"%s '%s' ends with '.'; sAMAccountName cannot end "
				"with a period",
				what, name);
	if (name[0] == '-')
		return pv_error(PV_ECONFIG,
				"%s '%s' starts with '-', which the tools on the hosts would "
				"read as an option; expected a name starting with a letter or "
				"digit",
				what, name);
	return 0;
}

/* The first control character of s (C0 or DEL), or 0. */
static unsigned char control_in(const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (*p < 0x20 || *p == 0x7f)
			return *p;
	return 0;
}

int pv_playbook_names_check_client(const char *what, const char *name)
{
	/* what run/step.c puts in a step's folder besides the clients' folders */
	static const char *const step_entries[] = {"controller",   "watch.csv",	    "watch.json",
						   "watch-dc.csv", "watch-dc.json", NULL};

	for (size_t i = 0; step_entries[i]; i++)
		if (!strcasecmp(name, step_entries[i]))
			return pv_error(PV_ECONFIG,
					"%s '%s' is the name of %s in each step's folder of a run "
					"(step-NN/%s), where the client's results would go too; "
					"expected another name for this client (its address and "
					"SSH settings stay as they are)",
					what, name,
					i ? "the watch's samples" : "the controller's results",
					step_entries[i]);
	return 0;
}

/* Samba's INVALID_SHARENAME_CHARS (source3/include/smb.h), '/' and '\' apart, and the
 * brackets of an smb.conf section. */
static const char share_forbidden[] = "%<>*?|+=;:\",[]";

int pv_playbook_names_check_share(const char *what, const char *name)
{
	static const char *const reserved[] = {"global", "homes", "printers", "ipc$", NULL};
	size_t len = pv_playbook_names_length(name), bytes = strlen(name);
	unsigned char ctl;
	const char *p;

	if (!len)
		return pv_error(PV_ECONFIG, "%s is empty; expected 1 to %d characters", what,
				PV_PLAYBOOK_NAMES_SHARE_MAX);
	if ((ctl = control_in(name)))
		return pv_error(PV_ECONFIG,
				"%s contains the control character 0x%02x; share names cannot "
				"hold control characters",
				what, ctl);
	if ((p = strpbrk(name, "/\\")))
		return pv_error(PV_ECONFIG,
				"%s '%s' contains '%c', a path separator; expected a single "
				"name (it is also a folder under share_path)",
				what, name, *p);
	if ((p = strpbrk(name, share_forbidden)))
		return pv_error(PV_ECONFIG,
				"%s '%s' contains '%c'; share names cannot hold any of %s", what,
				name, *p, share_forbidden);
	if (len > PV_PLAYBOOK_NAMES_SHARE_MAX)
		return pv_error(PV_ECONFIG,
				"%s '%.64s...' is %zu characters; share names allow at most %d",
				what, name, len, PV_PLAYBOOK_NAMES_SHARE_MAX);
	if (name[0] == '-')
		return pv_error(PV_ECONFIG,
				"%s '%s' starts with '-', which net and the file tools would "
				"read as an option; expected a letter or digit there",
				what, name);
	if (name[0] == ' ' || name[bytes - 1] == ' ')
		return pv_error(PV_ECONFIG,
				"%s '%s' %s with a space, which smb.conf drops; expected none "
				"there",
				what, name, name[0] == ' ' ? "starts" : "ends");
	if (!strcmp(name, ".") || !strcmp(name, ".."))
		return pv_error(PV_ECONFIG,
				"%s is '%s', which names a folder of the path, not a new one", what,
				name);
	for (size_t i = 0; reserved[i]; i++)
		if (!strcasecmp(name, reserved[i]))
			return pv_error(PV_ECONFIG,
					"%s '%s' is reserved ([%s] is special to Samba and "
					"Windows); expected another name",
					what, name, reserved[i]);
	return 0;
}

int pv_playbook_names_check_path(const char *what, const char *path, int absolute)
{
	unsigned char ctl;
	size_t len = strlen(path);

	if (!len)
		return pv_error(PV_ECONFIG, "%s is empty; expected a path", what);
	if ((ctl = control_in(path)))
		return pv_error(PV_ECONFIG,
				"%s contains the control character 0x%02x; paths cannot hold "
				"control characters",
				what, ctl);
	if (absolute && path[0] != '/')
		return pv_error(PV_ECONFIG, "%s is '%.64s', a relative path", what, path);
	if (strstr(path, "//"))
		return pv_error(PV_ECONFIG, "%s is '%.64s', which has an empty component ('//')",
				what, path);
	if (len > 1 && path[len - 1] == '/')
		return pv_error(PV_ECONFIG, "%s is '%.64s', which ends with '/'", what, path);
	for (const char *p = path; *p;) {
		size_t n = strcspn(p, "/");

		if ((n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
			return pv_error(PV_ECONFIG, "%s is '%.64s', which has a '%.*s' component",
					what, path, (int)n, p);
		p += n;
		if (*p == '/')
			p++;
	}
	return 0;
}

int pv_playbook_names_check_account(const char *what, const char *name)
{
	unsigned char ctl;

	if (!*name)
		return pv_error(PV_ECONFIG, "%s is empty; expected an account name", what);
	if ((ctl = control_in(name)))
		return pv_error(PV_ECONFIG, "%s contains the control character 0x%02x", what, ctl);
	if (name[0] == '-')
		return pv_error(PV_ECONFIG,
				"%s is '%.64s', which starts with '-': kinit and net on the "
				"server would read it as an option",
				what, name);
	if (strchr(name, '%'))
		return pv_error(PV_ECONFIG,
				"%s is '%.64s', which contains '%%': net -U takes what follows "
				"it as a password",
				what, name);
	return 0;
}

int pv_playbook_names_check_host(const char *what, const char *name)
{
	size_t len = strlen(name);

	if (!len)
		return pv_error(PV_ECONFIG, "%s is empty; expected 1 to %d letters, digits or '-'",
				what, PV_PLAYBOOK_NAMES_HOST_MAX);
	for (const char *p = name; *p; p++) {
		char ch = *p;

		if (!((ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') ||
		      (ch >= '0' && ch <= '9') || ch == '-')) {
			if ((unsigned char)ch < 0x20 || ch == 0x7f || (ch & 0x80))
				return pv_error(PV_ECONFIG,
						"%s contains the byte 0x%02x; "
						"expected only letters, digits and '-'",
						what, (unsigned char)ch);
			return pv_error(PV_ECONFIG,
					"%s '%s' contains '%c'; expected only "
					"letters, digits and '-'",
					what, name, ch);
		}
	}
	if (len > PV_PLAYBOOK_NAMES_HOST_MAX)
		return pv_error(PV_ECONFIG,
				"%s '%s' is %zu characters; NetBIOS names allow at "
				"most %d",
				what, name, len, PV_PLAYBOOK_NAMES_HOST_MAX);
	if (name[0] == '-' || name[len - 1] == '-')
		return pv_error(PV_ECONFIG,
				"%s '%s' %s with '-'; expected a letter or digit "
				"there",
				what, name, name[0] == '-' ? "starts" : "ends");
	return 0;
}

int pv_playbook_names_check_safe(const char *what, const char *value, int path)
{
	const char *p = value + strspn(value, path ? PV_PLAYBOOK_NAMES_SAFE_CHARS "/"
						   : PV_PLAYBOOK_NAMES_SAFE_CHARS);

	if (!*p)
		return 0;
	if ((unsigned char)*p < 0x20 || (unsigned char)*p >= 0x7f)
		return pv_error(PV_ECONFIG,
				"%s holds the byte 0x%02x; it reaches a shell on the hosts, so "
				"expected only letters, digits, '.', '_', '-'%s",
				what, (unsigned char)*p, path ? " and '/'" : "");
	return pv_error(PV_ECONFIG,
			"%s is '%.64s', which contains '%c'; it reaches a shell on the hosts, so "
			"expected only letters, digits, '.', '_', '-'%s",
			what, value, *p, path ? " and '/'" : "");
}

/* ---- the command driver's placeholders ---- */

static const char *const driver_placeholders[] = {
	[PV_PLAYBOOK_PH_CLIENT] = "client",
	[PV_PLAYBOOK_PH_USERS] = "users",
	[PV_PLAYBOOK_PH_USERS_TOTAL] = "users_total",
	[PV_PLAYBOOK_PH_STEP] = "step",
	[PV_PLAYBOOK_PH_STEPS] = "steps",
	[PV_PLAYBOOK_PH_DURATION] = "duration",
	[PV_PLAYBOOK_PH_WARMUP] = "warmup",
	[PV_PLAYBOOK_PH_RESULTS] = "results",
	[PV_PLAYBOOK_PH_PASSWORD_FILE] = "password_file",
	[PV_PLAYBOOK_PH_CLIENTS] = "clients",
	[PV_PLAYBOOK_PH_SERVER] = "server",
	[PV_PLAYBOOK_PH_SERVER_ADDRESS] = "server_address",
	[PV_PLAYBOOK_PH_ALIAS_TEMPLATE] = "alias_template",
	[PV_PLAYBOOK_PH_USER_TEMPLATE] = "user_template",
	[PV_PLAYBOOK_PH_FIRST_USER] = "first_user",
	[PV_PLAYBOOK_PH_LAST_USER] = "last_user",
	[PV_PLAYBOOK_PH_SHARE] = "share",
	[PV_PLAYBOOK_PH_SHARES] = "shares",
	[PV_PLAYBOOK_PH_DOMAIN] = "domain",
	[PV_PLAYBOOK_PH_REALM] = "realm",
	[PV_PLAYBOOK_PH_DNS_DOMAIN] = "dns_domain",
	[PV_PLAYBOOK_PH_LAB] = "lab",
	[PV_PLAYBOOK_PH_N] = "n",
};

#define NDRIVER (sizeof(driver_placeholders) / sizeof(driver_placeholders[0]))

size_t pv_playbook_placeholder_len(const char *p)
{
	size_t n;

	if (*p != '{')
		return 0;
	n = strspn(p + 1, "abcdefghijklmnopqrstuvwxyz_");
	return n && p[1 + n] == '}' ? n + 2 : 0;
}

int pv_playbook_placeholder_of(const char *p, size_t len)
{
	for (size_t i = 0; len > 2 && i < NDRIVER; i++)
		if (strlen(driver_placeholders[i]) == len - 2 &&
		    !strncmp(p + 1, driver_placeholders[i], len - 2))
			return (int)i;
	return -1;
}

void pv_playbook_placeholder_list(char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	/* every one but {n}, which is left for the command's own loop */
	for (size_t i = 0; i < NDRIVER && used < len; i++)
		if (i != PV_PLAYBOOK_PH_N)
			used += (size_t)snprintf(buf + used, len - used, "%s{%s}", i ? " " : "",
						 driver_placeholders[i]);
}

long pv_playbook_placeholder_unknown(const char *cmd, size_t *len)
{
	for (const char *p = cmd; *p; p++) {
		size_t n = pv_playbook_placeholder_len(p);

		if (n && pv_playbook_placeholder_of(p, n) < 0) {
			*len = n;
			return (long)(p - cmd);
		}
		if (n)
			p += n - 1;
	}
	return -1;
}
