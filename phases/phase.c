/* phases/phase.c: the names every phase shares (the environment, plans and tags are env/'s). */
#include "phases/phase.h"

#include "ldap/encode.h"
#include "playbooks/names.h"
#include "util/buf.h"
#include "util/err.h"

int pv_phases_users_filter(struct pv_buf *f, const char *tag)
{
	pv_buf_addstr(f, "(&(objectClass=user)(!(objectClass=computer))(description=");
	if (pv_buf_failed(f) || pv_ldap_filter_escape(f, tag) < 0 || pv_buf_addstr(f, "))") < 0)
		return pv_error(PV_EIO, "out of memory");
	return PV_OK;
}
