/* playbooks/names.h: name templates and the Active Directory / NetBIOS rules names must obey.
 *
 * Pure functions, no I/O. A template is text with placeholders, each replaced by a value:
 *   {client}  a client's name        {server}  the file server's name
 *   {n}       user / alias number, from 1     {k}  share number, from 1
 * Every '{' must open one of these (there is no {lab}: the lab id tags objects, it is not part
 * of their names). A '}' outside a placeholder is plain text.
 * Failing functions record one message with pv_error() (no file location: callers add it with
 * pv_error_prefix()) and return PV_ECONFIG. */
#ifndef PV_PLAYBOOKS_NAMES_H
#define PV_PLAYBOOKS_NAMES_H

#include <stddef.h>

/* sAMAccountName: at most 20 characters (MS-ADTS 3.1.1.5.2.3, "pre-Windows 2000" logon name). */
#define PV_PLAYBOOK_NAMES_SAM_MAX 20
/* NetBIOS computer name: at most 15 characters (the 16th byte is the NetBIOS suffix). */
#define PV_PLAYBOOK_NAMES_HOST_MAX 15

/* Placeholder bits for pv_playbook_names_placeholders() and pv_playbook_names_check_template(). */
enum pv_playbook_names_placeholder {
	PV_PLAYBOOK_NAMES_CLIENT = 1u << 0,
	PV_PLAYBOOK_NAMES_SERVER = 1u << 1,
	PV_PLAYBOOK_NAMES_N = 1u << 2,
	PV_PLAYBOOK_NAMES_K = 1u << 3,
};

/* Expand tmpl into out (outsz bytes, always NUL-terminated on success). client or server may
 * be NULL when tmpl does not use them. Returns 0, or PV_ECONFIG (recorded) for an unknown or
 * unterminated placeholder, a placeholder whose value is NULL, or a result that does not fit. */
int pv_playbook_names_expand(const char *tmpl, const char *client, const char *server,
			     unsigned long n, unsigned long k, char *out, size_t outsz);

/* Set *mask to the placeholders tmpl uses. PV_ECONFIG (recorded) for an unknown or unterminated
 * placeholder; *mask is set only on success. */
int pv_playbook_names_placeholders(const char *tmpl, unsigned *mask);

/* tmpl is non-empty, uses only placeholders in allowed and every one in required.
 * Returns 0 or PV_ECONFIG (recorded, naming the template and the placeholder). */
int pv_playbook_names_check_template(const char *tmpl, unsigned allowed, unsigned required);

/* Length of a UTF-8 name in characters (code points), as AD counts them. */
size_t pv_playbook_names_length(const char *name);

/* name is a valid sAMAccountName: 1..20 characters, none of "/\[]:;|=,+*?<>@ or a control
 * character, not ending with '.'; and, our rule, not starting with '-' (such a name reaches
 * tools on the hosts as an argument: getent, chown, the users' folders). what names it in the
 * message ("user name"). 0 or PV_ECONFIG. */
int pv_playbook_names_check_sam(const char *what, const char *name);

/* A client's name is also a folder of each step's folder of a run (step-NN/<client>, docs/run.md)
 * beside the step's own entries: the controller's folder and the server's and DC's watches.
 * name is not one of those (any case: host names are), so that no client's results land on
 * them. what names it ("client name"). 0 or PV_ECONFIG naming the clash and the fix. */
int pv_playbook_names_check_client(const char *what, const char *name);

/* An SMB share name: the longest Windows and Samba accept (NNLEN, lmcons.h). */
#define PV_PLAYBOOK_NAMES_SHARE_MAX 80

/* name is a valid share name, safe as Samba's share name and as a folder under share_path:
 * 1..80 characters; no control character, no path separator ('/', '\\'), none of Samba's
 * forbidden share-name characters (%<>*?|+=;:", from INVALID_SHARENAME_CHARS) nor '[' and ']'
 * (smb.conf section brackets, forbidden by Windows too); not starting with '-' (it would read
 * as an option to net and the file tools) nor with or ending with a space (smb.conf trims
 * them); not "." or ".."; not one of smb.conf's special sections global, homes, printers nor
 * the IPC$ share (any case). what names it in the message ("share name"). 0 or PV_ECONFIG. */
int pv_playbook_names_check_share(const char *what, const char *name);

/* path is a normalized path: non-empty, no control character, no empty component ("//"), no
 * trailing '/' (unless path is "/"), no "." or ".." component; and absolute (starting with
 * '/') when absolute is non-zero. A path passing this means the same to every tool on the host
 * whatever links lie on the way up, and never starts with '-'. what names it in the message
 * ("'server.share_path'"). 0 or PV_ECONFIG. */
int pv_playbook_names_check_path(const char *what, const char *path, int absolute);

/* name is an account name given to tools on hosts (kinit, net -U): non-empty, no control
 * character, not starting with '-' (an option to them), no '%' (net -U takes what follows it
 * as the password). what names it ("'domain.admin'"). 0 or PV_ECONFIG. */
int pv_playbook_names_check_account(const char *what, const char *name);

/* name is a valid NetBIOS / alias host name: 1..15 characters of [A-Za-z0-9-], not starting or
 * ending with '-'. what names it in the message ("alias"). 0 or PV_ECONFIG. */
int pv_playbook_names_check_host(const char *what, const char *name);

/* Values that fill the command driver's placeholders reach a shell: besides being quoted for
 * the shell they land in (run/render.c), the playbook's names and folders that become such
 * values are held to these characters when it is read. */
#define PV_PLAYBOOK_NAMES_SAFE_CHARS                                                               \
	"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-"

/* value holds only PV_PLAYBOOK_NAMES_SAFE_CHARS (and '/' when path is non-zero). what names it in
 * the message ("'server.share_path'"). 0 or PV_ECONFIG. */
int pv_playbook_names_check_safe(const char *what, const char *value, int path);

/* The command driver's placeholders (docs/playbook.md): one table, which the playbook check
 * (an unknown one is refused when the playbook is read) and run/render.c (which fills them
 * in) share. */
enum pv_playbook_placeholder {
	PV_PLAYBOOK_PH_CLIENT,
	PV_PLAYBOOK_PH_USERS,
	PV_PLAYBOOK_PH_USERS_TOTAL,
	PV_PLAYBOOK_PH_STEP,
	PV_PLAYBOOK_PH_STEPS,
	PV_PLAYBOOK_PH_DURATION,
	PV_PLAYBOOK_PH_WARMUP,
	PV_PLAYBOOK_PH_RESULTS,
	PV_PLAYBOOK_PH_PASSWORD_FILE,
	PV_PLAYBOOK_PH_CLIENTS,
	PV_PLAYBOOK_PH_SERVER,
	PV_PLAYBOOK_PH_SERVER_ADDRESS,
	PV_PLAYBOOK_PH_ALIAS_TEMPLATE,
	PV_PLAYBOOK_PH_USER_TEMPLATE,
	PV_PLAYBOOK_PH_FIRST_USER,
	PV_PLAYBOOK_PH_LAST_USER,
	PV_PLAYBOOK_PH_SHARE,
	PV_PLAYBOOK_PH_SHARES,
	PV_PLAYBOOK_PH_DOMAIN,
	PV_PLAYBOOK_PH_REALM,
	PV_PLAYBOOK_PH_DNS_DOMAIN,
	PV_PLAYBOOK_PH_LAB,
	PV_PLAYBOOK_PH_N, /* left as it is, for the command's own loop */
};

/* At p, a {word} of lower-case letters and '_': its length with the braces, else 0 (any other
 * brace is the shell's: ${X}, { a; }). */
size_t pv_playbook_placeholder_len(const char *p);
/* The placeholder {word} at p (pv_playbook_placeholder_len() bytes), or -1 when it is none. */
int pv_playbook_placeholder_of(const char *p, size_t len);
/* The placeholders, for messages: "{client} {users} ... {lab}" into buf (len bytes). */
void pv_playbook_placeholder_list(char *buf, size_t len);
/* The offset in cmd of its first {word} that is no placeholder (*len: its length), or -1. */
long pv_playbook_placeholder_unknown(const char *cmd, size_t *len);

#endif
