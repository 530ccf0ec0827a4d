/* smb/smb.h: SMB to the file server through libsmbclient, the only place it is used.
 * Errors are recorded with pv_error(): PV_EUNREACH (refused, timeout, no route),
 * PV_ECRED (logon refused), PV_EREMOTE (any other SMB failure). */
#ifndef PV_SMB_SMB_H
#define PV_SMB_SMB_H

#include "util/secret.h"

/* Log on to server as workgroup\user with password (NTLM) and list its shares.
 * On success *nshares is the number of disk shares seen. */
int pv_smb_list_shares(const char *server, const char *workgroup, const char *user,
		       const struct pv_secret *password, int timeout, unsigned *nshares);

#endif
