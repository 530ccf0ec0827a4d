/* phases/client.c: the client phase (this lab's block of server aliases in every client's hosts
 * file) and its cleanup (that block taken out, nothing else), and the clients' status.
 *
 * One SSH session per client, clients in parallel (remote/ fan-out). Per client: read the
 * file, compute the new content locally (hosts/), then ONE command that gets the content on
 * stdin and, under a lock, checks the file did not change since it was read, keeps a backup
 * of the original on the first change, replaces the file atomically or, where it is a bind
 * mount (rename gives EBUSY), rewrites it in place, and runs getent on the first and last
 * alias (hosts/script.h). Content that would not change is not written at all.
 * Windows clients (OpenSSH for Windows) are edited over SFTP with CRLF lines of at most 9
 * names; that path is written to the documented behaviour and not tested here. */
#include "env/target.h"
#include "phases/client.h"

#include "hosts/hosts.h"
#include "hosts/script.h"
#include "playbooks/names.h"
#include "remote/quote.h"
#include "remote/remote.h"
#include "util/err.h"
#include "util/fanout.h"
#include "util/log.h"
#include "util/progress.h"
#include "util/strset.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
extern const char pv_phases_read_hosts_sh[], pv_phases_resolve_ps1[];

#define LINUX_HOSTS   "/etc/hosts"
#define WINDOWS_HOSTS "C:/Windows/System32/drivers/etc/hosts"
#define LOCK_WAIT     30 /* seconds another writer may hold the hosts file's lock */

struct client_run {
	const struct pv_playbook *pb;
	bool cleanup, dry;
	struct pv_playbook_host *hosts; /* the selected clients (shallow copies) */
	size_t n;
	struct pv_phases_client_host *jobs;
	char **names; /* [0] the server's name, [1..nnames-1] its aliases */
	size_t nnames;
	struct pv_strset *set;
};

/* The clients this run is for, as shallow copies (the fan-out takes an array of hosts). */
static int select_clients(struct client_run *run, const struct pv_playbook_host *const *sel,
			  size_t n)
{
	if (!sel)
		n = run->pb->nclients;
	if (n == 0)
		return pv_error(PV_ECONFIG, "the playbook has no clients (add a clients: list)");
	if (!(run->hosts = calloc(n, sizeof(*run->hosts))))
		return pv_error(PV_EIO, "out of memory");
	for (size_t i = 0; i < n; i++)
		run->hosts[i] = sel ? *sel[i] : run->pb->clients[i];
	run->n = n;
	return PV_OK;
}

/* The server's name and its N aliases, every alias checked against the NetBIOS rule. */
static int make_names(struct client_run *run)
{
	const struct pv_playbook_server *s = &run->pb->server;
	unsigned long n = run->pb->users.per_client;
	char name[PV_PLAYBOOK_NAME_MAX];
	int r;

	if (!(run->names = calloc(n + 1, sizeof(*run->names))) || !(run->set = pv_strset_new()) ||
	    !(run->names[0] = strdup(s->host.name)))
		return pv_error(PV_EIO, "out of memory");
	run->nnames = 1;
	if (pv_strset_add(run->set, s->host.name) < 0)
		return pv_error(PV_EIO, "out of memory");
	for (unsigned long i = 1; i <= n; i++) {
		if ((r = pv_playbook_alias_name(run->pb, i, name)) != PV_OK)
			return r;
		if (!(run->names[run->nnames] = strdup(name)))
			return pv_error(PV_EIO, "out of memory");
		run->nnames++;
		switch (pv_strset_add(run->set, name)) {
		case 0:
			return pv_error(PV_ECONFIG,
					"server.alias_template '%s' gives '%s' twice; "
					"expected a template whose names differ by {n}",
					s->alias_template, name);
		case -1:
			return pv_error(PV_EIO, "out of memory");
		}
	}
	return PV_OK;
}

/* stderr of a remote command as one line, for messages. */
static const char *one_line(struct pv_buf *b)
{
	if (!b->data)
		return "";
	while (b->len && (b->data[b->len - 1] == '\n' || b->data[b->len - 1] == '\r'))
		b->data[--b->len] = '\0';
	for (char *p = b->data; *p; p++)
		if (*p == '\n' || *p == '\r')
			*p = ' ';
	return b->data;
}

/* Call fn on each line of text after prefix (lines that start with it). */
static const char *next_with(const char *p, const char *prefix, size_t *len)
{
	size_t pl = strlen(prefix);

	while (p && *p) {
		const char *nl = strchr(p, '\n');
		size_t l = nl ? (size_t)(nl - p) : strlen(p);

		if (l >= pl && memcmp(p, prefix, pl) == 0) {
			*len = l - pl;
			return p + pl;
		}
		p = nl ? nl + 1 : NULL;
	}
	return NULL;
}

static bool has_line(const char *out, const char *line)
{
	size_t l;
	const char *p = next_with(out, line, &l);

	return p && l == 0;
}

/* The names getent checks: the first and the last alias. */
static size_t verify_names(const struct client_run *run, const char *v[2])
{
	v[0] = run->names[run->nnames > 1 ? 1 : 0];
	v[1] = run->names[run->nnames - 1];
	return run->nnames > 2 ? 2 : 1;
}

/* The getent lines (between "pv-getent-output" and "pv-getent <status>"): status 0 and every
 * address the server's. */
static int check_getent(const struct client_run *run, const struct pv_playbook_host *h,
			const char *out, const char *const *verify, size_t nv)
{
	const char *addr = run->pb->server.host.address, *p, *status;
	size_t len, lines = 0;

	status = next_with(out, "pv-getent ", &len);
	if (!status || len != 1 || status[0] != '0')
		return pv_error(PV_EREMOTE,
				"'%s': 'getent hosts %s%s%s' finds no address there (status %.*s): "
				"check that the 'hosts:' line of its /etc/nsswitch.conf lists "
				"'files'",
				h->name, verify[0], nv > 1 ? " " : "", nv > 1 ? verify[1] : "",
				status ? (int)len : 1, status ? status : "?");
	p = next_with(out, "pv-getent-output", &len);
	for (p = p ? strchr(p, '\n') : NULL; p && (p++, *p) && strncmp(p, "pv-getent ", 10) != 0;
	     p = strchr(p, '\n')) {
		size_t alen = strcspn(p, " \t\n"), llen = strcspn(p, "\n");

		if (llen == 0)
			continue;
		lines++;
		if (!pv_hosts_same_address(p, alen, addr, strlen(addr)))
			return pv_error(PV_EREMOTE,
					"'%s': getent resolves an alias to %.*s, not to the "
					"server's %s (%.*s): another source in its "
					"/etc/nsswitch.conf answers first",
					h->name, (int)alen, p, addr, (int)llen, p);
	}
	if (lines == 0)
		return pv_error(PV_EREMOTE, "'%s': getent printed nothing for %s", h->name,
				verify[0]);
	return PV_OK;
}

static void backup_path(const struct client_run *run, const struct pv_playbook_host *h,
			const char *file, struct pv_phases_client_host *j)
{
	snprintf(j->backup_path, sizeof(j->backup_path), "%s.provision-%s-%s.orig", file,
		 run->pb->lab, h->name);
}

/* Linux and other POSIX clients: one command does the write, the backup and the check. */
static int apply_posix(struct client_run *run, const struct pv_playbook_host *h,
		       struct pv_remote *rem, const struct pv_buf *old, const struct pv_buf *new,
		       bool changed, bool ours, struct pv_phases_client_host *j)
{
	char olds[32], news[32];
	const char *verify[2];
	struct pv_hosts_write w;
	struct pv_buf script = PV_BUF_INIT, out = PV_BUF_INIT;
	int status = 0, r;

	pv_hosts_cksum_str(old->data, old->len, olds);
	pv_hosts_cksum_str(new->data, new->len, news);
	memset(&w, 0, sizeof(w));
	w.path = LINUX_HOSTS;
	w.backup = j->backup_path;
	w.old_sum = olds;
	w.new_sum = changed ? news : NULL;
	w.make_backup = changed && !ours && !run->cleanup;
	w.drop_backup = run->cleanup;
	w.lock_wait = LOCK_WAIT;
	if (!run->cleanup) {
		w.nverify = verify_names(run, verify);
		w.verify = verify;
	}
	if ((r = pv_hosts_script(&script, &w)) != PV_OK)
		goto out;
	r = pv_remote_sh(rem, "the edit of " LINUX_HOSTS, &script, changed ? new->data : NULL,
			 changed ? new->len : 0, &out, &status, 0);
	if (r != PV_OK)
		goto out;
	if (status != 0) {
		/* the reason pv_remote_sh recorded: the line of stderr that says why */
		r = pv_error(PV_EREMOTE, "'%s': %s: %s (status %d)", h->name, LINUX_HOSTS,
			     *pv_errmsg() ? pv_errmsg() : "the edit command failed", status);
		goto out;
	}
	{
		const char *p = out.data;
		size_t len;

		while ((p = next_with(p, "pv-warn ", &len))) {
			pv_log(PV_LOG_WARN, "%s: %.*s", h->name, (int)len, p);
			p += len;
		}
	}
	if (has_line(out.data, "pv-write rename"))
		j->method = "rename";
	else if (has_line(out.data, "pv-write in-place"))
		j->method = "in-place";
	if (changed && !j->method) {
		r = pv_error(PV_EREMOTE,
			     "'%s': the edit command ended without saying how it wrote "
			     "%s: %s",
			     h->name, LINUX_HOSTS, out.data ? out.data : "(no output)");
		goto out;
	}
	if (has_line(out.data, "pv-backup made"))
		j->backup = "made";
	else if (has_line(out.data, "pv-backup exists"))
		j->backup = "exists";
	else if (has_line(out.data, "pv-backup removed"))
		j->backup = "removed";
	else if (has_line(out.data, "pv-backup kept"))
		j->backup = "kept";
	if (!run->cleanup) {
		if ((r = check_getent(run, h, out.data ? out.data : "", verify, w.nverify)) !=
		    PV_OK)
			goto out;
		j->verified = true;
	}
	r = PV_OK;
out:
	pv_buf_release(&script, 0);
	pv_buf_release(&out, 0);
	return r;
}

static bool same(const struct pv_buf *a, const struct pv_buf *b)
{
	return a->len == b->len && (a->len == 0 || memcmp(a->data, b->data, a->len) == 0);
}

/* cmd.exe is OpenSSH for Windows' default shell (client.h). */
int pv_phases_client_win_del(const char *path, struct pv_buf *cmd)
{
	struct pv_buf win = PV_BUF_INIT;
	int r;

	for (const char *p = path; *p; p++)
		pv_buf_add(&win, *p == '/' ? "\\" : p, 1);
	pv_buf_reset(cmd);
	if (pv_buf_failed(&win) || !win.data)
		r = pv_error(PV_EIO, "out of memory");
	else if (pv_buf_addstr(cmd, "del /q ") < 0)
		r = pv_error(PV_EIO, "out of memory");
	else
		r = pv_remote_quote_cmd(cmd, win.data);
	pv_buf_release(&win, 0);
	return r;
}

int pv_phases_client_win_resolve(const char *first, const char *last, struct pv_buf *cmd)
{
	struct pv_buf ps = PV_BUF_INIT;
	int r;

	pv_buf_reset(cmd);
	pv_buf_addstr(&ps, "$names = ");
	if ((r = pv_remote_quote_ps(&ps, first)) != PV_OK)
		goto out;
	pv_buf_addstr(&ps, ","); /* a failure is sticky: the next quote reports it */
	if ((r = pv_remote_quote_ps(&ps, last)) != PV_OK)
		goto out;
	pv_buf_addstr(&ps, "; ");
	/* phases/scripts/resolve.ps1 is one line: cmd.exe passes no newline to -Command */
	pv_buf_add(&ps, pv_phases_resolve_ps1, strcspn(pv_phases_resolve_ps1, "\n"));
	if (pv_buf_failed(&ps) ||
	    pv_buf_addstr(cmd, "powershell -NoProfile -NonInteractive -Command ") < 0) {
		r = pv_error(PV_EIO, "out of memory");
		goto out;
	}
	r = pv_remote_quote_cmd(cmd, ps.data);
out:
	pv_buf_release(&ps, 0);
	return r;
}

/* Windows clients: SFTP has no lock and OpenSSH for Windows offers no rename onto an existing
 * file, so: re-read and compare just before writing, write in place, read back; on a
 * mismatch the previous content is written back. Not tested here (no Windows host). */
/* Windows: write new in place after checking the file is still old, and read it back; a
 * mismatch writes old back. */
static int win_write(const struct pv_playbook_host *h, struct pv_remote *rem,
		     const struct pv_buf *old, const struct pv_buf *new)
{
	struct pv_buf cur = PV_BUF_INIT;
	int r;

	if ((r = pv_remote_read_file(rem, WINDOWS_HOSTS, &cur)) != PV_OK)
		goto out;
	if (!same(&cur, old)) {
		r = pv_error(PV_EREMOTE,
			     "'%s': %s changed after provision read it; nothing was written: run "
			     "the command again",
			     h->name, WINDOWS_HOSTS);
		goto out;
	}
	if ((r = pv_remote_write_file(rem, WINDOWS_HOSTS, new->data, new->len, 0644)) != PV_OK)
		goto out;
	pv_buf_reset(&cur);
	r = pv_remote_read_file(rem, WINDOWS_HOSTS, &cur);
	if (r != PV_OK || !same(&cur, new)) {
		pv_remote_write_file(rem, WINDOWS_HOSTS, old->data, old->len, 0644);
		r = pv_error(PV_EREMOTE,
			     "'%s': %s did not read back as written; its previous content was "
			     "written back",
			     h->name, WINDOWS_HOSTS);
	}
out:
	pv_buf_release(&cur, 0);
	return r;
}

/* Windows, cleanup: the backup removed when the file is as it was before the first run. */
static int win_drop_backup(const struct pv_playbook_host *h, struct pv_remote *rem,
			   const struct pv_buf *new, struct pv_phases_client_host *j)
{
	struct pv_buf cur = PV_BUF_INIT, cmd = PV_BUF_INIT;
	int status = 0, r = PV_OK;

	if (pv_remote_read_file(rem, j->backup_path, &cur) != PV_OK)
		goto out;
	j->backup = "kept";
	if (!same(&cur, new))
		goto out;
	if ((r = pv_phases_client_win_del(j->backup_path, &cmd)) != PV_OK) {
		r = pv_error_prefix(r, "'%s': backup %s", h->name, j->backup_path);
		goto out;
	}
	if ((r = pv_remote_exec(rem, cmd.data, NULL, 0, NULL, NULL, &status, 0)) == PV_OK)
		j->backup = status == 0 ? "removed" : "kept";
out:
	pv_buf_release(&cur, 0);
	pv_buf_release(&cmd, 0);
	return r;
}

/* Windows: the first and last alias resolve to the server's address there. */
static int win_verify(const struct client_run *run, const struct pv_playbook_host *h,
		      struct pv_remote *rem)
{
	const char *first = run->names[run->nnames > 1 ? 1 : 0];
	const char *last = run->names[run->nnames - 1];
	const char *addr = run->pb->server.host.address, *p;
	struct pv_buf cmd = PV_BUF_INIT, out = PV_BUF_INIT, err = PV_BUF_INIT;
	int status = 0, r;
	size_t len;

	if ((r = pv_phases_client_win_resolve(first, last, &cmd)) != PV_OK) {
		r = pv_error_prefix(r, "'%s': the check of the aliases", h->name);
		goto out;
	}
	if ((r = pv_remote_exec(rem, cmd.data, NULL, 0, &out, &err, &status, 0)) != PV_OK)
		goto out;
	p = out.data;
	if (status != 0 || !p || !next_with(p, "pv-host ", &len)) {
		r = pv_error(PV_EREMOTE,
			     "'%s': the hosts file was written, but %s does not resolve there: %s",
			     h->name, first, one_line(&err));
		goto out;
	}
	for (; (p = next_with(p, "pv-host ", &len)); p += len) {
		size_t alen = strcspn(p, " \t\r\n");

		if (!pv_hosts_same_address(p, alen, addr, strlen(addr))) {
			r = pv_error(PV_EREMOTE,
				     "'%s': the hosts file was written, but an alias resolves to "
				     "%.*s, not to %s",
				     h->name, (int)alen, p, addr);
			goto out;
		}
	}
out:
	pv_buf_release(&cmd, 0);
	pv_buf_release(&out, 0);
	pv_buf_release(&err, 0);
	return r;
}

static int apply_windows(struct client_run *run, const struct pv_playbook_host *h,
			 struct pv_remote *rem, const struct pv_buf *old, const struct pv_buf *new,
			 bool changed, bool ours, struct pv_phases_client_host *j)
{
	struct pv_buf cur = PV_BUF_INIT;
	int r = PV_OK;

	if (changed && !ours && !run->cleanup) {
		if (pv_remote_read_file(rem, j->backup_path, &cur) == PV_OK)
			j->backup = "exists";
		else if ((r = pv_remote_write_file(rem, j->backup_path, old->data, old->len,
						   0644)) == PV_OK)
			j->backup = "made";
		pv_buf_release(&cur, 0);
		if (r != PV_OK)
			return r;
	}
	if (changed) {
		if ((r = win_write(h, rem, old, new)) != PV_OK)
			return r;
		j->method = "sftp";
	}
	if (run->cleanup)
		return win_drop_backup(h, rem, new, j);
	if ((r = win_verify(run, h, rem)) == PV_OK)
		j->verified = true;
	return r;
}

/* cat the file; for `client`, getent's view of the aliases rides along on stderr, so a run that
 * has nothing to write is checked without a second round trip. */
static int read_posix(const struct client_run *run, const struct pv_playbook_host *h,
		      struct pv_remote *rem, struct pv_buf *content, struct pv_buf *err)
{
	struct pv_buf cmd = PV_BUF_INIT;
	const char *v[2];
	int status = 0, r;

	if (pv_buf_addstr(&cmd, "set --") < 0)
		goto oom;
	for (size_t i = 0, nv = run->cleanup ? 0 : verify_names(run, v); i < nv; i++)
		if (pv_buf_addstr(&cmd, " ") < 0 || pv_remote_quote(&cmd, v[i]) < 0)
			goto oom;
	if (pv_buf_addstr(&cmd, "\n") < 0 || pv_buf_addstr(&cmd, pv_phases_read_hosts_sh) < 0)
		goto oom;
	r = pv_remote_exec(rem, cmd.data, NULL, 0, content, err, &status, 0);
	if (r == PV_OK && status != 0)
		r = pv_error(PV_EREMOTE, "'%s': cannot read %s: %s", h->name, LINUX_HOSTS,
			     one_line(err));
	if (r == PV_OK && !content->data && pv_buf_add(content, "", 0) < 0)
		r = pv_error(PV_EIO, "out of memory");
	pv_buf_release(&cmd, 0);
	return r;
oom:
	pv_buf_release(&cmd, 0);
	return pv_error(PV_EIO, "out of memory");
}

/* The new content of the client's hosts file: old with the lab's block merged in (or taken
 * out, for cleanup), after checking that no line outside it holds one of our names. */
static int compose(struct client_run *run, const struct pv_playbook_host *h, const char *file,
		   const struct pv_buf *old, struct pv_hosts_layout *lay,
		   const struct pv_hosts_style *st, struct pv_buf *new,
		   struct pv_phases_client_host *j)
{
	struct pv_hosts_group g[2];
	int r;

	if ((r = pv_hosts_parse(old->data, old->len, run->pb->lab, lay)) != PV_OK)
		return pv_error_prefix(r, "'%s': %s", h->name, file);
	j->other_labs = lay->others;
	snprintf(j->other, sizeof(j->other), "%s", lay->other);
	if (lay->others)
		pv_log(PV_LOG_INFO,
		       "%s: %s holds %zu block%s of other labs (first: '%s'), left as they are",
		       h->name, file, lay->others, lay->others == 1 ? "" : "s", lay->other);
	if (run->cleanup)
		return pv_hosts_remove(old->data, old->len, lay, st, new);
	if ((r = pv_hosts_check_names(old->data, old->len, lay, run->pb->server.host.address,
				      run->set)) != PV_OK)
		return pv_error_prefix(r, "'%s': %s: nothing was written", h->name, file);
	g[0] = (struct pv_hosts_group){run->pb->server.host.address,
				       (const char *const *)run->names, 1};
	g[1] = (struct pv_hosts_group){run->pb->server.host.address,
				       (const char *const *)run->names + 1, run->nnames - 1};
	return pv_hosts_merge(old->data, old->len, lay, run->pb->lab, st, g, 2, new);
}

/* What was done, on stderr; a backup left because the file changed outside the block. */
static void say_done(const struct client_run *run, const struct pv_playbook_host *h,
		     const char *file, bool changed, const struct pv_phases_client_host *j)
{
	bool made = j->backup && strcmp(j->backup, "made") == 0;

	if (changed)
		pv_log(PV_LOG_INFO, "%s: %s %s (%s)%s%s", h->name, file,
		       run->cleanup ? "block removed" : "written", j->method ? j->method : "?",
		       made ? ", original kept as " : "", made ? j->backup_path : "");
	if (j->backup && strcmp(j->backup, "kept") == 0)
		pv_log(PV_LOG_WARN,
		       "%s: backup %s kept: it differs from %s now (the file changed outside the "
		       "block since the first run); compare them and remove it yourself",
		       h->name, j->backup_path, file);
}

static int one_client(size_t i, void *arg)
{
	struct client_run *run = arg;
	const struct pv_playbook_host *h = &run->hosts[i];
	struct pv_phases_client_host *j = &run->jobs[i];
	bool win = h->os == PV_PLAYBOOK_OS_WINDOWS, changed;
	const char *file = win ? WINDOWS_HOSTS : LINUX_HOSTS;
	struct pv_remote *rem = NULL;
	struct pv_buf old = PV_BUF_INIT, new = PV_BUF_INIT, early = PV_BUF_INIT;
	struct pv_hosts_layout lay;
	struct pv_hosts_style st;
	double t0 = pv_now();
	int r;

	pv_hosts_style_for(win, &st);
	backup_path(run, h, file, j);
	if ((r = pv_env_host_connect(h, &rem)) != PV_OK)
		goto out;
	pv_log(PV_LOG_DEBUG, "%s: connected in %.0f ms", h->name, (pv_now() - t0) * 1000);
	r = win ? pv_remote_read_file(rem, file, &old) : read_posix(run, h, rem, &old, &early);
	if (r != PV_OK)
		goto out;
	pv_log(PV_LOG_DEBUG, "%s: read %s (%zu bytes) at %.0f ms", h->name, file, old.len,
	       (pv_now() - t0) * 1000);
	if (!old.data && pv_buf_add(&old, "", 0) < 0) {
		r = pv_error(PV_EIO, "out of memory");
		goto out;
	}
	if ((r = compose(run, h, file, &old, &lay, &st, &new, j)) != PV_OK)
		goto out;
	changed = !same(&old, &new);
	if (run->cleanup)
		j->state = !lay.found ? "absent" : run->dry ? "would remove" : "removed";
	else
		j->state = !changed ? "unchanged" : run->dry ? "would write" : "written";
	if (run->dry) {
		if (changed && !lay.found && !run->cleanup)
			j->backup = "would be made";
		goto out;
	}
	if (!win && !changed && !run->cleanup) {
		const char *v[2];
		size_t nv = verify_names(run, v);

		/* nothing to write: the getent output read along with the file is the check */
		r = check_getent(run, h, early.data ? early.data : "", v, nv);
		j->verified = r == PV_OK;
	} else {
		r = win ? apply_windows(run, h, rem, &old, &new, changed, lay.found, j)
			: apply_posix(run, h, rem, &old, &new, changed, lay.found, j);
	}
	pv_log(PV_LOG_DEBUG, "%s: %s (%zu bytes) and checked at %.0f ms", h->name,
	       changed ? "written" : "nothing written", new.len, (pv_now() - t0) * 1000);
	if (r == PV_OK)
		say_done(run, h, file, changed, j);
out:
	j->seconds = pv_now() - t0;
	pv_buf_release(&old, 0);
	pv_buf_release(&new, 0);
	pv_buf_release(&early, 0);
	pv_remote_free(rem);
	return r;
}

/* The overall outcome: every failed client named with its cause. */
static int outcome(const struct client_run *run, const struct pv_fanout_result *res)
{
	struct pv_buf msg = PV_BUF_INIT;
	size_t failed = 0, first = run->n;
	int r;

	for (size_t i = 0; i < run->n; i++) {
		if (res[i].code == PV_OK)
			continue;
		if (failed++ == 0)
			first = i;
	}
	if (failed == 0)
		return PV_OK;
	if (failed < run->n)
		pv_buf_addf(&msg, "%zu of %zu clients failed, the others are done", failed, run->n);
	else
		pv_buf_addf(&msg, "%s", run->n == 1 ? "" : "every client failed");
	for (size_t i = 0; i < run->n; i++)
		if (res[i].code != PV_OK)
			pv_buf_addf(&msg, "%s%s (%s): %s", msg.len ? "; " : "", run->hosts[i].name,
				    pv_status_name(res[i].code), res[i].msg);
	r = failed < run->n ? PV_EPARTIAL : res[first].code;
	r = pv_error(r, "%s", msg.data ? msg.data : "");
	pv_buf_release(&msg, 0);
	return r;
}

int pv_phases_client_apply(const struct pv_env *env, const struct pv_phases_client_opts *o,
			   struct pv_phases_client_result *res)
{
	struct client_run run = {.pb = env->pb, .cleanup = o->cleanup, .dry = env->dry_run};
	struct pv_fanout_result *fr = NULL;
	double t0 = pv_now();
	int r;

	if (!o->cleanup && !run.pb->has_server)
		return pv_error(PV_ECONFIG,
				"the playbook has no server: the aliases point at its "
				"address (add a server: section with name and address)");
	if ((r = select_clients(&run, o->clients, o->nclients)) != PV_OK)
		goto out;
	if (!o->cleanup && (r = make_names(&run)) != PV_OK)
		goto out;
	if (!(res->hosts = calloc(run.n, sizeof(*res->hosts))) ||
	    !(fr = calloc(run.n, sizeof(*fr)))) {
		r = pv_error(PV_EIO, "out of memory");
		goto out;
	}
	res->n = run.n;
	res->names = run.nnames;
	run.jobs = res->hosts;
	for (size_t i = 0; i < run.n; i++)
		res->hosts[i].name = pv_playbook_client(run.pb, run.hosts[i].name)->name;
	pv_fanout_run(run.n, run.pb->fanout, one_client, &run, fr);
	for (size_t i = 0; i < run.n; i++) {
		struct pv_phases_client_host *j = &res->hosts[i];
		bool ch;

		j->code = fr[i].code;
		snprintf(j->msg, sizeof(j->msg), "%s", fr[i].code == PV_OK ? "" : fr[i].msg);
		if (j->code != PV_OK) {
			res->failed++;
			continue;
		}
		ch = strcmp(j->state, "written") == 0 || strcmp(j->state, "would write") == 0 ||
		     strcmp(j->state, "removed") == 0 || strcmp(j->state, "would remove") == 0;
		if (ch)
			res->changed++;
		else
			res->unchanged++;
		if (run.dry && strcmp(j->state, "would write") == 0)
			pv_env_plan_add(&res->plan,
					"write the block of lab '%s' on '%s' (%s + %zu aliases)",
					run.pb->lab, j->name, run.names[0], run.nnames - 1);
		if (run.dry && strcmp(j->state, "would remove") == 0)
			pv_env_plan_add(&res->plan, "remove the block of lab '%s' on '%s'",
					run.pb->lab, j->name);
	}
	r = outcome(&run, fr);
out:
	res->seconds = pv_now() - t0;
	for (size_t i = 0; i < run.nnames; i++)
		free(run.names[i]);
	free(run.names);
	pv_strset_free(run.set);
	free(run.hosts);
	free(fr);
	return r;
}

void pv_phases_client_result_release(struct pv_phases_client_result *res)
{
	free(res->hosts);
	res->hosts = NULL;
	pv_env_plan_release(&res->plan);
}

/* ---- status ---- */

struct status_run {
	struct client_run run;
	struct pv_phases_client_status *st;
};

static int status_one(size_t i, void *arg)
{
	struct status_run *sr = arg;
	struct client_run *run = &sr->run;
	const struct pv_playbook_host *h = &run->hosts[i];
	struct pv_phases_client_status_host *sh = &sr->st->hosts[i];
	bool win = h->os == PV_PLAYBOOK_OS_WINDOWS;
	const char *file = win ? WINDOWS_HOSTS : LINUX_HOSTS;
	struct pv_remote *rem = NULL;
	struct pv_buf text = PV_BUF_INIT, err = PV_BUF_INIT, want = PV_BUF_INIT;
	struct pv_hosts_layout lay;
	struct pv_hosts_style st;
	int status = 0, r;

	pv_hosts_style_for(win, &st);
	if ((r = pv_env_host_connect(h, &rem)) != PV_OK)
		goto out;
	if (win) {
		r = pv_remote_read_file(rem, file, &text);
	} else {
		r = pv_remote_exec(rem, "cat -- " LINUX_HOSTS, NULL, 0, &text, &err, &status, 0);
		if (r == PV_OK && status != 0)
			r = pv_error(PV_EREMOTE, "'%s': cannot read %s: %s", h->name, file,
				     one_line(&err));
	}
	if (r == PV_OK && !text.data && pv_buf_add(&text, "", 0) < 0)
		r = pv_error(PV_EIO, "out of memory");
	if (r != PV_OK)
		goto out;
	if ((r = pv_hosts_parse(text.data, text.len, run->pb->lab, &lay)) != PV_OK) {
		r = pv_error_prefix(r, "'%s': %s", h->name, file);
		goto out;
	}
	if (!lay.found) {
		sh->block = "absent";
		goto out;
	}
	{
		struct pv_hosts_group g[2] = {
			{run->pb->server.host.address, (const char *const *)run->names, 1},
			{run->pb->server.host.address, (const char *const *)run->names + 1,
			 run->nnames - 1},
		};

		if ((r = pv_hosts_merge(text.data, text.len, &lay, run->pb->lab, &st, g, 2,
					&want)) != PV_OK)
			goto out;
	}
	sh->block = same(&text, &want) ? "in place" : "differs";
out:
	pv_buf_release(&text, 0);
	pv_buf_release(&err, 0);
	pv_buf_release(&want, 0);
	pv_remote_free(rem);
	return r;
}

int pv_phases_client_status(const struct pv_env *env, struct pv_phases_client_status *st)
{
	struct status_run sr = {.run = {.pb = env->pb}, .st = st};
	struct pv_fanout_result *fr = NULL;
	int r;

	memset(st, 0, sizeof(*st));
	if (!env->pb->has_server)
		return pv_error(PV_ECONFIG, "the playbook has no server: section");
	if ((r = select_clients(&sr.run, NULL, 0)) != PV_OK || (r = make_names(&sr.run)) != PV_OK)
		goto out;
	if (!(st->hosts = calloc(sr.run.n, sizeof(*st->hosts))) ||
	    !(fr = calloc(sr.run.n, sizeof(*fr)))) {
		r = pv_error(PV_EIO, "out of memory");
		goto out;
	}
	st->n = sr.run.n;
	for (size_t i = 0; i < sr.run.n; i++)
		st->hosts[i].name = env->pb->clients[i].name;
	pv_fanout_run(sr.run.n, env->pb->fanout, status_one, &sr, fr);
	for (size_t i = 0; i < sr.run.n; i++) {
		st->hosts[i].code = fr[i].code;
		if (fr[i].code != PV_OK)
			snprintf(st->hosts[i].msg, sizeof(st->hosts[i].msg), "%s", fr[i].msg);
	}
	r = PV_OK;
out:
	for (size_t i = 0; i < sr.run.nnames; i++)
		free(sr.run.names[i]);
	free(sr.run.names);
	pv_strset_free(sr.run.set);
	free(sr.run.hosts);
	free(fr);
	return r;
}

void pv_phases_client_status_release(struct pv_phases_client_status *st)
{
	free(st->hosts);
	st->hosts = NULL;
}
