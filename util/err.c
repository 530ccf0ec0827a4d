/* util/err.c: the per-thread error message and the table of outcome codes. */
#include "util/err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static _Thread_local char msg[1024];

int pv_error(int code, const char *fmt, ...)
{
	char tmp[sizeof(msg)]; /* an argument may be pv_errmsg() itself */
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	memcpy(msg, tmp, sizeof(msg));
	return code;
}

int pv_error_prefix(int code, const char *fmt, ...)
{
	char old[sizeof(msg)];
	char pre[sizeof(msg)];
	va_list ap;

	memcpy(old, msg, sizeof(msg));
	va_start(ap, fmt);
	vsnprintf(pre, sizeof(pre), fmt, ap);
	va_end(ap);
	if (old[0]) {
		char both[2 * sizeof(msg) + 2];

		snprintf(both, sizeof(both), "%s: %s", pre, old);
		snprintf(msg, sizeof(msg), "%.*s", (int)sizeof(msg) - 1, both);
	} else {
		memcpy(msg, pre, sizeof(msg));
	}
	return code;
}

const char *pv_errmsg(void)
{
	return msg;
}

void pv_error_clear(void)
{
	msg[0] = '\0';
}

static const struct {
	int code;
	const char *name;
	const char *help;
} codes[] = {
	{PV_OK, "ok", "success"},
	{PV_EFAIL, "failed", "an operation or check failed"},
	{PV_EUSAGE, "usage", "bad command line"},
	{PV_ECONFIG, "config", "playbook or input invalid"},
	{PV_ECRED, "credentials", "credentials refused (password, key or ticket)"},
	{PV_ETRUST, "trust", "TLS certificate or SSH host key not verified"},
	{PV_EUNREACH, "unreachable", "host unreachable (name, refused, timeout)"},
	{PV_EDIR, "directory", "the directory server refused an operation"},
	{PV_EREMOTE, "remote", "a remote command or file operation failed"},
	{PV_EIO, "io", "local file or resource error"},
	{PV_EPARTIAL, "partial", "some hosts or objects done, others failed"},
	{PV_ECONFLICT, "conflict", "an object exists that this lab does not own"},
	{PV_ENOTIMPL, "not-implemented", "not done by this version (run: driver fsct)"},
	{PV_EINCOMPLETE, "incomplete", "status: the lab lacks something the playbook asks for"},
	{PV_ETIMEOUT, "timeout", "wait: the queue did not drain in time; run: its timeout passed"},
	{PV_ESTOPPED, "stopped", "interrupted (Ctrl-C or SIGTERM); what was started was stopped"},
	{PV_EBUSY, "busy", "another provision is changing this lab; nothing was done"},
	{PV_EBUG, "bug", "internal error, please report"},
};

const char *pv_status_name(int code)
{
	for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++)
		if (codes[i].code == code)
			return codes[i].name;
	return "unknown";
}

const char *pv_status_help(int code)
{
	for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++)
		if (codes[i].code == code)
			return codes[i].help;
	return "unknown";
}
