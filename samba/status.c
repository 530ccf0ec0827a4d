/* samba/status.c: reading what `smbstatus --json` prints (Samba 4.17 and later): the sessions
 * and open files of chosen users (see samba.h). Pure: no I/O. */
#include "samba/samba.h"

#include "json/json.h"
#include "util/err.h"

struct count {
	bool (*mine)(void *arg, const char *user);
	void *arg;
	long n;
};

static int count_session(const char *key, const struct pv_json *v, void *arg)
{
	struct count *c = arg;
	const char *user = pv_json_text(pv_json_get(v, "username"));

	(void)key;
	if (user && c->mine(c->arg, user))
		c->n++;
	return 0;
}

static int count_file(const char *key, const struct pv_json *v, void *arg)
{
	(void)key;
	return pv_json_each(pv_json_get(v, "opens"), count_session, arg);
}

int pv_samba_status_count(const char *text, size_t len, bool (*mine)(void *arg, const char *user),
			  void *arg, long *n)
{
	struct count c = {mine, arg, 0};
	const struct pv_json *sessions, *files;
	struct pv_json *doc;
	char err[256];
	int r = PV_SAMBA_STATUS_OK;

	if (!(doc = pv_json_parse(text, len, err, sizeof(err))))
		return PV_SAMBA_STATUS_NOT_JSON;
	sessions = pv_json_get(doc, "sessions");
	files = pv_json_get(doc, "open_files");
	if (!pv_json_is_object(sessions) || (files && !pv_json_is_object(files))) {
		r = PV_SAMBA_STATUS_NOT_STATUS;
	} else {
		pv_json_each(sessions, count_session, &c);
		if (files)
			pv_json_each(files, count_file, &c);
		*n = c.n;
	}
	pv_json_free(doc);
	return r;
}
