/* smb/lib.c: libsmbclient, loaded the first time it is needed (dlopen) instead of at start.
 *
 * Linked in, it and the 66 Samba libraries it pulls cost every provision command ~40 ms and
 * ~12 MiB before main() (lab: `provision --version` 50 ms and 19.7 MiB linked, 10 ms and
 * 7.1 MiB without it), and most commands never use it: trees and `check` go over our own SMB2
 * client; libsmbclient builds trees only when PROVISION_SMB_CLIENT=libsmbclient asks for it
 * (the benches' reference). */
#include "smb/internal.h"

#include "util/err.h"

#include <dlfcn.h>
#include <stddef.h>

#define SONAME "libsmbclient.so.0"

const struct smbc_api *pv_smb_lib_api;

int pv_smb_lib_open(void)
{
	static struct smbc_api api;
	static const struct {
		const char *name;
		size_t off;
	} syms[] = {
#define SYM(fn) {#fn, offsetof(struct smbc_api, fn)},
		SMBC_FUNCS(SYM)
#undef SYM
	};
	void *h;

	if (pv_smb_lib_api)
		return PV_OK;
	if (!(h = dlopen(SONAME, RTLD_NOW | RTLD_LOCAL)))
		return pv_error(PV_EIO, "cannot load %s (%s); install the libsmbclient package",
				SONAME, dlerror());
	for (size_t i = 0; i < sizeof(syms) / sizeof(syms[0]); i++) {
		void *f = dlsym(h, syms[i].name);

		if (!f)
			return pv_error(PV_EIO, "%s has no %s: a libsmbclient older than 4.0?",
					SONAME, syms[i].name);
		*(void **)((char *)&api + syms[i].off) = f;
	}
	pv_smb_lib_api = &api;
	return PV_OK;
}
