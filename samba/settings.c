/* samba/settings.c: one Samba parameter checked by the server itself, read, set and put back
 * in its registry configuration, for `sweep` (see samba.h). */
#include "samba/samba.h"

#include "remote/quote.h"
#include "remote/remote.h"
#include "util/err.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const char pv_samba_setting_sh[];

/* The script for action with its variables (any may be NULL), run; its status, stdout. */
static int setting(struct pv_remote *rem, const char *action, const char *section,
		   const char *param, const char *value, struct pv_buf *out, int *status)
{
	struct pv_buf script = PV_BUF_INIT;
	int r;

	pv_remote_var(&script, "action", action);
	if (section)
		pv_remote_var(&script, "section", section);
	if (param)
		pv_remote_var(&script, "param", param);
	if (value)
		pv_remote_var(&script, "value", value);
	pv_buf_addstr(&script, pv_samba_setting_sh);
	r = pv_remote_sh(rem, "a Samba parameter", &script, NULL, 0, out, status, 60);
	pv_buf_release(&script, 0);
	return r;
}

int pv_samba_setting_valid(const char *param, const char *value)
{
	const char *bad = NULL;

	if (!*param)
		bad = "an empty name";
	for (const char *p = param; !bad && *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f || strchr("=[]#;\\", *p))
			bad = "a name holding '=', '[', ']', '#', ';', '\\' or a control character";
	for (const char *p = value; !bad && *p; p++)
		if (((unsigned char)*p < 0x20 && *p != '\t') || *p == 0x7f)
			bad = "a value holding a line break or a control character";
	if (!bad && (strlen(param) > 100 || strlen(value) > 1000))
		bad = "a name over 100 bytes or a value over 1000";
	if (bad)
		return pv_error(PV_EUSAGE, "the setting '%.100s = %.100s' has %s", param, value,
				bad);
	return PV_OK;
}

/* The first line of text that holds needle (its words, for the message), or "". */
static void line_with(const char *text, const char *needle, char *out, size_t len)
{
	const char *at = strstr(text, needle), *start, *end;

	out[0] = '\0';
	if (!at)
		return;
	for (start = at; start > text && start[-1] != '\n'; start--)
		;
	end = strchr(at, '\n');
	snprintf(out, len, "%.*s", (int)(end ? end - start : (long)strlen(start)), start);
}

int pv_samba_setting_judge(const char *param, const char *text, int status,
			   enum pv_samba_scope *scope)
{
	char global[160], said[256] = "";

	snprintf(global, sizeof(global), "Global parameter %s found in service section", param);
	line_with(text, "Unknown parameter encountered", said, sizeof(said));
	if (said[0])
		return pv_error(PV_ECONFIG,
				"the server's testparm does not know the parameter '%s' (it says: "
				"%s): check its name in smb.conf(5) of the server's Samba",
				param, said);
	if (status != 0 || strstr(text, "Error loading")) {
		static const char *const why[] = {"value is", "not boolean", "nvalid", "rror",
						  NULL};

		for (int i = 0; why[i] && !said[0]; i++)
			line_with(text, why[i], said, sizeof(said));
		return pv_error(
			PV_ECONFIG,
			"the server's testparm refuses the value of '%s' (it says: %s): see "
			"smb.conf(5) for what the parameter takes",
			param, said[0] ? said : "it failed");
	}
	*scope = strcasestr(text, global) ? PV_SAMBA_GLOBAL : PV_SAMBA_SHARE;
	return PV_OK;
}

int pv_samba_setting_check(struct pv_remote *rem, const char *param, const char *value,
			   enum pv_samba_scope *scope)
{
	struct pv_buf out = PV_BUF_INIT;
	int status = 0, r;

	if ((r = pv_samba_setting_valid(param, value)) != PV_OK)
		return r;
	r = setting(rem, "check", NULL, param, value, &out, &status);
	if (r == PV_OK)
		r = pv_samba_setting_judge(param, out.len ? out.data : "", status, scope);
	pv_buf_release(&out, 0);
	return r;
}

int pv_samba_setting_get(struct pv_remote *rem, const char *section, const char *param, bool *set,
			 char *value, size_t len)
{
	struct pv_buf out = PV_BUF_INIT;
	int status = 0, r = setting(rem, "get", section, param, NULL, &out, &status);

	*set = false;
	value[0] = '\0';
	if (r == PV_OK && status == 0) {
		size_t n = out.len;

		while (n && (out.data[n - 1] == '\n' || out.data[n - 1] == '\r'))
			n--;
		if (n >= len)
			r = pv_error(PV_EREMOTE, "the registry's '%s' of [%s] is over %zu bytes",
				     param, section, len - 1);
		else {
			memcpy(value, out.data ? out.data : "", n);
			value[n] = '\0';
			*set = true;
		}
	}
	pv_buf_release(&out, 0);
	return r;
}

int pv_samba_setting_put(struct pv_remote *rem, const char *section, const char *param,
			 const char *value)
{
	int status = 0,
	    r = setting(rem, value ? "set" : "del", section, param, value, NULL, &status);

	if (r == PV_OK && status != 0)
		r = pv_error(PV_EREMOTE, "net conf %s [%s] '%s' on the server: %s",
			     value ? "setparm" : "delparm", section, param, pv_errmsg());
	return r;
}

int pv_samba_registry_global(struct pv_remote *rem, char *how, size_t len)
{
	struct pv_buf out = PV_BUF_INIT;
	int status = 0, r = setting(rem, "registry", NULL, NULL, NULL, &out, &status);

	how[0] = '\0';
	if (r == PV_OK && out.len) {
		char *nl = memchr(out.data, '\n', out.len);

		snprintf(how, len, "%.*s", (int)(nl ? nl - out.data : (long)out.len), out.data);
	}
	pv_buf_release(&out, 0);
	return r;
}

int pv_samba_reload(struct pv_remote *rem)
{
	int status = 0, r = setting(rem, "reload", NULL, NULL, NULL, NULL, &status);

	if (r == PV_OK && status != 0)
		r = pv_error(PV_EREMOTE, "smbcontrol smbd reload-config on the server: %s",
			     pv_errmsg());
	return r;
}

int pv_samba_effective(struct pv_remote *rem, struct pv_buf *out)
{
	int status = 0, r = setting(rem, "config", NULL, NULL, NULL, out, &status);

	if (r == PV_OK && (status != 0 || !out->len))
		r = pv_error(PV_EREMOTE, "testparm -s on the server printed nothing");
	return r;
}
