/* tests/fuzz/fuzz_inventory.c: libFuzzer target for the Ansible inventory reader,
 * pv_playbook_inventory_parse() (playbooks/inventory.h): a file a user gives, read on the
 * controller. An input is a few directive lines, then the inventory:
 *
 *     @yaml          read it as YAML (the name ends in .yml), else as INI
 *     @group NAME    the group asked for (else 'all')
 *
 * '@' starts no INI line we read as a host and no YAML plain scalar, so the seeds are valid
 * inventories as they are. On success the hosts are checked against what inventory.h promises
 * (at least one, at most the cap, names unique and plain, ports in range, no Jinja in a
 * value used); on failure the code and the message (it names the file). A broken promise
 * aborts, which libFuzzer reports as a crash with the input that did it. */
#include "playbooks/inventory.h"
#include "util/err.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void broken(const char *what, const char *detail)
{
	fprintf(stderr, "fuzz_inventory: broken promise: %s (%s); message: '%s'\n", what,
		detail ? detail : "", pv_errmsg());
	abort();
}

static bool jinja(const char *s)
{
	return s && (strstr(s, "{{") || strstr(s, "{%"));
}

static void check(const struct pv_playbook_inventory *inv)
{
	if (inv->n < 1 || inv->n > PV_PLAYBOOK_INVENTORY_HOSTS_MAX || !inv->hosts || !inv->format)
		broken("host count out of range", NULL);
	for (size_t i = 0; i < inv->n; i++) {
		const struct pv_playbook_inventory_host *h = &inv->hosts[i];

		if (!h->name || !h->name[0] || h->line < 1)
			broken("a host without a name or a line", NULL);
		if (jinja(h->name) || jinja(h->address) || jinja(h->user) || jinja(h->identity))
			broken("Jinja in a host's name or value", h->name);
		if (h->port < 0 || h->port > 65535)
			broken("port out of range", h->name);
		/* names are unique: the same name twice is one host (quadratic, but inputs are
		 * small: libFuzzer's default max_len) */
		for (size_t j = 0; j < i && inv->n < 2000; j++)
			if (!strcmp(inv->hosts[j].name, h->name))
				broken("a host given twice", h->name);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data, *end = text + size, *name = "fuzz.ini";
	char *group = NULL;
	struct pv_playbook_inventory *inv = NULL;
	int r;

	while (text < end && *text == '@') {
		const char *nl = memchr(text, '\n', (size_t)(end - text));
		size_t len = nl ? (size_t)(nl - text) : (size_t)(end - text);

		if (len == 5 && !memcmp(text, "@yaml", 5))
			name = "fuzz.yml";
		else if (len > 7 && !memcmp(text, "@group ", 7) && !group) {
			if (!(group = strndup(text + 7, len - 7)))
				abort();
		}
		text = nl ? nl + 1 : end;
	}
	/* the text is the tail of libFuzzer's buffer, which ends exactly there: any read past
	 * its length is caught by ASan */
	r = pv_playbook_inventory_parse(name, text, (size_t)(end - text), group, &inv);
	if (r == PV_OK) {
		if (!inv)
			broken("success without an inventory", NULL);
		check(inv);
	} else {
		if (inv)
			broken("failure but *out was set", NULL);
		if (r != PV_ECONFIG && r != PV_EIO)
			broken("a code other than config or io", pv_status_name(r));
		if (strncmp(pv_errmsg(), name, strlen(name)) != 0 && r == PV_ECONFIG)
			broken("a message that does not start with the file's name", NULL);
	}
	pv_playbook_inventory_free(inv);
	free(group);
	pv_error_clear();
	return 0;
}
