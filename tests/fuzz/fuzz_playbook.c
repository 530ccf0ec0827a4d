/* tests/fuzz/fuzz_playbook.c: libFuzzer target for the playbook loader, pv_playbook_parse(),
 * with command-line overrides (--set). An input is a few directive lines, then the playbook:
 *
 *     @set KEY.PATH=VALUE    an override, applied in order as --set would
 *     @secret                an override giving a password in plain (users.password, then
 *                            domain.admin_password, alternately) whose value the input does
 *                            not hold: no message may ever show it
 *     ...                    the rest is the YAML text
 *
 * '@' cannot start a YAML plain scalar, so a directive is never a line of a playbook, and the
 * seed playbooks are valid inputs as they are. On success the structs are checked against what
 * playbook.h and docs/playbook.md promise; on failure the code and the message. A broken
 * promise aborts, which libFuzzer reports as a crash with the input that did it. */
#include "playbooks/names.h"
#include "playbooks/playbook.h"
#include "util/err.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MAX_OVERRIDES 16

/* Not a word any message or default holds, so finding it in a message can only mean the
 * password given on the command line was printed. */
static const char TOKEN[] = "Zq7hunter2Xk9Secret";

static void broken(const char *what, const char *detail)
{
	fprintf(stderr, "fuzz_playbook: broken promise: %s (%s); message: '%s'\n", what,
		detail ? detail : "", pv_errmsg());
	abort();
}

static void check_ssh(const struct pv_playbook_ssh *s, const char *host)
{
	if (!s->user || !s->known_hosts)
		broken("an ssh setting without its default", host);
	if (s->port < 1 || s->port > 65535 || s->timeout < 1 || s->timeout > 3600)
		broken("ssh port or timeout out of range", host);
}

static bool has(const char *s, int (*cls)(int))
{
	for (; *s; s++)
		if (cls((unsigned char)*s))
			return true;
	return false;
}

static void check_secret(const struct pv_playbook_secret_ref *s, const char *what)
{
	bool valued = s->source == PV_PLAYBOOK_SECRET_FILE || s->source == PV_PLAYBOOK_SECRET_ENV;

	if (valued != (s->value != NULL))
		broken("a secret reference's value does not match its source", what);
	if (s->value && strstr(s->value, TOKEN))
		broken("the plain password ended up in a reference", what);
}

/* The names the templates make must fit AD's limits (design.md: an error before anything is
 * created): the longest user name per client, the longest alias. */
static void check_names(const struct pv_playbook *pb)
{
	const char *server = pb->has_server ? pb->server.host.name : NULL;
	char name[512];

	for (size_t i = 0; i < pb->nclients; i++) {
		if (pv_playbook_names_expand(pb->users.name_template, pb->clients[i].name, server,
					     pb->users.per_client, 1, name, sizeof(name)) ||
		    pv_playbook_names_check_sam("user name", name))
			broken("a user name the playbook accepted is not valid", name);
	}
	if (pb->has_server &&
	    (pv_playbook_names_expand(pb->server.alias_template, NULL, server, pb->users.per_client,
				      1, name, sizeof(name)) ||
	     pv_playbook_names_check_host("alias", name)))
		broken("an alias the playbook accepted is not valid", name);
}

static void check_playbook(const struct pv_playbook *pb)
{
	const struct pv_playbook_domain *d = &pb->domain;
	size_t lab = pb->lab ? strlen(pb->lab) : 0;

	if (!pb->path || !pb->dir)
		broken("no path or folder", NULL);
	if (lab < 1 || lab > 32 ||
	    pb->lab[strspn(pb->lab, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
				    "0123456789_-")])
		broken("lab id outside [A-Za-z0-9_-]{1,32}", pb->lab);
	if (!d->realm || !d->netbios || !d->dns_domain || !d->base_dn || !d->dc_name || !d->admin)
		broken("a required domain setting is missing", NULL);
	if (has(d->realm, islower) || has(d->netbios, islower) || has(d->dns_domain, isupper))
		broken("realm or NetBIOS name not upper-cased, or DNS domain not lower-cased",
		       d->realm);
	if (pv_playbook_names_check_host("NetBIOS domain name", d->netbios))
		broken("NetBIOS domain name not valid", d->netbios);
	if (d->transport != PV_PLAYBOOK_LDAP_GSSAPI && !d->ca_file)
		broken("no CA file for a TLS transport", NULL);
	if (d->timeout < 1 || d->timeout > 3600)
		broken("domain timeout out of range", NULL);
	if (d->admin_password.source == PV_PLAYBOOK_SECRET_UNSET)
		broken("admin_password is required", NULL);
	check_secret(&d->admin_password, "domain.admin_password");
	check_secret(&pb->users.password, "users.password");
	if (pb->users.per_client < 1 || pb->users.per_client > 100000000 ||
	    !pb->users.name_template || !pb->users.ou)
		broken("users section out of range", NULL);
	if (pb->has_server) {
		const struct pv_playbook_server *s = &pb->server;

		if (!s->host.name || !s->host.address || !s->alias_template || !s->share_template ||
		    !s->share_path || !s->service)
			broken("a server setting without its default", NULL);
		if (s->shares < 1 || s->shares > 64 || s->share_path[0] != '/' ||
		    !strstr(s->service, "{action}"))
			broken("server setting out of range", s->share_path);
		check_ssh(&s->host.ssh, "server");
	}
	for (size_t i = 0; i < pb->nclients; i++) {
		const struct pv_playbook_host *h = &pb->clients[i];

		if (!h->name || (!h->address && !pb->inventory))
			broken("a client without name or address", NULL);
		if (pv_playbook_client(pb, h->name) != h)
			broken("client names are not unique", h->name);
		check_ssh(&h->ssh, h->name);
	}
	if (pv_playbook_client(pb, NULL) || (pb->nclients == 0) != (pb->clients == NULL))
		broken("client list inconsistent", NULL);
	if (pb->has_controller) {
		if (!pb->controller.results)
			broken("controller without results folder", NULL);
		if (pb->controller.host.name)
			check_ssh(&pb->controller.host.ssh, "controller");
	}
	if (pb->fanout < 1 || pb->fanout > 256 || pb->domain.replication_timeout < 0)
		broken("fanout or replication timeout out of range", NULL);
	for (size_t i = 0; i < pb->domain.nother_dcs; i++)
		if (!pb->domain.other_dcs[i].name ||
		    !strcasecmp(pb->domain.other_dcs[i].name, pb->domain.dc_name))
			broken("another DC without a name, or domain.dc itself", NULL);
	if (!pb->driver.name || pb->driver.timeout < 0)
		broken("driver settings", NULL);
	if (pb->has_drain && (!pb->drain.command || !pb->drain.metric || pb->drain.threshold < 0 ||
			      pb->drain.interval < 1 || pb->drain.timeout < 1))
		broken("drain settings", NULL);
	{
		const struct pv_playbook_workload *l = &pb->load;
		double total = 0;

		for (int k = 0; k < PV_PLAYBOOK_WORKLOAD_KINDS; k++) {
			if (!(l->kind[k].weight >= 0 && l->kind[k].weight <= 36000) ||
			    !(l->kind[k].limit >= 0.001 && l->kind[k].limit <= 3600))
				broken("a scenario's weight or limit out of range",
				       pv_playbook_workload_names[k]);
			total += l->kind[k].weight;
		}
		if (!(total > 0) || l->rate < 1 || l->rate > PV_PLAYBOOK_WORKLOAD_RATE_MAX ||
		    l->interval < 1 || l->interval > 3600 || !(l->late >= 0 && l->late <= 3600) ||
		    !(l->overload >= 0 && l->overload <= 100))
			broken("load settings out of range", NULL);
	}
	check_names(pb);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data, *end = text + size;
	char *ovr[MAX_OVERRIDES + 1] = {NULL};
	size_t n = 0, secrets = 0;
	struct pv_playbook *pb = NULL;
	/* the token may be checked only when the input cannot have put it there itself */
	bool token_free = !memmem(data, size, TOKEN, sizeof(TOKEN) - 1);
	int r;

	while (text < end && *text == '@' && n < MAX_OVERRIDES) {
		const char *nl = memchr(text, '\n', (size_t)(end - text));
		size_t len = nl ? (size_t)(nl - text) : (size_t)(end - text);

		if (len >= 7 && !memcmp(text, "@secret", 7)) {
			const char *key =
				secrets++ % 2 ? "domain.admin_password" : "users.password";

			if (asprintf(&ovr[n], "%s=%s", key, TOKEN) < 0)
				abort();
			n++;
		} else if (len >= 5 && !memcmp(text, "@set ", 5)) {
			/* an override is a C string, as argv gives it: stop at a NUL */
			if (!(ovr[n++] = strndup(text + 5, len - 5)))
				abort();
		}
		text = nl ? nl + 1 : end;
	}
	/* The YAML is the tail of libFuzzer's buffer, which ends exactly there: any read past
	 * its length is caught by ASan. */
	r = pv_playbook_parse("fuzz.yaml", text, (size_t)(end - text),
			      n ? (const char *const *)ovr : NULL, &pb);
	if (r == PV_OK) {
		if (!pb)
			broken("success without a playbook", NULL);
		check_playbook(pb);
	} else {
		if (pb)
			broken("failure but *out was set", NULL);
		if (r != PV_ECONFIG && r != PV_EIO)
			broken("a code other than config or io", pv_status_name(r));
		if (!pv_errmsg()[0])
			broken("a failure without a message", NULL);
	}
	if (token_free && secrets && strstr(pv_errmsg(), TOKEN))
		broken("a message shows the password given on the command line", TOKEN);
	pv_playbook_free(pb);
	for (size_t i = 0; i < n; i++)
		free(ovr[i]);
	pv_error_clear();
	return 0;
}
