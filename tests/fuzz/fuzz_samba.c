/* tests/fuzz/fuzz_samba.c: libFuzzer target for the Samba server's facts (samba/samba.h,
 * pv_samba_parse_facts), which read the "key=value" lines samba/scripts/probe.sh prints on
 * the server (share lines with \037 between their fields). An input is the probe's whole
 * output. Invariants, each aborting when broken:
 *   - a refusal is an error with a message (only running out of memory refuses);
 *   - every string of the facts ends inside its field; the NetBIOS name is upper-case; the
 *     keytab file is set only for a dedicated keytab, and a keytab is needed exactly when the
 *     kerberos method uses one; the principals exist when the keytab was listed;
 *   - every share has a name, a comment and a path, and pv_samba_share finds each by its
 *     name in another case;
 *   - parsing the same text again gives the same facts. */
#include "samba/samba.h"
#include "util/err.h"
#include "util/strset.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void broken(const char *what)
{
	fprintf(stderr, "fuzz_samba: broken promise: %s; message: '%s'\n", what, pv_errmsg());
	abort();
}

static void ends(const char *s, size_t len)
{
	if (!memchr(s, '\0', len))
		broken("a string that does not end inside its field");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pv_samba_facts f, g;
	char *text = malloc(size + 1);
	int r;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	memset(&f, 0, sizeof(f));
	memset(&g, 0, sizeof(g));
	r = pv_samba_parse_facts(text, &f);
	if (r != PV_OK) {
		if (r != PV_EIO || !pv_errmsg()[0])
			broken("a refusal that is not out of memory");
		goto out;
	}
	ends(f.netbios, sizeof(f.netbios));
	ends(f.realm, sizeof(f.realm));
	ends(f.security, sizeof(f.security));
	ends(f.keytab, sizeof(f.keytab));
	ends(f.sep, sizeof(f.sep));
	ends(f.state_dir, sizeof(f.state_dir));
	ends(f.info, sizeof(f.info));
	for (const char *c = f.netbios; *c; c++)
		if (islower((unsigned char)*c))
			broken("a NetBIOS name not upper-case");
	if (f.needs_keytab != (f.kmethod != PV_SAMBA_KMETHOD_SECRETS_ONLY))
		broken("needs_keytab does not follow the kerberos method");
	if (f.keytab[0] && f.kmethod != PV_SAMBA_KMETHOD_DEDICATED_KEYTAB)
		broken("a keytab file for a method without a dedicated keytab");
	if (f.keytab_listed && !f.principals)
		broken("a keytab listed without its set of principals");
	for (size_t i = 0; i < f.nshares; i++) {
		const struct pv_samba_share *sh = &f.shares[i], *found;
		char up[4096];

		if (!sh->name || !sh->comment || !sh->path)
			broken("a share without a name, comment or path");
		snprintf(up, sizeof(up), "%s", sh->name);
		for (char *c = up; *c; c++)
			*c = (char)toupper((unsigned char)*c);
		if (strlen(sh->name) < sizeof(up) && !(found = pv_samba_share(&f, up)))
			broken("a share that pv_samba_share does not find by its name");
	}
	if (pv_samba_parse_facts(text, &g) != PV_OK)
		broken("the same text parses once and not twice");
	if (strcmp(f.netbios, g.netbios) || strcmp(f.keytab, g.keytab) || f.nshares != g.nshares ||
	    f.joined != g.joined || f.kmethod != g.kmethod || f.cores != g.cores ||
	    (f.principals && pv_strset_count(f.principals) != pv_strset_count(g.principals)))
		broken("the same text gives other facts");
out:
	pv_samba_facts_release(&f);
	pv_samba_facts_release(&g);
	pv_error_clear();
	free(text);
	return 0;
}
