/* playbooks/inventory.h: load clients from an Ansible inventory (the static kinds: INI, and
 * YAML or JSON), for the playbook's `clients: {inventory: FILE, group: NAME}`.
 *
 * What is read: groups (`[name]`, `[name:vars]`, `[name:children]`; YAML's hosts, vars and
 * children), host ranges (`cli[01:32]`, `[a:f]`, with a stride), a host's `name:port`, and of
 * the variables only those provision uses: ansible_host, ansible_port, ansible_user and
 * ansible_ssh_private_key_file (and their older ansible_ssh_host, _ssh_port, _ssh_user
 * spellings); a variable given to a group applies to the hosts below it, a deeper group's
 * over its parents', the host's own over every group's, as Ansible merges them. Every other
 * variable is left alone.
 *
 * What is refused, with FILE:LINE (and :COL in YAML) and the reason: a dynamic inventory (an
 * executable file, a script's `#!` line, an inventory plugin's `plugin:` file, a folder),
 * Jinja in a name or a value (`{{ ... }}`, `{% ... %}`: provision does not template), an
 * ansible_connection other than ssh, and anything malformed. The pure parser takes text; only
 * pv_playbook_inventory_read reads a file. */
#ifndef PV_PLAYBOOKS_INVENTORY_H
#define PV_PLAYBOOKS_INVENTORY_H

#include <stddef.h>

/* Most hosts an inventory may give (a range such as [1:99999999] is refused above it). */
#define PV_PLAYBOOK_INVENTORY_HOSTS_MAX 100000
/* Largest inventory file read. */
#define PV_PLAYBOOK_INVENTORY_BYTES_MAX (16u << 20)

/* One host of the group asked for, its variables merged. */
struct pv_playbook_inventory_host {
	char *name;	/* the inventory's host name */
	char *address;	/* ansible_host; NULL when not given (the name is used) */
	int port;	/* ansible_port or NAME:PORT; 0 when not given */
	char *user;	/* ansible_user; NULL when not given */
	char *identity; /* ansible_ssh_private_key_file as written; NULL when not given */
	int line;	/* where the host is first named */
};

struct pv_playbook_inventory {
	struct pv_playbook_inventory_host *hosts; /* in the order the inventory first names them */
	size_t n;
	const char *format; /* "INI" or "YAML" */
};

/* Parse text (len bytes) as an inventory called name: YAML when name ends in .yml, .yaml or
 * .json (as Ansible's yaml plugin decides), else INI. group: the group whose hosts are wanted
 * (its children's too); NULL means "all". On success *out holds at least one host (free with
 * pv_playbook_inventory_free). PV_ECONFIG with "NAME:LINE: ..." (recorded) otherwise; a missing
 * group is "NAME: no group 'x' ...; its groups: ...". */
int pv_playbook_inventory_parse(const char *name, const char *text, size_t len, const char *group,
				struct pv_playbook_inventory **out);
/* Read the file at path (a regular file, not executable, at most PV_PLAYBOOK_INVENTORY_BYTES_MAX)
 * and parse it. PV_EIO when it cannot be read; PV_ECONFIG as above. */
int pv_playbook_inventory_read(const char *path, const char *group,
			       struct pv_playbook_inventory **out);
void pv_playbook_inventory_free(struct pv_playbook_inventory *inv);

#endif
