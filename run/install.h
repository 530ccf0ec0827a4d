/* run/install.h: provision's own binary on a Linux client, for the built-in load driver
 * (`provision load` runs there). The binary goes to /var/tmp/provision-<first 16 hex digits of
 * its SHA-256>/provision: a client that has that file with that digest keeps it (another
 * version or build gets a folder of its own), one that lacks it gets it over SFTP (written
 * beside, then renamed), and one that cannot run it (`ldd` finds libraries missing) is
 * refused with the libraries named. The folder is made by root with mode 0700, and an existing
 * one must be root's, a folder and not a link, and writable by nobody else: a load user can
 * never put a binary where root runs it. */
#ifndef PV_RUN_INSTALL_H
#define PV_RUN_INSTALL_H

#include <stdbool.h>
#include <stddef.h>

#include "remote/remote.h"
#include "util/digest.h"

/* The running binary: its bytes and digest (read once from /proc/self/exe). */
struct pv_run_self {
	char *data;
	size_t len;
	char digest[PV_SHA256_HEX];
};
int pv_run_self_read(struct pv_run_self *self);
void pv_run_self_release(struct pv_run_self *self);

/* The binary's path on the host into path; *copied tells whether it was sent. PV_EREMOTE with
 * the missing libraries named, PV_ECONFIG when the folder is not one root can trust. */
int pv_run_install_self(struct pv_remote *rem, const struct pv_run_self *self, char *path,
			size_t len, bool *copied);

#endif
