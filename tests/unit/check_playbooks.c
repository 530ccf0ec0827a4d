/* tests/unit/check_playbooks.c: playbook parsing, defaults, overrides and every error class.
 *
 * Error tests assert the exact "NAME:LINE:COL:" (or "command line: option '...'") prefix and
 * the gist of the message. Run from the repository root (playbooks/lab.yaml is loaded). */
#include "playbooks/inventory.h"
#include "playbooks/playbook.h"
#include "util/buf.h"
#include "util/err.h"

#include <check.h>

#include "tests/unit/unit.h"
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The smallest valid playbook: lines 1..6. */
#define BASE                                                                                       \
	"domain:\n"                                                                                \
	"  realm: LAB.TEST\n"                                                                      \
	"  netbios: LAB\n"                                                                         \
	"  dc: dc.lab.test\n"                                                                      \
	"  ca_file: /etc/ca.pem\n"                                                                 \
	"  admin_password: {file: /etc/admin.pass}\n"

static struct pv_playbook *ok(const char *text, const char *const *ovr)
{
	struct pv_playbook *pb = NULL;
	int r = pv_playbook_parse("t.yaml", text, strlen(text), ovr, &pb);

	ck_assert_msg(r == 0, "parse failed: %s", pv_errmsg());
	ck_assert_ptr_nonnull(pb);
	return pb;
}

/* Parsing fails with PV_ECONFIG, *out untouched, and the message holds every want[]. */
static void bad_ovr(const char *text, const char *const *ovr, const char *want1, const char *want2)
{
	struct pv_playbook *pb = NULL;
	int r = pv_playbook_parse("t.yaml", text, strlen(text), ovr, &pb);

	ck_assert_msg(r == PV_ECONFIG, "expected a config error (%s), got %d: %s", want1, r,
		      pv_errmsg());
	ck_assert_ptr_null(pb);
	ck_assert_msg(!strncmp(pv_errmsg(), want1, strlen(want1)),
		      "message '%s' does not start with '%s'", pv_errmsg(), want1);
	if (want2)
		ck_assert_msg(strstr(pv_errmsg(), want2), "message '%s' lacks '%s'", pv_errmsg(),
			      want2);
}

static void bad(const char *text, const char *want1, const char *want2)
{
	bad_ovr(text, NULL, want1, want2);
}

static char *cwd_path(const char *rel)
{
	char cwd[PATH_MAX], *out;

	ck_assert_ptr_nonnull(getcwd(cwd, sizeof(cwd)));
	ck_assert_int_ge(asprintf(&out, "%s/%s", cwd, rel), 0);
	return out;
}

/* ---- valid playbooks ---------------------------------------------------------------------- */

static const char full[] = "lab: bench_1\n"
			   "ssh:\n"
			   "  user: admin\n"
			   "  port: 2200\n"
			   "  identity: keys/id\n"
			   "  known_hosts: /etc/kh\n"
			   "  accept_new: yes\n"
			   "  timeout: 30\n"
			   "domain:\n"
			   "  realm: corp.example.com\n"
			   "  netbios: corp\n"
			   "  dns_domain: Corp.Example.COM\n"
			   "  base_dn: DC=corp,DC=example,DC=com\n"
			   "  dc: dc1.corp.example.com\n"
			   "  dc_address: \"2001:db8::10\"\n"
			   "  transport: starttls\n"
			   "  ca_file: ./certs/ca.pem\n"
			   "  timeout: 20\n"
			   "  admin: root-admin\n"
			   "  admin_password: {env: ADMIN_PW}\n" /* line 20 */
			   "users:\n"
			   "  per_client: 25\n"
			   "  name_template: \"{client}x{n}\"\n"
			   "  ou: OU=load,DC=corp,DC=example,DC=com\n"
			   "  password: {stdin: true}\n"
			   "server:\n"
			   "  name: fs1\n"
			   "  address: 10.0.0.20\n"
			   "  ssh: {user: svc}\n"
			   "  alias_template: \"a{server}{n}\"\n"
			   "  shares: 4\n"
			   "  share_template: \"share{k}\"\n"
			   "  share_path: /data/shares\n"
			   "  fileset: sets/big.yaml\n"
			   "  service: \"sudo systemctl {action} {service}\"\n"
			   "clients:\n"
			   "  - name: c1\n" /* line 37 */
			   "    address: 10.0.0.31\n"
			   "    os: windows\n"
			   "    ssh: {user: Administrator, port: 2222, accept_new: false}\n"
			   "  - name: c2\n"
			   "    address: 10.0.0.32\n"
			   "controller:\n"
			   "  results: /srv/results\n"
			   "  host: {name: ctl, address: 10.0.0.5, ssh: {timeout: 5}}\n"
			   "driver:\n"
			   "  name: fsct\n"
			   "  client_command: \"run-client\"\n"
			   "  controller_command: \"run-controller\"\n"
			   "  timeout: 7200\n"
			   "drain:\n"
			   "  command: \"queue-depth\"\n"
			   "  metric: queue\n"
			   "  threshold: 5\n"
			   "  interval: 3\n"
			   "  timeout: 900\n";

START_TEST(full_playbook)
{
	struct pv_playbook *pb = ok(full, NULL);
	char *identity = cwd_path("keys/id"), *ca = cwd_path("certs/ca.pem");
	char *fileset = cwd_path("sets/big.yaml");
	const struct pv_playbook_host *c1, *c2;

	ck_assert_str_eq(pb->path, "");
	ck_assert_str_eq(pb->lab, "bench_1");
	ck_assert_str_eq(pb->domain.realm, "CORP.EXAMPLE.COM");
	ck_assert_str_eq(pb->domain.netbios, "CORP");
	ck_assert_str_eq(pb->domain.dns_domain, "corp.example.com");
	ck_assert_str_eq(pb->domain.base_dn, "DC=corp,DC=example,DC=com");
	ck_assert_str_eq(pb->domain.dc_name, "dc1.corp.example.com");
	ck_assert_str_eq(pb->domain.dc_address, "2001:db8::10");
	ck_assert_int_eq(pb->domain.transport, PV_PLAYBOOK_LDAP_STARTTLS);
	ck_assert_str_eq(pb->domain.ca_file, ca);
	ck_assert_int_eq(pb->domain.timeout, 20);
	ck_assert_str_eq(pb->domain.admin, "root-admin");
	ck_assert_int_eq(pb->domain.admin_password.source, PV_PLAYBOOK_SECRET_ENV);
	ck_assert_str_eq(pb->domain.admin_password.value, "ADMIN_PW");
	ck_assert_int_eq(pb->domain.admin_password.line, 20);
	ck_assert_int_eq(pb->domain.admin_password.col, 19);

	ck_assert_uint_eq(pb->users.per_client, 25);
	ck_assert_str_eq(pb->users.name_template, "{client}x{n}");
	ck_assert_str_eq(pb->users.ou, "OU=load,DC=corp,DC=example,DC=com");
	ck_assert_int_eq(pb->users.password.source, PV_PLAYBOOK_SECRET_STDIN);
	ck_assert_ptr_null(pb->users.password.value);

	ck_assert(pb->has_server);
	ck_assert_str_eq(pb->server.host.name, "fs1");
	ck_assert_str_eq(pb->server.host.address, "10.0.0.20");
	ck_assert_str_eq(pb->server.host.ssh.user, "svc");
	ck_assert_int_eq(pb->server.host.ssh.port, 2200); /* from the top-level ssh */
	ck_assert_str_eq(pb->server.host.ssh.identity, identity);
	ck_assert_str_eq(pb->server.host.ssh.known_hosts, "/etc/kh");
	ck_assert(pb->server.host.ssh.accept_new);
	ck_assert_int_eq(pb->server.host.ssh.timeout, 30);
	ck_assert_str_eq(pb->server.alias_template, "a{server}{n}");
	ck_assert_uint_eq(pb->server.shares, 4);
	ck_assert_str_eq(pb->server.share_template, "share{k}");
	ck_assert_str_eq(pb->server.share_path, "/data/shares");
	ck_assert_str_eq(pb->server.fileset, fileset);
	ck_assert_str_eq(pb->server.service, "sudo systemctl {action} {service}");

	ck_assert_uint_eq(pb->nclients, 2);
	c1 = pv_playbook_client(pb, "c1");
	c2 = pv_playbook_client(pb, "c2");
	ck_assert_ptr_eq(c1, &pb->clients[0]);
	ck_assert_ptr_eq(c2, &pb->clients[1]);
	ck_assert_ptr_null(pv_playbook_client(pb, "c3"));
	ck_assert_str_eq(c1->address, "10.0.0.31");
	ck_assert_int_eq(c1->os, PV_PLAYBOOK_OS_WINDOWS);
	ck_assert_int_eq(c1->line, 37);
	ck_assert_int_eq(c1->col, 5);
	ck_assert_str_eq(c1->ssh.user, "Administrator");
	ck_assert_int_eq(c1->ssh.port, 2222);
	ck_assert(!c1->ssh.accept_new);
	ck_assert_int_eq(c2->os, PV_PLAYBOOK_OS_LINUX);
	ck_assert_str_eq(c2->ssh.user, "admin");
	ck_assert_int_eq(c2->ssh.port, 2200);

	ck_assert(pb->has_controller);
	ck_assert_str_eq(pb->controller.results, "/srv/results");
	ck_assert_str_eq(pb->controller.host.name, "ctl");
	ck_assert_str_eq(pb->controller.host.address, "10.0.0.5");
	ck_assert_int_eq(pb->controller.host.ssh.timeout, 5);
	ck_assert_str_eq(pb->controller.host.ssh.user, "admin");

	ck_assert_str_eq(pb->driver.name, "fsct");
	ck_assert_str_eq(pb->driver.client_command, "run-client");
	ck_assert_str_eq(pb->driver.controller_command, "run-controller");
	ck_assert_int_eq(pb->driver.timeout, 7200);

	ck_assert(pb->has_drain);
	ck_assert_str_eq(pb->drain.command, "queue-depth");
	ck_assert_str_eq(pb->drain.metric, "queue");
	ck_assert_int_eq(pb->drain.threshold, 5);
	ck_assert_int_eq(pb->drain.interval, 3);
	ck_assert_int_eq(pb->drain.timeout, 900);

	free(identity);
	free(ca);
	free(fileset);
	pv_playbook_free(pb);
}
END_TEST

START_TEST(defaults)
{
	struct pv_playbook *pb;
	char *cwd = cwd_path("");

	setenv("HOME", "/home/tester", 1);
	pb = ok(BASE, NULL);
	cwd[strlen(cwd) - 1] = '\0'; /* drop the trailing '/' */
	ck_assert_str_eq(pb->dir, cwd);
	ck_assert_str_eq(pb->lab, "provision");
	ck_assert_str_eq(pb->domain.dns_domain, "lab.test");
	ck_assert_str_eq(pb->domain.base_dn, "DC=lab,DC=test");
	ck_assert_ptr_null(pb->domain.dc_address);
	ck_assert_int_eq(pb->domain.transport, PV_PLAYBOOK_LDAP_LDAPS);
	ck_assert_int_eq(pb->domain.timeout, 10);
	ck_assert_str_eq(pb->domain.admin, "Administrator");
	ck_assert_int_eq(pb->domain.admin_password.source, PV_PLAYBOOK_SECRET_FILE);
	ck_assert_str_eq(pb->domain.admin_password.value, "/etc/admin.pass");
	ck_assert_uint_eq(pb->users.per_client, 1);
	ck_assert_str_eq(pb->users.name_template, "{client}-u{n}");
	ck_assert_str_eq(pb->users.ou, "OU=provision,DC=lab,DC=test");
	ck_assert_int_eq(pb->users.password.source, PV_PLAYBOOK_SECRET_UNSET);
	ck_assert_int_eq(pb->users.password.line, 0);
	ck_assert(!pb->has_server);
	ck_assert_uint_eq(pb->nclients, 0);
	ck_assert_ptr_null(pb->clients);
	ck_assert(!pb->has_controller);
	ck_assert_str_eq(pb->driver.name, "command");
	ck_assert_ptr_null(pb->driver.client_command);
	ck_assert_ptr_null(pb->driver.controller_command);
	ck_assert_int_eq(pb->driver.timeout, 0);
	ck_assert(!pb->has_drain);
	pv_playbook_free(pb);

	pb = ok(BASE "server: {name: srv, address: 198.18.0.20}\n"
		     "clients: [{name: cli1, address: 198.18.0.31}]\n"
		     "controller: {results: out}\n"
		     "drain: {command: q}\n",
		NULL);
	ck_assert_str_eq(pb->server.alias_template, "{server}u{n}");
	ck_assert_uint_eq(pb->server.shares, 1);
	ck_assert_str_eq(pb->server.share_template, "fsroot{k}");
	ck_assert_str_eq(pb->server.share_path, "/srv/provision");
	ck_assert_ptr_null(pb->server.fileset);
	ck_assert_str_eq(pb->server.service, "systemctl {action} {unit}");
	ck_assert_str_eq(pb->server.host.ssh.user, "root");
	ck_assert_int_eq(pb->server.host.ssh.port, 22);
	ck_assert_ptr_null(pb->server.host.ssh.identity);
	ck_assert_str_eq(pb->server.host.ssh.known_hosts, "/home/tester/.ssh/known_hosts");
	ck_assert(!pb->server.host.ssh.accept_new);
	ck_assert_int_eq(pb->server.host.ssh.timeout, 10);
	ck_assert_int_eq(pb->clients[0].os, PV_PLAYBOOK_OS_LINUX);
	ck_assert_ptr_null(pb->controller.host.name);
	ck_assert_str_eq(pb->drain.metric, "req_queue");
	ck_assert_int_eq(pb->drain.threshold, 0);
	ck_assert_int_eq(pb->drain.interval, 2);
	ck_assert_int_eq(pb->drain.timeout, 600);
	free(cwd);
	pv_playbook_free(pb);
}
END_TEST

START_TEST(gssapi_needs_no_ca)
{
	struct pv_playbook *pb = ok("domain:\n"
				    "  realm: LAB.TEST\n"
				    "  netbios: LAB\n"
				    "  dc: dc.lab.test\n"
				    "  transport: gssapi\n"
				    "  admin_password: {prompt: true}\n",
				    NULL);

	ck_assert_int_eq(pb->domain.transport, PV_PLAYBOOK_LDAP_GSSAPI);
	ck_assert_ptr_null(pb->domain.ca_file);
	ck_assert_int_eq(pb->domain.admin_password.source, PV_PLAYBOOK_SECRET_PROMPT);
	pv_playbook_free(pb);
}
END_TEST

START_TEST(lab_yaml)
{
	struct pv_playbook *pb = NULL;
	char *fileset = cwd_path("playbooks/filesets/small.yaml"), *dir = cwd_path("playbooks");

	ck_assert_msg(pv_playbook_read("playbooks/lab.yaml", NULL, &pb) == 0, "%s", pv_errmsg());
	ck_assert_str_eq(pb->path, "playbooks/lab.yaml");
	ck_assert_str_eq(pb->dir, dir);
	ck_assert_str_eq(pb->lab, "provision");
	ck_assert_str_eq(pb->domain.realm, "LAB.TEST");
	ck_assert_str_eq(pb->domain.netbios, "LAB");
	ck_assert_str_eq(pb->domain.dc_name, "dc.lab.test");
	ck_assert_ptr_null(pb->domain.dc_address); /* the lab's controller resolves the DC */
	ck_assert_int_eq(pb->domain.transport, PV_PLAYBOOK_LDAP_LDAPS);
	ck_assert_str_eq(pb->domain.ca_file, "/var/lib/provision-lab/ca.pem");
	ck_assert_str_eq(pb->domain.admin, "Administrator");
	ck_assert_int_eq(pb->domain.admin_password.source, PV_PLAYBOOK_SECRET_FILE);
	ck_assert_str_eq(pb->domain.admin_password.value, "/var/lib/provision-lab/admin.pass");
	ck_assert_uint_eq(pb->users.per_client, 10);
	ck_assert_str_eq(pb->users.password.value, "/var/lib/provision-lab/user.pass");
	ck_assert_str_eq(pb->server.host.name, "srv");
	ck_assert_str_eq(pb->server.host.address, "198.18.0.20");
	ck_assert_str_eq(pb->server.host.ssh.identity, "/var/lib/provision-lab/ssh/id_ed25519");
	ck_assert_str_eq(pb->server.host.ssh.known_hosts, "/var/lib/provision-lab/ssh/known_hosts");
	ck_assert_uint_eq(pb->server.shares, 2);
	ck_assert_str_eq(pb->server.share_path, "/srv/provision");
	ck_assert_str_eq(pb->server.service,
			 "/var/lib/provision-lab/bin/lab-service {action} {service}");
	ck_assert_str_eq(pb->server.fileset, fileset);
	ck_assert_uint_eq(pb->nclients, 2);
	ck_assert_str_eq(pb->clients[0].name, "cli1");
	ck_assert_str_eq(pb->clients[0].address, "198.18.0.31");
	ck_assert_str_eq(pb->clients[1].name, "cli2");
	ck_assert_str_eq(pb->clients[1].address, "198.18.0.32");
	ck_assert_str_eq(pb->clients[1].ssh.user, "root");
	ck_assert(pb->has_controller);
	ck_assert_ptr_null(pb->controller.host.name);
	ck_assert_str_eq(pb->controller.results, "/var/lib/provision-lab/results");
	ck_assert(!pb->has_drain);
	free(fileset);
	free(dir);
	pv_playbook_free(pb);
}
END_TEST

/* lab.yaml's commented load: example, uncommented, is a valid section holding the defaults. */
START_TEST(lab_yaml_load_example)
{
	struct pv_playbook *pb = NULL;
	struct pv_buf text = PV_BUF_INIT;
	struct pv_playbook_workload def;
	char line[512];
	bool in = false;
	FILE *f = fopen("playbooks/lab.yaml", "r");

	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f)) {
		in = in || !strcmp(line, "# load:\n");
		pv_buf_addstr(&text, in && !strncmp(line, "# ", 2) ? line + 2 : line);
	}
	fclose(f);
	ck_assert(in);
	ck_assert_msg(pv_playbook_parse("lab.yaml", text.data, text.len, NULL, &pb) == 0, "%s",
		      pv_errmsg());
	ck_assert(pb->has_load);
	pv_playbook_workload_defaults(&def);
	ck_assert(memcmp(&pb->load, &def, sizeof(def)) == 0);
	pv_playbook_free(pb);
	pv_buf_release(&text, 0);
}
END_TEST

START_TEST(load_errors)
{
	struct pv_playbook *pb = NULL;

	ck_assert_int_eq(pv_playbook_read("tests/unit/no-such-playbook.yaml", NULL, &pb), PV_EIO);
	ck_assert_ptr_null(pb);
	ck_assert_ptr_nonnull(strstr(pv_errmsg(), "no-such-playbook.yaml"));
	ck_assert_int_eq(pv_playbook_read("playbooks", NULL, &pb), PV_EIO);
	ck_assert_ptr_nonnull(strstr(pv_errmsg(), "folder"));
	ck_assert_ptr_null(pb);
	pv_playbook_free(NULL);
}
END_TEST

/* Relative paths follow the playbook's folder; "~/" follows $HOME; absolute ones stay. */
START_TEST(path_resolution)
{
	char dir[] = "/tmp/check_playbooks.XXXXXX", file[64], *p;
	struct pv_playbook *pb = NULL;
	FILE *f;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(file, sizeof(file), "%s/pb.yaml", dir);
	f = fopen(file, "w");
	ck_assert_ptr_nonnull(f);
	fputs("ssh: {identity: ~/.ssh/id, known_hosts: kh}\n"
	      "domain:\n"
	      "  realm: LAB.TEST\n"
	      "  netbios: LAB\n"
	      "  dc: dc.lab.test\n"
	      "  ca_file: ./ca.pem\n"
	      "  admin_password: {file: secrets/admin.pass}\n"
	      "users: {password: {file: /abs/user.pass}}\n"
	      "server: {name: srv, address: 198.18.0.20, fileset: ../sets/f.yaml}\n"
	      "controller: {results: res}\n",
	      f);
	ck_assert_int_eq(fclose(f), 0);
	setenv("HOME", "/home/tester", 1);
	ck_assert_msg(pv_playbook_read(file, NULL, &pb) == 0, "%s", pv_errmsg());
	/* a relative path given on the command line follows the current folder instead */
	{
		const char *ovr[] = {"domain.ca_file=certs/ca.pem", "server.fileset=/f.yaml", NULL};
		struct pv_playbook *pb2 = NULL;
		char *ca = cwd_path("certs/ca.pem");

		ck_assert_msg(pv_playbook_read(file, ovr, &pb2) == 0, "%s", pv_errmsg());
		ck_assert_str_eq(pb2->domain.ca_file, ca);
		ck_assert_str_eq(pb2->server.fileset, "/f.yaml");
		free(ca);
		pv_playbook_free(pb2);
	}
	unlink(file);
	rmdir(dir);

	ck_assert_str_eq(pb->dir, dir);
	ck_assert_str_eq(pb->server.host.ssh.identity, "/home/tester/.ssh/id");
	ck_assert_int_ge(asprintf(&p, "%s/kh", dir), 0);
	ck_assert_str_eq(pb->server.host.ssh.known_hosts, p);
	free(p);
	ck_assert_int_ge(asprintf(&p, "%s/ca.pem", dir), 0);
	ck_assert_str_eq(pb->domain.ca_file, p);
	free(p);
	ck_assert_int_ge(asprintf(&p, "%s/secrets/admin.pass", dir), 0);
	ck_assert_str_eq(pb->domain.admin_password.value, p);
	free(p);
	ck_assert_str_eq(pb->users.password.value, "/abs/user.pass");
	ck_assert_int_ge(asprintf(&p, "%s/../sets/f.yaml", dir), 0);
	ck_assert_str_eq(pb->server.fileset, p);
	free(p);
	ck_assert_int_ge(asprintf(&p, "%s/res", dir), 0);
	ck_assert_str_eq(pb->controller.results, p);
	free(p);
	pv_playbook_free(pb);
}
END_TEST

/* A remote controller's results folder belongs to that host: not resolved locally, and so
 * absolute (a relative one used to be taken as given). */
START_TEST(remote_results_kept)
{
	struct pv_playbook *pb = ok(BASE "controller:\n"
					 "  results: /var/results\n"
					 "  host: {name: ctl.lab.test}\n",
				    NULL);

	ck_assert_str_eq(pb->controller.results, "/var/results");
	ck_assert_str_eq(pb->controller.host.name, "ctl.lab.test");
	ck_assert_ptr_null(pb->controller.host.address);
	pv_playbook_free(pb);
	bad(BASE "controller:\n"
		 "  results: results\n"
		 "  host: {name: ctl.lab.test}\n",
	    "t.yaml:8:12: 'controller.results' is 'results', a relative path; expected an "
	    "absolute, normalized path on the controller host",
	    NULL);
}
END_TEST

/* ---- YAML-level errors -------------------------------------------------------------------- */

START_TEST(syntax_error)
{
	bad("domain:\n  realm: LAB.TEST\n netbios: LAB\n",
	    "t.yaml:3:2: YAML syntax error: ", "did not find expected key");
	bad("domain:\n\trealm: LAB.TEST\n",
	    "t.yaml:2:1: YAML syntax error: ", "found character that cannot start any token");
	bad("lab: a: b\n", "t.yaml:1:7: YAML syntax error: ", "mapping values are not allowed");
	bad("domain: {realm: LAB\n", "t.yaml:2:1: YAML syntax error: ", "flow mapping at 1:9");
	bad("lab: x\nlab2: \xff\n", "t.yaml:2:7: YAML syntax error: ", "expected UTF-8 text");
}
END_TEST

START_TEST(empty_document)
{
	bad("", "t.yaml:1:1: the document is empty", "expected a mapping");
	bad("# only a comment\n", "t.yaml:2:1: the document is empty", NULL);
	bad("---\n", "t.yaml:2:1: the document is empty", NULL);
	bad("- a\n- b\n", "t.yaml:1:1: the playbook is a sequence; expected a mapping", NULL);
	bad("hello\n", "t.yaml:1:1: the playbook is a string; expected a mapping", NULL);
}
END_TEST

START_TEST(multiple_documents)
{
	bad(BASE "---\nlab: x\n", "t.yaml:7:1: a second YAML document starts here",
	    "expected one document");
	bad("---\n" BASE "...\n---\n", "t.yaml:9:1: a second YAML document", NULL);
}
END_TEST

START_TEST(anchors_and_aliases)
{
	bad(BASE "ssh: &s {port: 22}\nserver: {name: srv, address: 1.2.3.4, ssh: *s}\n",
	    "t.yaml:7:6: anchor '&s': YAML aliases are not supported", NULL);
	bad(BASE "lab: *x\n", "t.yaml:7:6: alias '*x': YAML aliases are not supported", NULL);
	bad(BASE "lab: !!str x\n", "t.yaml:7:6: tag ", "YAML tags are not supported");
}
END_TEST

START_TEST(structure_errors)
{
	bad(BASE "? [a, b]\n: c\n", "t.yaml:7:3: a sequence is used as a mapping key", NULL);
	bad(BASE "lab: \"a\\0b\"\n", "t.yaml:7:6: value holds a NUL character", NULL);
	{
		char deep[400] = "lab: ";

		for (int i = 0; i < 70; i++)
			strcat(deep, "[");
		bad(deep, "t.yaml:1:69: nesting deeper than 64 levels", NULL);
	}
}
END_TEST

/* ---- schema errors ------------------------------------------------------------------------ */

START_TEST(unknown_key)
{
	bad(BASE "  relam: X\n",
	    "t.yaml:7:3: unknown key 'relam' in 'domain' (did you mean 'realm'?); expected one of: "
	    "realm, netbios, dns_domain, ",
	    NULL);
	bad(BASE "colour: red\n",
	    "t.yaml:7:1: unknown key 'colour' at top level; expected one of: "
	    "lab, ssh, domain,",
	    NULL);
	/* no suggestion when nothing is close */
	bad(BASE "ssh: {zzzzzz: 1}\n",
	    "t.yaml:7:7: unknown key 'zzzzzz' in 'ssh'; expected one "
	    "of: user, port,",
	    NULL);
	bad(BASE "clients:\n  - {name: a, address: 1.2.3.4, addres: 1.2.3.5}\n",
	    "t.yaml:8:33: unknown key 'addres' in 'clients.0' (did you mean 'address'?)", NULL);
	bad(BASE "server: {name: s, address: 1.2.3.4, ssh: {prot: 1}}\n",
	    "t.yaml:7:43: unknown key 'prot' in 'server.ssh' (did you mean 'port'?)", NULL);
}
END_TEST

START_TEST(duplicate_key)
{
	bad(BASE "  realm: OTHER.TEST\n",
	    "t.yaml:7:3: duplicate key 'realm' in 'domain' (first at line 2)", NULL);
	bad("lab: a\n" BASE "lab: b\n",
	    "t.yaml:8:1: duplicate key 'lab' at top level (first at "
	    "line 1)",
	    NULL);
}
END_TEST

START_TEST(wrong_type)
{
	bad(BASE "users:\n  per_client: {a: 1}\n",
	    "t.yaml:8:15: 'users.per_client' is a mapping; expected an integer", NULL);
	bad(BASE "ssh: 22\n", "t.yaml:7:6: 'ssh' is a string; expected a mapping", NULL);
	bad(BASE "clients: {name: a}\n", "t.yaml:7:10: 'clients' is a mapping; expected a sequence",
	    NULL);
	bad(BASE "lab: [a]\n", "t.yaml:7:6: 'lab' is a sequence; expected 1 to 32", NULL);
	bad(BASE "clients:\n  - cli1\n", "t.yaml:8:5: 'clients.0' is a string; expected a mapping",
	    NULL);
	/* an empty value sits right after its key's colon */
	bad(BASE "server:\n", "t.yaml:7:8: 'server' is empty; expected a mapping", NULL);
	bad(BASE "lab:\n", "t.yaml:7:5: 'lab' has no value", NULL);
	bad(BASE "lab: \"\"\n", "t.yaml:7:6: 'lab' is empty", NULL);
}
END_TEST

/* The run's ramp and the drain's probes: parsed, defaulted, and an impossible ramp refused
 * where it is written. */
START_TEST(driver_and_drain)
{
	struct pv_playbook *pb = NULL;
	const char *ok = BASE "driver: {name: command, client_command: 'x {users}', min_users: 10, "
			      "max_users: 40, step: 10, duration: 30, warmup: 5, watch: 1}\n"
			      "drain: {probe: writeback, threshold: 100, between_steps: yes}\n";

	ck_assert_int_eq(pv_playbook_parse("t.yaml", ok, strlen(ok), NULL, &pb), PV_OK);
	ck_assert_int_eq(pb->driver.kind, PV_PLAYBOOK_DRIVER_COMMAND);
	ck_assert_uint_eq(pb->driver.min_users, 10);
	ck_assert_uint_eq(pb->driver.max_users, 40);
	ck_assert_uint_eq(pb->driver.step, 10);
	ck_assert_int_eq(pb->driver.duration, 30);
	ck_assert_int_eq(pb->driver.warmup, 5);
	ck_assert_int_eq(pb->driver.watch, 1);
	ck_assert_str_eq(pb->driver.fsct_path, "fsct.exe");
	ck_assert_int_eq(pb->drain.probe, PV_PLAYBOOK_PROBE_WRITEBACK);
	ck_assert_str_eq(pb->drain.metric, "dirty+writeback kB");
	ck_assert(pb->drain.between_steps);
	ck_assert_int_eq(pb->drain.settle, 4);
	pv_playbook_free(pb);
	pb = NULL;
	bad(BASE "driver: {min_users: 50, max_users: 10}\n",
	    "t.yaml:7:21: 'driver.min_users' (50) is more than 'driver.max_users' (10)", NULL);
	bad(BASE "driver: {step: 0}\n", "t.yaml:7:16: ", "driver.step");
	bad(BASE "driver: {duration: 0}\n", "t.yaml:7:20: ", "driver.duration");
	bad(BASE "driver: {name: dbench}\n", "t.yaml:7:16: 'driver.name' is 'dbench'", NULL);
	bad(BASE "drain: {probe: queue}\n", "t.yaml:7:16: 'drain.probe' is 'queue'", NULL);
}
END_TEST

/* load.workload: the learned kinds read, the only ones drawn, at the capture's rate unless
 * load.rate says another; a file that is not one refused, naming the key and how to make one. */
START_TEST(load_workload)
{
	char dir[] = "/tmp/check_playbooks.XXXXXX", file[64], text[512];
	struct pv_playbook *pb;
	FILE *f;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(file, sizeof(file), "%s/w.yaml", dir);
	ck_assert_ptr_nonnull(f = fopen(file, "w"));
	fputs("kinds:\n"
	      "  - {commands: CREATE READ+ CLOSE, weight: 75, per_user_hour: 150.2, requests: 4}\n"
	      "  - {commands: TREE_CONNECT, weight: 20, per_user_hour: 40}\n"
	      "  - {commands: CREATE CLOSE, weight: 5, per_user_hour: 10}\n",
	      f);
	ck_assert_int_eq(fclose(f), 0);
	snprintf(text, sizeof(text), BASE "load: {workload: %s}\n", file);
	pb = ok(text, NULL);
	ck_assert_str_eq(pb->workload, file);
	ck_assert_uint_eq(pb->load.learned.n, 2);
	ck_assert_uint_eq(pb->load.rate, 160); /* 150.2 + 10: the logons' kind is the driver's */
	for (int k = 0; k < PV_PLAYBOOK_WORKLOAD_KINDS; k++)
		ck_assert(pb->load.kind[k].weight == (k == PV_PLAYBOOK_WORKLOAD_LEARNED));
	pv_playbook_free(pb);
	/* a rate of its own; a built-in kind weighed beside them */
	snprintf(text, sizeof(text),
		 BASE "load: {workload: %s, rate: 50, scenarios: {browse: {weight: 2}}}\n", file);
	pb = ok(text, NULL);
	ck_assert_uint_eq(pb->load.rate, 50);
	ck_assert(pb->load.kind[PV_PLAYBOOK_WORKLOAD_BROWSE].weight == 2);
	ck_assert(pb->load.kind[PV_PLAYBOOK_WORKLOAD_LEARNED].weight == 1);
	ck_assert(pb->load.kind[PV_PLAYBOOK_WORKLOAD_UPLOAD].weight == 0);
	pv_playbook_free(pb);
	/* no workload: the learned kind cannot be weighed */
	bad(BASE "load: {scenarios: {learned: {weight: 1}}}\n",
	    "t.yaml:7:19: 'load.scenarios.learned' has a weight, but there is no load.workload",
	    NULL);
	/* a file that is not one */
	ck_assert_ptr_nonnull(f = fopen(file, "w"));
	fputs("kinds:\n  - {commands: CREATE JUMP, weight: 5}\n", f);
	ck_assert_int_eq(fclose(f), 0);
	snprintf(text, sizeof(text), BASE "load: {workload: %s}\n", file);
	bad(text, "load.workload (write one with `provision learn CAPTURE -o FILE`): ", "'JUMP'");
	unlink(file);
	bad(text, "load.workload (write one with `provision learn CAPTURE -o FILE`): cannot open",
	    NULL);
	rmdir(dir);
}
END_TEST

/* The built-in driver's load: section: defaults, values, overrides, and refusals where they
 * are written. */
START_TEST(load_section)
{
	struct pv_playbook *pb;
	const char *text = BASE "load:\n"
				"  rate: 100\n"
				"  late: 0.5\n"
				"  overload: 2.5\n"
				"  interval: 5\n"
				"  seed: 42\n"
				"  scenarios:\n"
				"    browse: {weight: 75, limit: 0.75}\n"
				"    read_folder: {weight: 0}\n";
	const char *set_rate[] = {"load.rate=200", "load.scenarios.upload.limit=4", NULL};
	const char *zero[] = {"load.scenarios.browse.weight=0", NULL};

	/* absent: the defaults of docs/load.md */
	pb = ok(BASE, NULL);
	ck_assert(!pb->has_load);
	ck_assert_uint_eq(pb->load.rate, 331);
	ck_assert(pb->load.kind[PV_PLAYBOOK_WORKLOAD_BROWSE].weight == 150);
	ck_assert(pb->load.kind[PV_PLAYBOOK_WORKLOAD_READ_FOLDER].limit == 5);
	ck_assert(pb->load.late == 1 && pb->load.overload == 1);
	ck_assert_uint_eq(pb->load.interval, 1);
	ck_assert_uint_eq(pb->load.seed, 1);
	pv_playbook_free(pb);

	pb = ok(text, NULL);
	ck_assert(pb->has_load);
	ck_assert_uint_eq(pb->load.rate, 100);
	ck_assert(pb->load.late == 0.5 && pb->load.overload == 2.5);
	ck_assert_uint_eq(pb->load.interval, 5);
	ck_assert_uint_eq(pb->load.seed, 42);
	ck_assert(pb->load.kind[PV_PLAYBOOK_WORKLOAD_BROWSE].weight == 75);
	ck_assert(pb->load.kind[PV_PLAYBOOK_WORKLOAD_BROWSE].limit == 0.75);
	ck_assert(pb->load.kind[PV_PLAYBOOK_WORKLOAD_READ_FOLDER].weight == 0);
	ck_assert(pb->load.kind[PV_PLAYBOOK_WORKLOAD_READ_FOLDER].limit ==
		  5); /* a key left out: default */
	ck_assert(pb->load.kind[PV_PLAYBOOK_WORKLOAD_UPLOAD].weight == 15);
	pv_playbook_free(pb);

	/* --set, with or without the section in the file */
	pb = ok(text, set_rate);
	ck_assert_uint_eq(pb->load.rate, 200);
	ck_assert(pb->load.kind[PV_PLAYBOOK_WORKLOAD_UPLOAD].limit == 4);
	pv_playbook_free(pb);
	pb = ok(BASE, set_rate);
	ck_assert(pb->has_load);
	ck_assert_uint_eq(pb->load.rate, 200);
	pv_playbook_free(pb);

	bad(BASE "load:\n  scenarios:\n    brwose: {weight: 1}\n",
	    "t.yaml:9:5: unknown key 'brwose' in 'load.scenarios' (did you mean 'browse'?); "
	    "expected one of: upload, browse, open_read,",
	    "read_folder");
	bad(BASE "load:\n  scenarios:\n    browse: {weight: 1, limt: 2}\n",
	    "t.yaml:9:25: unknown key 'limt' in 'load.scenarios.browse' (did you mean 'limit'?)",
	    NULL);
	bad(BASE "load:\n  scenarios:\n    browse: 3\n",
	    "t.yaml:9:13: 'load.scenarios.browse' is a string; expected a mapping {weight: N, "
	    "limit: SECONDS}",
	    NULL);
	bad(BASE "load: {rat: 3}\n",
	    "t.yaml:7:8: unknown key 'rat' in 'load' (did you mean 'rate'?)", NULL);
	bad(BASE "load: {rate: 0}\n",
	    "t.yaml:7:14: 'load.rate' is 0, out of range; expected an integer from 1 to 36000000",
	    NULL);
	bad(BASE "load: {rate: 36000001}\n", "t.yaml:7:14: 'load.rate' is 36000001, out of range",
	    NULL);
	bad(BASE "load: {late: -1}\n",
	    "t.yaml:7:14: 'load.late' is '-1', not a number; expected a number from 0 to 3600",
	    NULL);
	bad(BASE "load: {late: 1e3}\n", "t.yaml:7:14: 'load.late' is '1e3', not a number", NULL);
	bad(BASE "load: {late: 1.2.3}\n", "t.yaml:7:14: 'load.late' is '1.2.3', not a number",
	    NULL);
	bad(BASE "load: {late: .}\n", "t.yaml:7:14: 'load.late' is '.', not a number", NULL);
	bad(BASE "load: {overload: 100.5}\n",
	    "t.yaml:7:18: 'load.overload' is 100.5, out of range; expected a number from 0 to 100",
	    NULL);
	bad(BASE "load: {interval: 0}\n", "t.yaml:7:18: 'load.interval' is 0, out of range", NULL);
	bad(BASE "load: {seed: -1}\n", "t.yaml:7:14: 'load.seed' is -1, out of range", NULL);
	bad(BASE "load: {scenarios: {browse: {limit: 0}}}\n",
	    "t.yaml:7:36: 'load.scenarios.browse.limit' is 0, out of range; expected a number from "
	    "0.001 to 3600",
	    NULL);
	/* every weight 0: refused where the scenarios are */
	{
		struct pv_buf all = PV_BUF_INIT;

		pv_buf_addstr(&all, BASE "load:\n  scenarios:\n");
		for (int k = 0; k < PV_PLAYBOOK_WORKLOAD_KINDS; k++)
			pv_buf_addf(&all, "    %s: {weight: 0}\n", pv_playbook_workload_names[k]);
		bad(all.data,
		    "t.yaml:9:5: every scenario's weight in 'load.scenarios' is 0; expected at "
		    "least "
		    "one weight above 0",
		    NULL);
		pv_buf_release(&all, 0);
	}
	/* the settings of issue 19: users kept logged on, the driver's loops, the DC's SSH,
	 * --refine */
	{
		const char *more[] = {"load.keep_logged_on=true", "load.threads=3",
				      "driver.refine=5", NULL};

		pb = ok(BASE, NULL);
		ck_assert(!pb->load.keep_logged_on && pb->load.threads == 0);
		ck_assert(!pb->domain.has_host && pb->driver.refine == 0);
		pv_playbook_free(pb);
		pb = ok(BASE, more);
		ck_assert(pb->load.keep_logged_on && pb->load.threads == 3);
		ck_assert_uint_eq(pb->driver.refine, 5);
		pv_playbook_free(pb);
		/* domain.ssh: the DC as a host, by its name (or dc_address), the top ssh: under
		 * its own */
		pb = ok("ssh: {user: ops, timeout: 7}\n" BASE "  ssh: {port: 2222}\n", NULL);
		ck_assert(pb->domain.has_host);
		ck_assert_str_eq(pb->domain.host.name, "dc.lab.test");
		ck_assert_ptr_null(pb->domain.host.address);
		ck_assert(pb->domain.host.ssh.port == 2222 && pb->domain.host.ssh.timeout == 7);
		ck_assert_str_eq(pb->domain.host.ssh.user, "ops");
		pv_playbook_free(pb);
		pb = ok(BASE "  dc_address: 198.18.0.10\n  ssh: {}\n", NULL);
		ck_assert_str_eq(pb->domain.host.address, "198.18.0.10");
		pv_playbook_free(pb);
	}
	bad(BASE "  ssh: {prot: 22}\n", "t.yaml:7:9: unknown key 'prot' in 'domain.ssh'", NULL);
	/* a client's driver runs at most PV_PLAYBOOK_WORKLOAD_THREADS_MAX loops: more is refused,
	 * not cut */
	bad(BASE "load: {threads: 65}\n", "t.yaml:7:17: 'load.threads' is 65, out of range",
	    "expected an integer from 0 to 64");
	pb = ok(BASE "load: {threads: 64}\n", NULL);
	ck_assert_uint_eq(pb->load.threads, PV_PLAYBOOK_WORKLOAD_THREADS_MAX);
	pv_playbook_free(pb);
	bad(BASE "load: {keep_logged_on: 2}\n",
	    "t.yaml:7:24: 'load.keep_logged_on' is '2'; expected true or false", NULL);
	pb = ok(BASE, zero); /* the others still weigh */
	ck_assert(pb->load.kind[PV_PLAYBOOK_WORKLOAD_BROWSE].weight == 0);
	pv_playbook_free(pb);
	/* encryption: auto unless asked, on, or one cipher */
	pb = ok(BASE, NULL);
	ck_assert_int_eq(pb->load.encryption, PV_PLAYBOOK_WORKLOAD_ENCRYPT_AUTO);
	pv_playbook_free(pb);
	pb = ok(BASE "load: {encryption: on}\n", NULL);
	ck_assert_int_eq(pb->load.encryption, PV_PLAYBOOK_WORKLOAD_ENCRYPT_ON);
	pv_playbook_free(pb);
	{
		const char *aes[] = {"load.encryption=aes-256-gcm", NULL};

		pb = ok(BASE, aes);
		ck_assert_int_eq(pb->load.encryption, PV_PLAYBOOK_WORKLOAD_ENCRYPT_AES256_GCM);
		ck_assert_str_eq(pv_playbook_workload_encryptions[pb->load.encryption],
				 "aes-256-gcm");
		pv_playbook_free(pb);
	}
	bad(BASE "load: {encryption: yes}\n",
	    "t.yaml:7:20: 'load.encryption' is 'yes'; expected one of: auto, on, aes-128-ccm, "
	    "aes-128-gcm, aes-256-ccm, aes-256-gcm",
	    NULL);
}
END_TEST

/* server.smb_encrypt: Samba's words for a share's "smb encrypt", or nothing. */
START_TEST(server_smb_encrypt)
{
	struct pv_playbook *pb = ok(BASE "server: {name: srv, address: 198.18.0.20}\n", NULL);

	ck_assert_ptr_null(pb->server.smb_encrypt);
	pv_playbook_free(pb);
	pb = ok(BASE "server: {name: srv, address: 198.18.0.20, smb_encrypt: required}\n", NULL);
	ck_assert_str_eq(pb->server.smb_encrypt, "required");
	pv_playbook_free(pb);
	bad(BASE "server: {name: srv, address: 198.18.0.20, smb_encrypt: mandatory}\n",
	    "t.yaml:7:56: 'server.smb_encrypt' is 'mandatory'; expected one of: off, "
	    "if_required, desired, required",
	    NULL);
}
END_TEST

START_TEST(missing_key)
{
	bad("lab: x\n", "t.yaml:1:1: missing required key 'domain' at top level", NULL);
	bad("domain:\n  netbios: LAB\n", "t.yaml:2:3: missing required key 'realm' in 'domain'",
	    "expected realm: ");
	bad("domain: {realm: A, netbios: B, dc: c, admin_password: {env: X}}\n",
	    "t.yaml:1:9: missing required key 'ca_file' in 'domain'", "unless transport is gssapi");
	bad("domain: {realm: A, netbios: B, dc: c, ca_file: x}\n",
	    "t.yaml:1:9: missing required key 'admin_password' in 'domain'", NULL);
	bad(BASE "server:\n  name: srv\n", "t.yaml:8:3: missing required key 'address' in 'server'",
	    NULL);
	bad(BASE "clients:\n  - address: 1.2.3.4\n",
	    "t.yaml:8:5: missing required key 'name' in 'clients.0'", NULL);
	bad(BASE "controller: {host: {name: c}}\n",
	    "t.yaml:7:13: missing required key 'results' in 'controller'", NULL);
	bad(BASE "drain:\n  probe: command\n",
	    "t.yaml:8:3: missing required key 'command' in 'drain'", NULL);
	bad(BASE "drain:\n  metric: q\n", "t.yaml:8:3: 'drain' names no probe", NULL);
}
END_TEST

START_TEST(bad_numbers)
{
	bad(BASE "ssh:\n  port: abc\n",
	    "t.yaml:8:9: 'ssh.port' is 'abc', not an integer; expected an integer from 1 to 65535",
	    NULL);
	bad(BASE "ssh:\n  port: 65536\n",
	    "t.yaml:8:9: 'ssh.port' is 65536, out of range; expected an integer from 1 to 65535",
	    NULL);
	bad(BASE "ssh: {port: 0x16}\n", "t.yaml:7:13: 'ssh.port' is '0x16', not an integer", NULL);
	bad(BASE "ssh: {timeout: 3601}\n", "t.yaml:7:16: 'ssh.timeout' is 3601, out of range",
	    NULL);
	bad(BASE "users: {per_client: 0}\n", "t.yaml:7:21: 'users.per_client' is 0, out of range",
	    "1 to 100000000");
	bad(BASE "users: {per_client: 99999999999999999999}\n",
	    "t.yaml:7:21: 'users.per_client' is 99999999999999999999, out of range", NULL);
	bad(BASE "server: {name: s, address: 1.2.3.4, shares: 65}\n",
	    "t.yaml:7:45: 'server.shares' is 65, out of range", NULL);
	bad(BASE "driver: {timeout: -1}\n", "t.yaml:7:19: 'driver.timeout' is -1, out of range",
	    NULL);
	bad(BASE "drain: {command: q, interval: 0}\n",
	    "t.yaml:7:31: 'drain.interval' is 0, out of range", NULL);
	bad(BASE "ssh: {accept_new: maybe}\n",
	    "t.yaml:7:19: 'ssh.accept_new' is 'maybe'; expected true or false", NULL);
}
END_TEST

START_TEST(bad_enums)
{
	bad(BASE "  transport: ldap\n",
	    "t.yaml:7:14: 'domain.transport' is 'ldap' (did you mean 'ldaps'?); expected one of: "
	    "ldaps, starttls, gssapi",
	    NULL);
	bad(BASE "clients: [{name: a, address: 1.2.3.4, os: macos}]\n",
	    "t.yaml:7:43: 'clients.0.os' is 'macos'; expected one of: linux, windows", NULL);
}
END_TEST

START_TEST(bad_addresses_and_names)
{
	bad(BASE "  dc_address: 198.18.0.300\n",
	    "t.yaml:7:15: 'domain.dc_address' is '198.18.0.300', not an IP address", NULL);
	bad(BASE "server: {name: srv, address: srv.lab.test}\n",
	    "t.yaml:7:30: 'server.address' is 'srv.lab.test', not an IP address", NULL);
	bad(BASE "clients: [{name: 'cli 1', address: 1.2.3.4}]\n",
	    "t.yaml:7:18: 'clients.0.name' value 'cli 1' contains a character", NULL);
	bad("domain:\n  realm: LAB.TEST\n  netbios: LAB\n  dc: -dc.lab.test\n  ca_file: x\n"
	    "  admin_password: {env: PW}\n",
	    "t.yaml:4:7: 'domain.dc' value '-dc.lab.test' has a label starting with '-'", NULL);
}
END_TEST

START_TEST(bad_domain_values)
{
#define DOMAIN(realm, netbios)                                                                     \
	"domain:\n  realm: " realm "\n  netbios: " netbios "\n  dc: dc.lab.test\n  ca_file: x\n"   \
	"  admin_password: {env: PW}\n"

	bad(DOMAIN("LAB..TEST", "LAB"),
	    "t.yaml:2:10: 'domain.realm' value 'LAB..TEST' has an "
	    "empty label",
	    NULL);
	bad(DOMAIN("LAB_TEST", "LAB"), "t.yaml:2:10: 'domain.realm' value 'LAB_TEST' contains",
	    NULL);
	bad(DOMAIN(".LAB", "LAB"), "t.yaml:2:10: 'domain.realm' value '.LAB' has an empty label",
	    NULL);
	bad(DOMAIN("LAB.TEST", "ABCDEFGHIJKLMNOP"),
	    "t.yaml:3:12: NetBIOS domain name 'ABCDEFGHIJKLMNOP' is 16 characters", NULL);
	bad(DOMAIN("LAB.TEST", "LAB.X"), "t.yaml:3:12: NetBIOS domain name 'LAB.X' contains '.'",
	    NULL);
#undef DOMAIN
	bad(BASE "  base_dn: lab.test\n", "t.yaml:7:12: 'domain.base_dn' is 'lab.test', not a DN",
	    NULL);
	bad(BASE "users: {ou: 'OU=x,'}\n", "t.yaml:7:13: 'users.ou' ends with ','", NULL);
	bad(BASE "server: {name: s, address: 1.2.3.4, share_path: srv}\n",
	    "t.yaml:7:49: 'server.share_path' is 'srv', a relative path", NULL);
	bad(BASE "server: {name: s, address: 1.2.3.4, service: 'systemctl restart smbd'}\n",
	    "t.yaml:7:46: 'server.service' has no {action}", NULL);
}
END_TEST

START_TEST(bad_templates)
{
	bad(BASE "users: {name_template: 'u{client}'}\n",
	    "t.yaml:7:24: 'users.name_template': template 'u{client}' has no {n}", NULL);
	bad(BASE "users: {name_template: '{client}-{x}{n}'}\n",
	    "t.yaml:7:24: 'users.name_template': unknown placeholder '{x}'", NULL);
	bad(BASE "users: {name_template: '{client}-{k}{n}'}\n",
	    "t.yaml:7:24: 'users.name_template': placeholder {k} cannot be used", NULL);
	bad(BASE "server: {name: s, address: 1.2.3.4, share_template: share}\n",
	    "t.yaml:7:53: 'server.share_template': template 'share' has no {k}", NULL);
	bad(BASE "server: {name: s, address: 1.2.3.4, alias_template: '{server}'}\n",
	    "t.yaml:7:53: 'server.alias_template': template '{server}' has no {n}", NULL);
	bad(BASE "users: {name_template: 'u{n}'}\n"
		 "clients:\n"
		 "  - {name: a, address: 1.2.3.4}\n"
		 "  - {name: b, address: 1.2.3.5}\n",
	    "t.yaml:7:24: 'users.name_template' is 'u{n}', which has no {client} but there are 2 "
	    "clients",
	    NULL);
}
END_TEST

/* Values that fill the command driver's placeholders reach a shell: the names and folders
 * they come from hold only letters, digits, '.', '_', '-' (and '/' in folders), whatever AD
 * or Samba would accept; an unknown placeholder in a command is refused here, with its place,
 * not when the run reaches it. */
START_TEST(shell_safe_values)
{
	bad(BASE "users: {name_template: '{client}$(id){n}'}\n"
		 "clients: [{name: c, address: 1.2.3.4}]\n",
	    "t.yaml:7:24: 'users.name_template': user name is 'c$(id)1', which contains '$'; it "
	    "reaches a "
	    "shell on the hosts",
	    NULL);
	bad(BASE "users: {name_template: 'u`id`{n}'}\n"
		 "clients: [{name: c, address: 1.2.3.4}]\n",
	    "t.yaml:7:24: ", "user name is 'u`id`1', which contains '`'");
	bad(BASE "users: {name_template: 'u&{n}'}\nclients: [{name: c, address: 1.2.3.4}]\n",
	    "t.yaml:7:24: ", "contains '&'");
	bad(BASE "server: {name: s, address: 1.2.3.4, share_template: 'a b{k}'}\n",
	    "t.yaml:7:53: 'server.share_template': share name is 'a b1', which contains ' '; it "
	    "reaches a "
	    "shell",
	    NULL);
	bad(BASE "server: {name: s, address: 1.2.3.4, share_template: \"a'{k}\"}\n",
	    "t.yaml:7:53: ", "share name is 'a'1', which contains '''");
	bad(BASE "server: {name: s, address: 1.2.3.4, share_path: '/srv/$(touch x)'}\n",
	    "t.yaml:7:49: 'server.share_path' is '/srv/$(touch x)', which contains '$'", NULL);
	bad(BASE "controller: {results: '/r/`id`', host: {name: c}}\n",
	    "t.yaml:7:23: 'controller.results' is '/r/`id`', which contains '`'", NULL);
	bad(BASE "controller: {results: 'my results'}\n",
	    "t.yaml:7:23: 'controller.results' is 'my results', which contains ' '", NULL);
	bad(BASE "controller: {results: \"~/it's\"}\n", "t.yaml:7:23: ", "contains '''");
	bad(BASE "server: {name: s, address: 1.2.3.4, share_path: \"/srv/\\xc3\\xa9\"}\n",
	    "t.yaml:7:49: 'server.share_path' holds the byte 0xc3", NULL);
	bad(BASE "driver: {client_command: 'echo {nope} {users}'}\n",
	    "t.yaml:7:26: 'driver.client_command' uses '{nope}' (character 6 of the command), "
	    "which "
	    "is not a placeholder; expected one of {client} {users}",
	    NULL);
	bad(BASE "driver:\n  controller_command: |\n    a ${X} { b; }\n    c {users} {userz}\n",
	    "t.yaml:8:23: 'driver.controller_command' uses '{userz}' (line 2, character 11 of the "
	    "command)",
	    NULL);
	pv_playbook_free(
		ok(BASE "driver: {client_command: 'a ${X} { b; } {N} {users} \\\\{n}'}\n", NULL));
}
END_TEST

START_TEST(one_client_needs_no_client_placeholder)
{
	struct pv_playbook *pb = ok(BASE "users: {name_template: 'load{n}'}\n"
					 "clients: [{name: a, address: 1.2.3.4}]\n",
				    NULL);

	ck_assert_str_eq(pb->users.name_template, "load{n}");
	pv_playbook_free(pb);
}
END_TEST

START_TEST(bad_clients)
{
	bad(BASE "clients:\n"
		 "  - name: cli1\n"
		 "    address: 1.2.3.4\n"
		 "  - name: cli1\n"
		 "    address: 1.2.3.5\n",
	    "t.yaml:10:11: duplicate client name 'cli1' (first at line 8)", NULL);
	bad(BASE "clients: []\n", "t.yaml:7:10: 'clients' is an empty sequence", NULL);
}
END_TEST

START_TEST(bad_lab_id)
{
	bad("lab: my.lab\n" BASE, "t.yaml:1:6: 'lab' is 'my.lab', which contains '.'",
	    "expected 1 to 32 letters");
	bad("lab: abcdefghijklmnopqrstuvwxyz0123456\n" BASE,
	    "t.yaml:1:6: 'lab' is 33 characters long", NULL);
	struct pv_playbook *pb = ok("lab: abcdefghijklmnopqrstuvwxyz-_12\n" BASE, NULL);
	ck_assert_str_eq(pb->users.ou, "OU=abcdefghijklmnopqrstuvwxyz-_12,DC=lab,DC=test");
	pv_playbook_free(pb);
}
END_TEST

START_TEST(secrets)
{
	bad("domain:\n  realm: LAB.TEST\n  netbios: LAB\n  dc: dc.lab.test\n  ca_file: x\n"
	    "  admin_password: hunter2\n",
	    "t.yaml:6:19: plain string for 'domain.admin_password': secrets are not allowed in a "
	    "playbook; use {file: PATH}, {env: NAME}, {stdin: true} or {prompt: true}",
	    NULL);
	ck_assert_ptr_null(strstr(pv_errmsg(), "hunter2"));
	bad(BASE "users: {password: {file: a, env: B}}\n",
	    "t.yaml:7:19: 'users.password' names more than one source", "exactly one of");
	bad(BASE "users: {password: {}}\n", "t.yaml:7:19: 'users.password' is empty", NULL);
	bad(BASE "users: {password: {stdin: false}}\n",
	    "t.yaml:7:27: 'users.password.stdin' is not true", "expected true");
	bad(BASE "users: {password: {env: 1PW}}\n",
	    "t.yaml:7:25: 'users.password.env' is not a variable name", "letters, digits");
	ck_assert_ptr_null(strstr(pv_errmsg(), "1PW"));
	bad(BASE "users: {password: {value: x}}\n",
	    "t.yaml:7:20: unknown key in 'users.password'; expected one of: file, env", NULL);
	ck_assert_ptr_null(strstr(pv_errmsg(), "value"));
	bad(BASE "users: {password: {flie: x}}\n",
	    "t.yaml:7:20: unknown key in 'users.password' (did you mean 'file'?)", NULL);
	bad(BASE "users: {password: [x]}\n",
	    "t.yaml:7:19: 'users.password' is a sequence; expected a secret reference", NULL);
}
END_TEST

/* A password written where a reference's value goes is never repeated in the message: the
 * place and the rule are enough to find it. */
START_TEST(secrets_not_echoed)
{
	static const char *const pw = "Sup3r-Secret!";
	const char *env_ovr[] = {"users.password.env=Sup3r-Secret!", NULL};

	bad(BASE "users: {password: {env: \"Sup3r-Secret!\"}}\n",
	    "t.yaml:7:25: 'users.password.env' is not a variable name", NULL);
	ck_assert_msg(!strstr(pv_errmsg(), pw), "'%s' echoes the secret", pv_errmsg());
	bad(BASE "  admin: x\n"
		 "users: {password: {env: 'my pass word'}}\n",
	    "t.yaml:8:25: 'users.password.env' is not a variable name", NULL);
	ck_assert_ptr_null(strstr(pv_errmsg(), "pass word"));
	bad("domain:\n  realm: LAB.TEST\n  netbios: LAB\n  dc: dc.lab.test\n  ca_file: x\n"
	    "  admin_password: {env: Sup3r-Secret!}\n",
	    "t.yaml:6:25: 'domain.admin_password.env' is not a variable name", NULL);
	ck_assert_msg(!strstr(pv_errmsg(), pw), "'%s' echoes the secret", pv_errmsg());
	/* {stdin: <password>}, {prompt: <password>} */
	bad(BASE "users: {password: {stdin: Sup3r-Secret!}}\n",
	    "t.yaml:7:27: 'users.password.stdin' is not true", NULL);
	ck_assert_msg(!strstr(pv_errmsg(), pw), "'%s' echoes the secret", pv_errmsg());
	bad(BASE "users: {password: {prompt: Sup3r-Secret!}}\n",
	    "t.yaml:7:28: 'users.password.prompt' is not true", NULL);
	ck_assert_msg(!strstr(pv_errmsg(), pw), "'%s' echoes the secret", pv_errmsg());
	/* {<password>}: a mapping whose only key is the password */
	bad(BASE "users: {password: {Sup3r-Secret!}}\n", "t.yaml:7:20: unknown key in", NULL);
	ck_assert_msg(!strstr(pv_errmsg(), pw), "'%s' echoes the secret", pv_errmsg());
	/* the same from the command line */
	bad_ovr(BASE, env_ovr,
		"command line: option 'users.password.env=<hidden>': ", "is not a variable name");
	ck_assert_msg(!strstr(pv_errmsg(), pw), "'%s' echoes the secret", pv_errmsg());
}
END_TEST

/* Where each reference was given, for the messages of reading it (provision/secrets.c). */
START_TEST(secret_places)
{
	const char *ovr[] = {"users.password.env=USERS_PW", NULL};
	struct pv_playbook *pb = ok(full, NULL);

	ck_assert_str_eq(pb->domain.admin_password.where, "t.yaml:20:25");
	ck_assert_str_eq(pb->users.password.where, "t.yaml:25:21");
	pv_playbook_free(pb);
	pb = ok(BASE, ovr);
	ck_assert_str_eq(pb->domain.admin_password.where, "t.yaml:6:26");
	ck_assert_str_eq(pb->users.password.where,
			 "command line: option 'users.password.env=<hidden>'");
	pv_playbook_free(pb);
}
END_TEST

/* Share names are Samba's and folders under share_path: checked for every k. */
START_TEST(bad_share_names)
{
#define SRV(tmpl)                                                                                  \
	BASE "server: {name: srv, address: 1.2.3.4, shares: 12, share_template: " tmpl "}\n"
	bad(SRV("'../../etc/x{k}'"),
	    "t.yaml:7:67: 'server.share_template': share name '../../etc/x1' contains '/', a path "
	    "separator",
	    NULL);
	bad(SRV("'a\\b{k}'"),
	    "t.yaml:7:67: 'server.share_template': share name 'a\\b1' contains '\\'", NULL);
	bad(SRV("'-x{k}'"),
	    "t.yaml:7:67: 'server.share_template': share name '-x1' starts with '-'", NULL);
	bad(SRV("'-{k}'"), "t.yaml:7:67: ", "starts with '-'");
	bad(SRV("\"x\\ny{k}\""),
	    "t.yaml:7:67: 'server.share_template': share name contains the control character 0x0a",
	    NULL);
	bad(SRV("\"x\\ty{k}\""), "t.yaml:7:67: ", "control character 0x09");
	bad(SRV("'a%{k}'"), "t.yaml:7:67: ", "share name 'a%1' contains '%'");
	bad(SRV("'a:{k}'"), "t.yaml:7:67: ", "contains ':'");
	bad(SRV("'[x]{k}'"), "t.yaml:7:67: ", "contains '['");
	bad(SRV("'x{k} '"), "t.yaml:7:67: ", "ends with a space");
	/* 80 characters with k = 1..9, 81 with k = 12: the longest is checked */
	bad(SRV("'abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyz0{"
		"k}'"),
	    "t.yaml:7:67: ", "is 81 characters; share names allow at most 80");
	/* {server} is expanded too */
	struct pv_playbook *pb = ok(SRV("'{server}-data{k}'"), NULL);
	ck_assert_str_eq(pb->server.share_template, "{server}-data{k}");
	pv_playbook_free(pb);
#undef SRV
}
END_TEST

START_TEST(bad_share_paths)
{
#define SP(path) BASE "server: {name: s, address: 1.2.3.4, share_path: " path "}\n"
	bad(SP("/srv//provision"),
	    "t.yaml:7:49: 'server.share_path' is '/srv//provision', which has an empty component "
	    "('//'); expected an absolute, normalized path on the server",
	    NULL);
	bad(SP("/srv/provision/"),
	    "t.yaml:7:49: 'server.share_path' is '/srv/provision/', which "
	    "ends with '/'",
	    NULL);
	bad(SP("/srv/../etc"),
	    "t.yaml:7:49: 'server.share_path' is '/srv/../etc', which has a "
	    "'..' component",
	    NULL);
	bad(SP("/srv/./x"),
	    "t.yaml:7:49: 'server.share_path' is '/srv/./x', which has a '.' "
	    "component",
	    NULL);
	bad(SP("/srv/.."), "t.yaml:7:49: ", "which has a '..' component");
	bad(SP("\"/srv/a\\nb\""),
	    "t.yaml:7:49: 'server.share_path' contains the control character 0x0a", NULL);
	bad(SP("/"), "t.yaml:7:49: 'server.share_path' is '/', the root folder", NULL);
	bad(SP("-srv"), "t.yaml:7:49: 'server.share_path' is '-srv', a relative path", NULL);
	struct pv_playbook *pb = ok(SP("/srv/prov.d/..x/a..b"), NULL);
	ck_assert_str_eq(pb->server.share_path, "/srv/prov.d/..x/a..b");
	pv_playbook_free(pb);
#undef SP
}
END_TEST

START_TEST(bad_results_paths)
{
#define LOCAL(path)  BASE "controller: {results: " path "}\n"
#define REMOTE(path) BASE "controller: {results: " path ", host: {name: ctl}}\n"
	bad(REMOTE("-rf"), "t.yaml:7:23: 'controller.results' is '-rf', a relative path", NULL);
	bad(REMOTE("/var//r"),
	    "t.yaml:7:23: 'controller.results' is '/var//r', which has an empty "
	    "component",
	    NULL);
	bad(REMOTE("/var/r/"), "t.yaml:7:23: ", "which ends with '/'");
	bad(REMOTE("/var/../r"), "t.yaml:7:23: ", "which has a '..' component");
	bad(REMOTE("/"), "t.yaml:7:23: 'controller.results' is '/', the root folder", NULL);
	bad(REMOTE("\"/var/r\\n\""), "t.yaml:7:23: ", "control character 0x0a");
	/* a local one may be relative (to the playbook's folder) but is normalized too */
	bad(LOCAL("../results"),
	    "t.yaml:7:23: 'controller.results' is '../results', which has a '..' component; "
	    "expected a normalized path",
	    NULL);
	bad(LOCAL("./results"), "t.yaml:7:23: ", "which has a '.' component");
	bad(LOCAL("a//b"), "t.yaml:7:23: ", "empty component");
	bad(LOCAL("~/r/../x"), "t.yaml:7:23: ", "'..' component");
	bad(LOCAL("/"), "t.yaml:7:23: 'controller.results' is '/', the root folder", NULL);
	bad(LOCAL("\"r\\tx\""), "t.yaml:7:23: ", "control character 0x09");
	struct pv_playbook *pb = ok(LOCAL("/var/lib/fsct/results"), NULL);
	ck_assert_str_eq(pb->controller.results, "/var/lib/fsct/results");
	pv_playbook_free(pb);
#undef LOCAL
#undef REMOTE
}
END_TEST

/* Names that reach kinit, net, getent or the file tools on the hosts never start with '-'. */
START_TEST(bad_ad_names)
{
	bad(BASE "  admin: -Administrator\n",
	    "t.yaml:7:10: 'domain.admin' is '-Administrator', which starts with '-'", NULL);
	bad(BASE "  admin: --help\n", "t.yaml:7:10: ", "starts with '-'");
	bad(BASE "  admin: admin%pw\n",
	    "t.yaml:7:10: 'domain.admin' is 'admin%pw', which contains '%'", NULL);
	bad(BASE "  admin: \"ad\\nmin\"\n",
	    "t.yaml:7:10: 'domain.admin' contains the control character 0x0a", NULL);
	bad(BASE "users: {name_template: '-{client}{n}'}\n"
		 "clients: [{name: c1, address: 1.2.3.4}]\n",
	    "t.yaml:7:24: user name '-c11' starts with '-'", NULL);
	bad(BASE "users: {ou: 'OU=-lab,DC=lab,DC=test'}\n",
	    "t.yaml:7:13: 'users.ou' is 'OU=-lab,DC=lab,DC=test', in which '-lab' starts with '-'",
	    NULL);
	bad(BASE "users: {ou: \"OU=l\\nab,DC=lab,DC=test\"}\n",
	    "t.yaml:7:13: 'users.ou' contains the control character 0x0a", NULL);
	/* the lab id names the default OU */
	bad("lab: -rf\n" BASE, "t.yaml:1:6: 'lab' is '-rf', which starts with '-'", NULL);
	struct pv_playbook *pb = ok("lab: _x-1\n" BASE "  admin: admin@LAB.TEST\n", NULL);
	ck_assert_str_eq(pb->domain.admin, "admin@LAB.TEST");
	pv_playbook_free(pb);
}
END_TEST

START_TEST(name_overflow)
{
	bad(BASE "users: {per_client: 200}\n"
		 "clients:\n"
		 "  - {name: cli1, address: 1.2.3.4}\n"
		 "  - name: verylongclientname\n"
		 "    address: 1.2.3.5\n",
	    "t.yaml:10:11: user name 'verylongclientname-u200' is 23 characters; sAMAccountName "
	    "allows at most 20: shorten the client name or name_template",
	    NULL);
	/* the template is named when it was given */
	bad(BASE "users: {per_client: 1000, name_template: '{client}-loaduser{n}'}\n"
		 "clients: [{name: client12, address: 1.2.3.4}]\n",
	    "t.yaml:7:42: user name 'client12-loaduser1000' is 21 characters", NULL);
	bad(BASE "users: {per_client: 100}\n"
		 "server: {name: fileserver01, address: 1.2.3.4}\n",
	    "t.yaml:8:16: alias 'fileserver01u100' is 16 characters; NetBIOS names allow at most "
	    "15: shorten the server name or alias_template",
	    NULL);
	bad(BASE "server: {name: srv.lab.test, address: 1.2.3.4}\n",
	    "t.yaml:7:16: alias 'srv.lab.testu1' contains '.'", NULL);
	/* exactly at the limits */
	struct pv_playbook *pb = ok(BASE "users: {per_client: 100}\n"
					 "server: {name: fileserver1, address: 1.2.3.4}\n"
					 "clients: [{name: abcdefghijklmn, address: 1.2.3.4}]\n",
				    NULL);
	pv_playbook_free(pb);
}
END_TEST

/* ---- overrides ---------------------------------------------------------------------------- */

START_TEST(overrides_valid)
{
	const char *ovr[] = {"users.per_client=20",
			     "domain.ca_file=/x.pem",
			     "clients.1.address=1.2.3.4",
			     "clients.2.name=c3",
			     "clients.2.address=1.2.3.5",
			     "server.ssh.port=2222",
			     "domain.admin_password.env=ADMIN_PW",
			     "drain.command=depth",
			     "lab=other",
			     NULL};
	struct pv_playbook *pb = ok(BASE "server: {name: srv, address: 1.1.1.1}\n"
					 "clients:\n"
					 "  - {name: c1, address: 1.1.1.2}\n"
					 "  - {name: c2, address: 1.1.1.3}\n",
				    ovr);

	ck_assert_uint_eq(pb->users.per_client, 20);
	ck_assert_str_eq(pb->domain.ca_file, "/x.pem");
	ck_assert_str_eq(pb->clients[0].address, "1.1.1.2");
	ck_assert_str_eq(pb->clients[1].address, "1.2.3.4");
	ck_assert_uint_eq(pb->nclients, 3);
	ck_assert_str_eq(pb->clients[2].name, "c3");
	ck_assert_str_eq(pb->clients[2].address, "1.2.3.5");
	ck_assert_int_eq(pb->clients[2].line, 0);
	ck_assert_int_eq(pb->server.host.ssh.port, 2222);
	/* switching a secret's source replaces the whole reference */
	ck_assert_int_eq(pb->domain.admin_password.source, PV_PLAYBOOK_SECRET_ENV);
	ck_assert_str_eq(pb->domain.admin_password.value, "ADMIN_PW");
	ck_assert(pb->has_drain);
	ck_assert_str_eq(pb->drain.command, "depth");
	ck_assert_str_eq(pb->lab, "other");
	ck_assert_str_eq(pb->users.ou, "OU=other,DC=lab,DC=test");
	pv_playbook_free(pb);
}
END_TEST

START_TEST(overrides_later_wins)
{
	const char *ovr[] = {"ssh.port=1", "ssh.port=2", NULL};
	struct pv_playbook *pb = ok(BASE "ssh:\n"
					 "server: {name: s, address: 1.1.1.1}\n",
				    ovr);

	ck_assert_int_eq(pb->server.host.ssh.port, 2);
	pv_playbook_free(pb);
}
END_TEST

START_TEST(overrides_invalid)
{
	const char *unknown[] = {"users.per_clinet=3", NULL};
	const char *badint[] = {"users.per_client=x", NULL};
	const char *noeq[] = {"users.per_client", NULL};
	const char *nokey[] = {"=3", NULL};
	const char *range[] = {"clients.5.name=x", NULL};
	const char *notidx[] = {"clients.first.name=x", NULL};
	const char *through[] = {"lab.x=1", NULL};
	const char *empty[] = {"domain..realm=X", NULL};
	const char *secret[] = {"domain.admin_password=hunter2", NULL};
	const char *second[] = {"ssh.port=22", "ssh.prot=22", NULL};
	const char *clients = BASE "clients: [{name: a, address: 1.2.3.4}]\n";

	bad_ovr(BASE, unknown,
		"command line: option 'users.per_clinet=3': unknown key 'per_clinet' in 'users' "
		"(did you mean 'per_client'?); expected one of: per_client,",
		NULL);
	bad_ovr(BASE, badint,
		"command line: option 'users.per_client=x': 'users.per_client' is 'x', not an "
		"integer",
		NULL);
	bad_ovr(BASE, noeq, "command line: option 'users.per_client': no '='",
		"expected KEY.PATH=VALUE");
	bad_ovr(BASE, nokey, "command line: option '=3': no key", NULL);
	bad_ovr(clients, range,
		"command line: option 'clients.5.name=x': index 5 in 'clients.5.name' is out of "
		"range; expected a number from 0 to 1",
		NULL);
	bad_ovr(clients, notidx,
		"command line: option 'clients.first.name=x': 'first' in 'clients.first.name' is "
		"not a list index",
		NULL);
	bad_ovr("lab: a\n" BASE, through,
		"command line: option 'lab.x=1': 'lab' is a value, not a section", NULL);
	bad_ovr(BASE, empty, "command line: option 'domain..realm=X': empty key", NULL);
	bad_ovr(BASE, secret,
		"command line: option 'domain.admin_password=<hidden>': plain string for "
		"'domain.admin_password': secrets are not allowed",
		NULL);
	ck_assert_ptr_null(strstr(pv_errmsg(), "hunter2"));
	bad_ovr(BASE, second, "command line: option 'ssh.prot=22': unknown key 'prot' in 'ssh'",
		NULL);
}
END_TEST

/* File errors come before override errors: the file is checked as written first. */
START_TEST(overrides_after_file_errors)
{
	const char *ovr[] = {"nope=1", NULL};

	bad_ovr(BASE "colour: red\n", ovr, "t.yaml:7:1: unknown key 'colour'", NULL);
}
END_TEST

/* ---- Ansible inventories (playbooks/inventory.h) ----------------------------------------- */

/* The same lab as INI and as YAML: ranges, a port after the name, children, group variables
 * (the deeper group's over its parents', 'all' below every group) and a host's own values over
 * every group's. */
static const char inv_ini[] =
	"# load clients\n"							  /* 1 */
	"[clients]\n"								  /* 2 */
	"cli[01:03] ansible_user=root\n"					  /* 3 */
	"cli9:2200 ansible_host=198.18.0.39 'ansible_ssh_private_key_file=k y'\n" /* 4 */
	"\n"									  /* 5 */
	"[clients:vars]\n"							  /* 6 */
	"ansible_user = admin\n"						  /* 7 */
	"ansible_ssh_private_key_file=\"keys/id\"\n"				  /* 8 */
	"[fast]\n"								  /* 9 */
	"cli02\n"								  /* 10 */
	"[fast:vars]\n"								  /* 11 */
	"ansible_port=2222\n"							  /* 12 */
	"[clients:children]\n"							  /* 13 */
	"fast\n"								  /* 14 */
	"[all:vars]\n"								  /* 15 */
	"ansible_port=22\n"							  /* 16 */
	"ansible_python_interpreter={{ ansible_playbook_python }}\n"		  /* 17 */
	"[other]\n"								  /* 18 */
	"x1 ansible_host=\"{{ lookup('env', 'X') }}\"\n";			  /* 19 */

static const char inv_yaml[] =
	"all:\n"
	"  vars:\n"
	"    ansible_port: 22\n"
	"    ansible_python_interpreter: '{{ ansible_playbook_python }}'\n"
	"  children:\n"
	"    clients:\n"
	"      hosts:\n"
	"        cli[01:03]: {ansible_user: root}\n"
	"        cli9:2200:\n"
	"          ansible_host: 198.18.0.39\n"
	"          ansible_ssh_private_key_file: k y\n"
	"      vars: {ansible_user: admin, ansible_ssh_private_key_file: keys/id}\n"
	"      children:\n"
	"        fast:\n"
	"          hosts: {cli02: }\n"
	"          vars: {ansible_port: 2222}\n"
	"    other:\n"
	"      hosts:\n"
	"        x1: {ansible_host: \"{{ lookup('env', 'X') }}\"}\n";

static void same_lab(const struct pv_playbook_inventory *inv)
{
	static const struct {
		const char *name, *address, *user, *identity;
		int port;
	} want[] = {
		{"cli01", NULL, "root", "keys/id", 22},
		{"cli02", NULL, "root", "keys/id", 2222},
		{"cli03", NULL, "root", "keys/id", 22},
		{"cli9", "198.18.0.39", "admin", "k y", 2200},
	};

	ck_assert_uint_eq(inv->n, 4);
	for (size_t i = 0; i < 4; i++) {
		const struct pv_playbook_inventory_host *h = &inv->hosts[i];

		ck_assert_str_eq(h->name, want[i].name);
		if (want[i].address)
			ck_assert_str_eq(h->address, want[i].address);
		else
			ck_assert_ptr_null(h->address);
		ck_assert_str_eq(h->user, want[i].user);
		ck_assert_str_eq(h->identity, want[i].identity);
		ck_assert_int_eq(h->port, want[i].port);
	}
}

START_TEST(inventory_both_formats)
{
	struct pv_playbook_inventory *inv = NULL;

	ck_assert_msg(
		!pv_playbook_inventory_parse("inv.ini", inv_ini, strlen(inv_ini), "clients", &inv),
		"%s", pv_errmsg());
	ck_assert_str_eq(inv->format, "INI");
	same_lab(inv);
	ck_assert_int_eq(inv->hosts[0].line, 3);
	pv_playbook_inventory_free(inv);
	ck_assert_msg(!pv_playbook_inventory_parse("inv.yml", inv_yaml, strlen(inv_yaml), "clients",
						   &inv),
		      "%s", pv_errmsg());
	ck_assert_str_eq(inv->format, "YAML");
	same_lab(inv);
	pv_playbook_inventory_free(inv);
	/* a child group alone; an alphabetic range with a step */
	ck_assert(!pv_playbook_inventory_parse("inv.ini", inv_ini, strlen(inv_ini), "fast", &inv));
	ck_assert_uint_eq(inv->n, 1);
	ck_assert_str_eq(inv->hosts[0].name, "cli02");
	pv_playbook_inventory_free(inv);
	ck_assert(!pv_playbook_inventory_parse("i", "w[a:e:2]\n", 9, NULL, &inv));
	ck_assert_uint_eq(inv->n, 3);
	ck_assert_str_eq(inv->hosts[2].name, "we");
	pv_playbook_inventory_free(inv);
	pv_playbook_inventory_free(NULL);
}
END_TEST

static void inv_bad(const char *name, const char *text, const char *group, const char *want1,
		    const char *want2)
{
	struct pv_playbook_inventory *inv = NULL;
	int r = pv_playbook_inventory_parse(name, text, strlen(text), group, &inv);

	ck_assert_msg(r == PV_ECONFIG, "expected a config error (%s), got %d: %s", want1, r,
		      pv_errmsg());
	ck_assert_ptr_null(inv);
	ck_assert_msg(!strncmp(pv_errmsg(), want1, strlen(want1)),
		      "message '%s' does not start with '%s'", pv_errmsg(), want1);
	if (want2)
		ck_assert_msg(strstr(pv_errmsg(), want2), "message '%s' lacks '%s'", pv_errmsg(),
			      want2);
}

START_TEST(inventory_refusals)
{
	/* Jinja where it would be used; elsewhere (x1 is in no group asked for) it is left */
	inv_bad("inv.ini", inv_ini, "other", "inv.ini:19: host 'x1': a value uses Jinja",
		"does not template");
	inv_bad("inv.yml", inv_yaml, "other", "inv.yml:19:9: host 'x1': a value uses Jinja", NULL);
	inv_bad("i.ini", "[a]\nweb{{n}}\n", NULL, "i.ini:2: host name 'web{{n}}' uses Jinja", NULL);
	/* dynamic inventories */
	inv_bad("i", "#!/usr/bin/env python3\nprint('{}')\n", NULL, "i:1: starts with '#!'",
		"ansible-inventory -i FILE --list -y");
	inv_bad("aws.yml", "plugin: amazon.aws.aws_ec2\nregions: [eu-west-1]\n", NULL,
		"aws.yml:1:9: names an inventory plugin ('amazon.aws.aws_ec2')", "dynamic");
	/* what provision cannot do, and malformed files */
	inv_bad("i", "[a]\nh1 ansible_connection=winrm\n", NULL,
		"i:2: host 'h1': ansible_connection is 'winrm'", "over SSH only");
	inv_bad("i", "h1 ansible_port=http\n", NULL, "i:1: host 'h1': ansible_port is 'http'",
		NULL);
	inv_bad("i", "h1:99999\n", NULL, "i:1: 'h1:99999' has a port that is not a number", NULL);
	inv_bad("i", "h1 junk\n", NULL, "i:1: 'junk' after the host name is not KEY=VALUE", NULL);
	inv_bad("i", "h1 'open\n", NULL, "i:1: a quote (') is not closed", NULL);
	inv_bad("i", "[a:hosts]\n", NULL, "i:1: section '[a:hosts]' is not one of", NULL);
	inv_bad("i", "[a\n", NULL, "i:1: a section header has no ']'", NULL);
	inv_bad("i", "[a:vars]\njust words\n", NULL, "i:2: 'just words' in a [GROUP:vars]", NULL);
	inv_bad("i", "h[3:1]\n", NULL, "i:1: 'h[3:1]': the range begins after it ends", NULL);
	inv_bad("i", "h[01:100]\n", NULL, "i:1: 'h[01:100]': a zero-padded range", NULL);
	inv_bad("i", "h[1:99999999]\n", NULL, "i:1: 'h[1:99999999]' gives 99999999 hosts", NULL);
	inv_bad("i", "[a:children]\nb\n[b:children]\na\n", "a", "i:", "a child of itself");
	inv_bad("i", "[a:children]\nall\n", NULL, "i:2: 'all' cannot be a child group", NULL);
	inv_bad("i.yml", "all:\n  hostz: {h1: }\n", NULL, "i.yml:2:3: unknown key 'hostz'",
		"in group 'all' (did you mean 'hosts'?); expected one of: hosts, vars, children");
	inv_bad("i.yml", "all:\n  hosts: [h1]\n", NULL,
		"i.yml:2:10: 'hosts' is a sequence; expected HOST: {VARIABLES}", NULL);
	inv_bad("i.yml", "all:\n  children: web\n", NULL,
		"i.yml:2:13: 'children' is a string; expected GROUP:", NULL);
	inv_bad("i.yml", "- h1\n", NULL, "i.yml:1:1: the inventory is not a mapping", NULL);
	inv_bad("i.yml", "all: {hosts: {h1: {ansible_host: [a, b]}}}\n", NULL,
		"i.yml:1:34: 'ansible_host' has no plain value", NULL);
	inv_bad("i.yml", "all: {hosts: {h1: }}\n&x a: 1\n", NULL, "i.yml:", NULL);
	/* the group: named with the groups there are; and one without hosts */
	inv_bad("inv.ini", inv_ini, "client", "inv.ini: no group 'client' in the inventory",
		"its groups: all, ungrouped, clients, fast, other");
	inv_bad("i", "[a]\n[b]\nh1\n", "a", "i: group 'a' has no hosts", NULL);
	inv_bad("i", "", NULL, "i: group 'all' has no hosts", NULL);
}
END_TEST

/* What only a file can be: an executable (a dynamic inventory script) or a folder. */
START_TEST(inventory_files)
{
	char dir[] = "/tmp/check_inventory.XXXXXX", file[96];
	struct pv_playbook_inventory *inv = NULL;
	FILE *f;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(file, sizeof(file), "%s/hosts", dir);
	ck_assert_ptr_nonnull(f = fopen(file, "w"));
	fputs("cli1 ansible_host=198.18.0.31\n", f);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_msg(!pv_playbook_inventory_read(file, NULL, &inv), "%s", pv_errmsg());
	ck_assert_str_eq(inv->hosts[0].address, "198.18.0.31");
	pv_playbook_inventory_free(inv);
	inv = NULL;
	ck_assert_int_eq(chmod(file, 0755), 0);
	ck_assert_int_eq(pv_playbook_inventory_read(file, NULL, &inv), PV_ECONFIG);
	ck_assert_ptr_nonnull(strstr(pv_errmsg(), "is executable"));
	ck_assert_int_eq(pv_playbook_inventory_read(dir, NULL, &inv), PV_ECONFIG);
	ck_assert_ptr_nonnull(strstr(pv_errmsg(), "is a folder"));
	ck_assert_int_eq(pv_playbook_inventory_read("/nonexistent/inv", NULL, &inv), PV_EIO);
	ck_assert_ptr_null(inv);
	unlink(file);
	rmdir(dir);
}
END_TEST

/* clients: {inventory, group, hosts}: the playbook's ssh defaults, then the inventory's
 * values, then the playbook's per-host settings; the inventory and its keys' paths follow
 * their files' folders. */
START_TEST(playbook_inventory)
{
	char dir[] = "/tmp/check_inventory.XXXXXX", file[96], inv[96], *want;
	struct pv_playbook *pb = NULL;
	FILE *f;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(inv, sizeof(inv), "%s/inv.ini", dir);
	ck_assert_ptr_nonnull(f = fopen(inv, "w"));
	fputs(inv_ini, f);
	ck_assert_int_eq(fclose(f), 0);
	snprintf(file, sizeof(file), "%s/pb.yaml", dir);
	ck_assert_ptr_nonnull(f = fopen(file, "w"));
	fputs(BASE "ssh: {user: ops, timeout: 30}\n"
		   "clients:\n"
		   "  inventory: inv.ini\n"
		   "  group: clients\n"
		   "  hosts:\n"
		   "    cli03: {os: windows, ssh: {user: Administrator}}\n"
		   "    cli9: {address: 198.18.0.49}\n",
	      f);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_msg(!pv_playbook_read(file, NULL, &pb), "%s", pv_errmsg());
	ck_assert_uint_eq(pb->nclients, 4);
	ck_assert_str_eq(pb->inventory, inv);
	ck_assert_str_eq(pb->inventory_group, "clients");
	ck_assert_str_eq(pb->clients[0].name, "cli01");
	ck_assert_ptr_null(pb->clients[0].address);
	ck_assert_str_eq(pb->clients[0].ssh.user, "root");
	ck_assert_int_eq(pb->clients[0].ssh.timeout, 30); /* the playbook's, kept */
	ck_assert_int_eq(pb->clients[1].ssh.port, 2222);
	ck_assert_int_eq(asprintf(&want, "%s/keys/id", dir), (int)strlen(dir) + 8);
	ck_assert_str_eq(pb->clients[0].ssh.identity, want);
	free(want);
	ck_assert_str_eq(pb->clients[2].ssh.user, "Administrator"); /* the playbook wins */
	ck_assert_int_eq(pb->clients[2].os, PV_PLAYBOOK_OS_WINDOWS);
	ck_assert_str_eq(pb->clients[3].address, "198.18.0.49");
	ck_assert_int_eq(pb->clients[3].ssh.port, 2200);
	pv_playbook_free(pb);
	pb = NULL;
	/* --set reaches the per-host settings too */
	{
		const char *ovr[] = {"clients.hosts.cli01.ssh.port=2201", "clients.group=fast",
				     NULL};

		ck_assert_int_eq(pv_playbook_read(file, ovr, &pb), PV_ECONFIG);
		ck_assert_msg(strstr(pv_errmsg(), "'clients.hosts' names 'cli03', which is not a "
						  "host of group 'fast'"),
			      "%s", pv_errmsg());
	}
	ck_assert_ptr_null(pb);
	unlink(file);
	unlink(inv);
	rmdir(dir);
}
END_TEST

START_TEST(playbook_inventory_errors)
{
	char *path = cwd_path("tests/unit/no-such-inventory.ini");
	char text[512];

	/* the inventory's own message, after where the playbook names it */
	bad(BASE "clients: {inventory: /nonexistent/x.ini}\n", "t.yaml:7:22: cannot open inventory",
	    NULL);
	bad(BASE "clients: {group: g}\n",
	    "t.yaml:7:10: missing required key 'inventory' in 'clients'", NULL);
	bad(BASE "clients: {inventory: x, grup: g}\n",
	    "t.yaml:7:25: unknown key 'grup' in 'clients'", "did you mean 'group'?");
	bad(BASE "clients: red\n", "t.yaml:7:10: 'clients' is a string", "{inventory: FILE");
	snprintf(text, sizeof(text), BASE "clients: {inventory: %s}\n", path);
	bad(text, "t.yaml:7:22: cannot open inventory", path);
	free(path);
}
END_TEST

START_TEST(scale_settings)
{
	struct pv_playbook *pb = ok(BASE, NULL);

	ck_assert_int_eq(pb->fanout, 16);
	ck_assert_uint_eq(pb->domain.nother_dcs, 0);
	ck_assert_int_eq(pb->domain.replication_timeout, 600);
	pv_playbook_free(pb);
	pb = ok("fanout: 32\n" BASE "  other_dcs:\n"
		"    - {name: dc2.lab.test, address: 198.18.0.11}\n"
		"    - {name: dc3.lab.test}\n"
		"  replication_timeout: 0\n"
		"server: {name: srv, address: 198.18.0.20, alias_spns: no}\n",
		NULL);
	ck_assert_int_eq(pb->fanout, 32);
	ck_assert_uint_eq(pb->domain.nother_dcs, 2);
	ck_assert_str_eq(pb->domain.other_dcs[0].address, "198.18.0.11");
	ck_assert_ptr_null(pb->domain.other_dcs[1].address);
	ck_assert_int_eq(pb->domain.replication_timeout, 0);
	ck_assert(!pb->server.alias_spns);
	pv_playbook_free(pb);
	bad("fanout: 0\n" BASE, "t.yaml:1:9: 'fanout' is 0, out of range", "1 to 256");
	bad(BASE "  other_dcs: [{name: dc.lab.test}]\n", "t.yaml:7:22: 'dc.lab.test' is domain.dc",
	    NULL);
	bad(BASE "  other_dcs: [{name: a.lab.test}, {name: A.lab.test}]\n",
	    "t.yaml:7:42:", "named twice");
	bad(BASE "  other_dcs: []\n", "t.yaml:7:14: 'domain.other_dcs' is empty", NULL);
	bad(BASE "  other_dcs: [{address: 1.2.3.4}]\n", "t.yaml:7:15: missing required key 'name'",
	    NULL);
}
END_TEST

static Suite *playbooks_suite(void)
{
	Suite *s = suite_create("playbooks");
	TCase *tc = tcase_create("playbooks");

	tcase_add_test(tc, full_playbook);
	tcase_add_test(tc, defaults);
	tcase_add_test(tc, gssapi_needs_no_ca);
	tcase_add_test(tc, lab_yaml);
	tcase_add_test(tc, lab_yaml_load_example);
	tcase_add_test(tc, load_errors);
	tcase_add_test(tc, path_resolution);
	tcase_add_test(tc, remote_results_kept);
	tcase_add_test(tc, syntax_error);
	tcase_add_test(tc, empty_document);
	tcase_add_test(tc, multiple_documents);
	tcase_add_test(tc, anchors_and_aliases);
	tcase_add_test(tc, structure_errors);
	tcase_add_test(tc, unknown_key);
	tcase_add_test(tc, duplicate_key);
	tcase_add_test(tc, wrong_type);
	tcase_add_test(tc, missing_key);
	tcase_add_test(tc, driver_and_drain);
	tcase_add_test(tc, bad_numbers);
	tcase_add_test(tc, bad_enums);
	tcase_add_test(tc, bad_addresses_and_names);
	tcase_add_test(tc, bad_domain_values);
	tcase_add_test(tc, bad_templates);
	tcase_add_test(tc, one_client_needs_no_client_placeholder);
	tcase_add_test(tc, bad_clients);
	tcase_add_test(tc, bad_lab_id);
	tcase_add_test(tc, secrets);
	tcase_add_test(tc, secrets_not_echoed);
	tcase_add_test(tc, secret_places);
	tcase_add_test(tc, bad_share_names);
	tcase_add_test(tc, bad_share_paths);
	tcase_add_test(tc, bad_results_paths);
	tcase_add_test(tc, bad_ad_names);
	tcase_add_test(tc, name_overflow);
	tcase_add_test(tc, load_section);
	tcase_add_test(tc, load_workload);
	tcase_add_test(tc, server_smb_encrypt);
	tcase_add_test(tc, overrides_valid);
	tcase_add_test(tc, shell_safe_values);
	tcase_add_test(tc, overrides_later_wins);
	tcase_add_test(tc, overrides_invalid);
	tcase_add_test(tc, overrides_after_file_errors);
	tcase_add_test(tc, inventory_both_formats);
	tcase_add_test(tc, inventory_refusals);
	tcase_add_test(tc, inventory_files);
	tcase_add_test(tc, playbook_inventory);
	tcase_add_test(tc, playbook_inventory_errors);
	tcase_add_test(tc, scale_settings);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return pv_unit_run(playbooks_suite());
}
