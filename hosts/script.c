/* hosts/script.c: the script that writes a hosts file safely on a POSIX host: its variables,
 * then hosts/scripts/write.sh (see script.h for what it does and why). */
#include "hosts/script.h"

#include "remote/quote.h"

#include "util/err.h"

#include <stdio.h>
#include <string.h>

extern const char pv_hosts_write_sh[];

static int var(struct pv_buf *out, const char *name, const char *value)
{
	return pv_remote_var(out, name, value ? value : "");
}

int pv_hosts_script(struct pv_buf *out, const struct pv_hosts_write *w)
{
	char num[16];

	snprintf(num, sizeof(num), "%d", w->lock_wait > 0 ? w->lock_wait : 30);
	if (var(out, "f", w->path) < 0 || var(out, "b", w->backup) < 0 ||
	    var(out, "old", w->old_sum) < 0 || var(out, "new", w->new_sum) < 0 ||
	    var(out, "mkbak", w->make_backup && w->backup ? "1" : "0") < 0 ||
	    var(out, "dropbak", w->drop_backup && w->backup ? "1" : "0") < 0 ||
	    var(out, "wait", num) < 0 || pv_buf_addstr(out, "set --") < 0)
		return pv_error(PV_EIO, "out of memory");
	for (size_t i = 0; i < w->nverify; i++)
		if (pv_buf_addstr(out, " ") < 0 || pv_remote_quote(out, w->verify[i]) < 0)
			return pv_error(PV_EIO, "out of memory");
	if (pv_buf_addstr(out, "\n") < 0 || pv_buf_addstr(out, pv_hosts_write_sh) < 0)
		return pv_error(PV_EIO, "out of memory");
	return PV_OK;
}
