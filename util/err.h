/* util/err.h: outcome codes and the one recorded error message per thread.
 *
 * A failing function records one message with pv_error() and returns the code; the caller
 * either handles it or passes the code up unchanged. Codes are grouped by what the user can
 * do about them and double as process exit statuses (documented in --help, provision(1) and
 * docs/usage.md). */
#ifndef PV_UTIL_ERR_H
#define PV_UTIL_ERR_H

#include <stddef.h>

enum pv_status {
	PV_OK = 0,
	PV_EFAIL = 1,	     /* generic failure: a check or operation failed (see message) */
	PV_EUSAGE = 2,	     /* bad command line */
	PV_ECONFIG = 3,	     /* playbook or input invalid: fix the file or option named */
	PV_ECRED = 4,	     /* credentials refused: wrong password, key or ticket */
	PV_ETRUST = 5,	     /* TLS certificate or SSH host key could not be verified */
	PV_EUNREACH = 6,     /* host unreachable: name resolution, refused, timeout */
	PV_EDIR = 7,	     /* the directory (LDAP/Kerberos server) refused an operation */
	PV_EREMOTE = 8,	     /* a command or file operation on a remote host failed */
	PV_EIO = 9,	     /* local file or resource error */
	PV_EPARTIAL = 10,    /* some hosts or objects done, others failed */
	PV_ECONFLICT = 11,   /* an object exists that this lab does not own */
	PV_ENOTIMPL = 12,    /* not done by this version (run with driver fsct) */
	PV_EINCOMPLETE = 13, /* status: the lab lacks something the playbook asks for */
	PV_ETIMEOUT = 14,    /* wait: the queue did not drain in time; run: its timeout passed */
	PV_ESTOPPED = 15,    /* interrupted (Ctrl-C, SIGTERM): what was started was stopped */
	PV_EBUSY = 16,	     /* another provision is changing this lab: nothing was done */
	PV_EBUG = 70	     /* internal error: please report */
};

/* Record a message (printf format) as this thread's error and return code. */
int pv_error(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Append context in front of the recorded message: "<context>: <old message>"; returns code. */
int pv_error_prefix(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* This thread's last recorded message ("" when none). Valid until the next pv_error. */
const char *pv_errmsg(void);
void pv_error_clear(void);
/* Short stable name of a code ("usage", "config", ...). */
const char *pv_status_name(int code);
/* One-line meaning of a code for --help and documentation. */
const char *pv_status_help(int code);

#endif
