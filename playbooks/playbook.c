/* playbooks/playbook.c: the playbook schema: node tree -> validated struct pv_playbook.
 *
 * Each section is read by one function that first checks the mapping's keys (unknown,
 * duplicate), then reads each key with a typed getter that names the exact node on failure.
 * Processing stops at the first error; everything already filled in is freed by
 * pv_playbook_free(), so no error path frees by hand. This file holds the whole: the order
 * of the sections, the names checked across them, the overrides, loading and freeing; the
 * sections are read in lab_read.c and run_read.c, with the typed getters of schema.c. */
#include "playbooks/playbook.h"

#include "playbooks/names.h"
#include "playbooks/playbook_internal.h"
#include "playbooks/tree.h"
#include "util/err.h"
#include "util/file.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PLAYBOOK_MAX (16u << 20) /* a playbook larger than this is surely not one */

#define DEFAULT_LAB "provision"

static const char *const top_keys[] = {"lab",	 "ssh",	    "domain",	  "users",
				       "server", "clients", "controller", "driver",
				       "drain",	 "load",    "fanout",	  NULL};

/* Names must fit before anything is created: no client named as a step folder's own entry
 * (names.h), the longest user name per client (n = per_client) and alias within AD's limits. */
static int check_names(struct ctx *c)
{
	struct pv_playbook *pb = c->pb;
	char name[512];
	unsigned mask = 0;

	pv_playbook_names_placeholders(pb->users.name_template, &mask); /* checked already */
	if (pb->nclients > 1 && !(mask & PV_PLAYBOOK_NAMES_CLIENT))
		return pv_playbook_schema_fail(
			&c->sc, c->name_template,
			"'users.name_template' is '%s', which has no "
			"{client} but there are %zu clients; expected a template with {client} "
			"so that user names differ between clients",
			pb->users.name_template, pb->nclients);
	for (size_t i = 0; i < pb->nclients; i++) {
		const struct pv_playbook_node *at =
			c->name_template ? c->name_template : c->client_at[i];

		if (pv_playbook_names_check_client("client name", pb->clients[i].name))
			return pv_playbook_schema_fail_recorded(&c->sc, c->client_at[i], NULL,
								NULL);
		if (pv_playbook_names_expand(pb->users.name_template, pb->clients[i].name,
					     pb->has_server ? pb->server.host.name : NULL,
					     pb->users.per_client, 1, name, sizeof(name)))
			return pv_playbook_schema_fail_recorded(&c->sc, at, NULL, NULL);
		if (pv_playbook_names_check_sam("user name", name))
			return pv_playbook_schema_fail_recorded(
				&c->sc, at, NULL, ": shorten the client name or name_template");
		if (pv_playbook_names_check_safe("user name", name, 0))
			return pv_playbook_schema_fail_recorded(&c->sc, at, "users.name_template",
								NULL);
	}
	if (pb->has_server) {
		const struct pv_playbook_node *at =
			c->alias_template ? c->alias_template : c->server_name;

		if (pv_playbook_names_expand(pb->server.alias_template, NULL, pb->server.host.name,
					     pb->users.per_client, 1, name, sizeof(name)))
			return pv_playbook_schema_fail_recorded(&c->sc, at, NULL, NULL);
		if (pv_playbook_names_check_host("alias", name))
			return pv_playbook_schema_fail_recorded(
				&c->sc, at, NULL, ": shorten the server name or alias_template");
		/* every share name: {k} and {server} can change what a name starts with */
		at = c->share_template ? c->share_template : c->server_name;
		for (unsigned k = 1; k <= pb->server.shares; k++) {
			if (pv_playbook_names_expand(pb->server.share_template, NULL,
						     pb->server.host.name, 0, k, name,
						     sizeof(name)))
				return pv_playbook_schema_fail_recorded(&c->sc, at, NULL, NULL);
			if (pv_playbook_names_check_share("share name", name) ||
			    pv_playbook_names_check_safe("share name", name, 0))
				return pv_playbook_schema_fail_recorded(
					&c->sc, at, "server.share_template", NULL);
		}
	}
	return 0;
}

static int parse_lab(struct ctx *c, const struct pv_playbook_node *root)
{
	const char *expect = "1 to 32 letters, digits, '_' or '-'", *s;
	const struct pv_playbook_node *v;
	size_t len;
	int r;

	if ((r = pv_playbook_schema_set(&c->pb->lab, DEFAULT_LAB)) ||
	    (r = pv_playbook_schema_text(&c->sc, root, "", "lab", expect, &s, &v)) || !s)
		return r;
	len = strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-");
	if (s[len])
		return pv_playbook_schema_fail(&c->sc, v,
					       "'lab' is '%.64s', which contains '%c'; expected %s",
					       s, s[len], expect);
	if (len > 32)
		return pv_playbook_schema_fail(
			&c->sc, v, "'lab' is %zu characters long; expected %s", len, expect);
	/* it names the OU and tags what is made on the hosts */
	if (s[0] == '-')
		return pv_playbook_schema_fail(
			&c->sc, v,
			"'lab' is '%s', which starts with '-'; expected %s, starting "
			"with a letter, digit or '_'",
			s, expect);
	return pv_playbook_schema_set(&c->pb->lab, s);
}

static int validate(struct ctx *c, const struct pv_playbook_node *root)
{
	int r;

	c->pb->fanout = 16;
	if ((r = pv_playbook_schema_keys(&c->sc, root, "", top_keys, NULL)) ||
	    (r = parse_lab(c, root)) ||
	    (r = pv_playbook_schema_int(&c->sc, root, "", "fanout", 1, 256, &c->pb->fanout)) ||
	    (r = pb_ssh_defaults(&c->ssh)) || (r = pb_parse_ssh(c, root, "", &c->ssh)) ||
	    (r = pb_parse_domain(c, root)) || (r = pb_parse_users(c, root)) ||
	    (r = pb_parse_server(c, root)) || (r = pb_parse_clients(c, root)) ||
	    (r = pb_parse_controller(c, root)) || (r = pb_parse_driver(c, root)) ||
	    (r = pb_parse_drain(c, root)) || (r = pb_parse_load(c, root)) || (r = check_names(c)))
		return r;
	return 0;
}

/* ---- overrides ---------------------------------------------------------------------------- */

static bool secret_path(const char *path, size_t len)
{
	static const char *const parents[] = {"domain.admin_password.", "users.password.", NULL};

	for (size_t i = 0; parents[i]; i++) {
		size_t pl = strlen(parents[i]);

		if (len > pl && !strncmp(path, parents[i], pl))
			for (size_t j = 0; pb_secret_keys[j]; j++)
				if (len - pl == strlen(pb_secret_keys[j]) &&
				    !strncmp(path + pl, pb_secret_keys[j], len - pl))
					return true;
	}
	return false;
}

static int apply_overrides(struct pv_playbook_node *root, const char *const *ovr)
{
	char *path;
	const char *eq;
	int r;

	for (int i = 0; ovr && ovr[i]; i++) {
		eq = strchr(ovr[i], '=');
		if (!eq || eq == ovr[i])
			return pv_error(PV_ECONFIG,
					"command line: option '%s': no %s; expected "
					"KEY.PATH=VALUE such as users.per_client=20",
					ovr[i], eq ? "key" : "'='");
		if (!(path = strndup(ovr[i], (size_t)(eq - ovr[i]))))
			return pv_playbook_schema_oom();
		/* switching a secret's source replaces the whole reference */
		r = pv_playbook_tree_set(root, path, eq + 1, i, secret_path(path, strlen(path)));
		free(path);
		if (r) {
			char loc[512];

			pv_playbook_schema_option(ovr[i], false, loc, sizeof(loc));
			return pv_error_prefix(r, "%s", loc);
		}
	}
	return 0;
}

/* ---- public ------------------------------------------------------------------------------- */

char *pb_dir_of(const char *path)
{
	const char *slash = path ? strrchr(path, '/') : NULL;
	char cwd[PATH_MAX], *out;

	if (slash && path[0] == '/')
		return slash == path ? strdup("/") : strndup(path, (size_t)(slash - path));
	if (!getcwd(cwd, sizeof(cwd)))
		return NULL;
	if (!slash)
		return strdup(cwd);
	if (asprintf(&out, "%s/%.*s", cwd, (int)(slash - path), path) < 0)
		return NULL;
	return out;
}

static int parse(const char *name, const char *path, const char *text, size_t len,
		 const char *const *overrides, struct pv_playbook **out)
{
	struct ctx c = {.sc = {.name = name, .doc = "the playbook", .ovr = overrides}};
	struct pv_playbook_node *root = NULL;
	int r;

	if (!(c.pb = calloc(1, sizeof(*c.pb))) || !(c.pb->path = strdup(path)))
		r = pv_playbook_schema_oom();
	else if (!(c.sc.dir = c.pb->dir = pb_dir_of(*path ? path : NULL)))
		r = pv_error(PV_EIO, "cannot find the current folder: %s", strerror(errno));
	else if (!(r = pv_playbook_tree_parse(name, text, len, &root)) &&
		 !(r = pv_playbook_schema_keys(&c.sc, root, "", top_keys, NULL)) &&
		 !(r = apply_overrides(root, overrides)))
		r = validate(&c, root);
	pv_playbook_tree_free(root);
	pb_ssh_release(&c.ssh);
	free(c.client_at);
	if (r) {
		pv_playbook_free(c.pb);
		return r;
	}
	*out = c.pb;
	return 0;
}

int pv_playbook_parse(const char *name, const char *text, size_t len, const char *const *overrides,
		      struct pv_playbook **out)
{
	return parse(name ? name : "playbook", "", text, len, overrides, out);
}

int pv_playbook_read(const char *path, const char *const *overrides, struct pv_playbook **out)
{
	struct stat st;
	char *text = NULL;
	size_t len = 0;
	int r;

	if ((r = pv_file_read(path, "playbook", PLAYBOOK_MAX, &text, &len, &st)) != PV_OK)
		return r;
	r = parse(path, path, text, len, overrides, out);
	free(text);
	return r;
}

static void secret_release(struct pv_playbook_secret_ref *s)
{
	free(s->value);
	free(s->where);
}

void pv_playbook_free(struct pv_playbook *pb)
{
	if (!pb)
		return;
	free(pb->path);
	free(pb->dir);
	free(pb->lab);
	free(pb->domain.realm);
	free(pb->domain.netbios);
	free(pb->domain.dns_domain);
	free(pb->domain.base_dn);
	free(pb->domain.dc_name);
	free(pb->domain.dc_address);
	free(pb->domain.ca_file);
	free(pb->domain.admin);
	secret_release(&pb->domain.admin_password);
	pb_host_release(&pb->domain.host);
	for (size_t i = 0; i < pb->domain.nother_dcs; i++) {
		free(pb->domain.other_dcs[i].name);
		free(pb->domain.other_dcs[i].address);
	}
	free(pb->domain.other_dcs);
	free(pb->inventory);
	free(pb->inventory_group);
	free(pb->users.name_template);
	free(pb->users.ou);
	secret_release(&pb->users.password);
	pb_host_release(&pb->server.host);
	free(pb->server.alias_template);
	free(pb->server.share_template);
	free(pb->server.share_path);
	free(pb->server.smb_encrypt);
	free(pb->server.fileset);
	free(pb->workload);
	free(pb->server.service);
	for (size_t i = 0; i < pb->nclients; i++)
		pb_host_release(&pb->clients[i]);
	free(pb->clients);
	free(pb->controller.results);
	pb_host_release(&pb->controller.host);
	free(pb->driver.name);
	free(pb->driver.fsct_path);
	free(pb->driver.fsct_workload);
	free(pb->driver.client_command);
	free(pb->driver.controller_command);
	free(pb->drain.command);
	free(pb->drain.metric);
	free(pb);
}

const struct pv_playbook_host *pv_playbook_client(const struct pv_playbook *pb, const char *name)
{
	if (!pb || !name)
		return NULL;
	for (size_t i = 0; i < pb->nclients; i++)
		if (!strcmp(pb->clients[i].name, name))
			return &pb->clients[i];
	return NULL;
}
