/* phases/client.h: the client phase: this lab's block of server aliases in every client's hosts
 * file (and cleanup: the block taken out, nothing else), clients in parallel over SSH.
 * Windows clients (OpenSSH for Windows) are edited over SFTP; that path is written to the
 * documented behaviour and not tested here. */
#ifndef PV_PHASES_CLIENT_H
#define PV_PHASES_CLIENT_H

#include "phases/phase.h"
#include "util/buf.h"

struct pv_phases_client_opts {
	bool cleanup;
	const struct pv_playbook_host *const *clients; /* which clients; all of them when NULL */
	size_t nclients;
};

/* What happened on one client. */
struct pv_phases_client_host {
	const char *name;
	int code; /* PV_OK, or why this client failed (msg) */
	char msg[1024];
	double seconds;
	const char *state;  /* "written", "unchanged", "would write", "removed", "absent",
			     * "would remove"; NULL when it failed before knowing */
	const char *method; /* "rename", "in-place", "sftp" or NULL */
	const char *backup; /* "made", "exists", "removed", "kept", "would be made" or NULL */
	char backup_path[320];
	bool verified;	   /* getent (PowerShell on Windows) resolved the aliases to the server */
	size_t other_labs; /* blocks of other labs seen, left alone */
	char other[33];
};

struct pv_phases_client_result {
	struct pv_phases_client_host *hosts;
	size_t n;
	size_t changed, unchanged, failed;
	size_t names; /* the server's name and its aliases in the block (not for cleanup) */
	struct pv_env_plan plan;
	double seconds;
};

/* PV_OK when every client is done, PV_EPARTIAL when some failed (each named with its cause in
 * the message and in its host entry), else the code of the one or all failures. */
int pv_phases_client_apply(const struct pv_env *env, const struct pv_phases_client_opts *o,
			   struct pv_phases_client_result *res);
void pv_phases_client_result_release(struct pv_phases_client_result *res);

struct pv_phases_client_status_host {
	const char *name;
	int code;
	char msg[512];
	const char *block; /* "in place", "differs" (another N or edited), "absent" */
};
struct pv_phases_client_status {
	struct pv_phases_client_status_host *hosts;
	size_t n;
};
int pv_phases_client_status(const struct pv_env *env, struct pv_phases_client_status *st);
void pv_phases_client_status_release(struct pv_phases_client_status *st);

/* The two commands sent to a Windows client, built without I/O (unit-tested): cmd is reset,
 * then holds the command. PV_ECONFIG (recorded) when a value cannot be quoted safely
 * (remote/quote.h), PV_EIO when out of memory.
 * pv_phases_client_win_del: 'del /q "<path, '/' made '\'>"' for cmd.exe.
 * pv_phases_client_win_resolve: powershell -Command "<script>" printing "pv-host <address>" for
 * each address the two names resolve to; the names quoted for PowerShell, the script for cmd.exe.
 */
int pv_phases_client_win_del(const char *path, struct pv_buf *cmd);
int pv_phases_client_win_resolve(const char *first, const char *last, struct pv_buf *cmd);

#endif
