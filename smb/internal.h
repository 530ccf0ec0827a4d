/* smb/internal.h: what the files of smb/ share; not for use outside the module. */
#ifndef PV_SMB_INTERNAL_H
#define PV_SMB_INTERNAL_H

#include <libsmbclient.h>

#include "smb/smb.h"

struct logon {
	const char *workgroup;
	const char *user;
	const struct pv_secret *password; /* NULL: Kerberos */
};

struct pv_smb {
	SMBCCTX *ctx;
	struct logon l; /* points into the copies below; the auth callback reads it */
	char *server, *workgroup, *user;
	struct pv_secret *password;
	unsigned char *buf; /* write buffer, made on first use */
	size_t bufsize;
	bool reached; /* an operation has succeeded: a later EACCES is not a logon failure */
};

#endif
