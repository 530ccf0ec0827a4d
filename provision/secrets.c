/* provision/secrets.c: the credentials provider phases ask (phases/phase.h): a playbook secret
 * reference, or the command line's, turned into a secret on first use: a file, the environment,
 * the first line of stdin (once per run), or a no-echo prompt on the terminal. Each secret is
 * resolved once and kept (wiped at the end); a failure is kept too, so nobody is asked twice.
 *
 * {env: NAME} is the exception to "on first use": every variable the playbook names is taken
 * out of the environment when the provider is made, before any thread, SSH session or forked
 * worker exists, so that none of them inherits it.
 * Messages name where a reference was given (playbook file:line:column, or the option), never
 * its value: a variable name or a file path may be a password written in the wrong place. */
#include "provision/provision.h"

#include "util/err.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

int pv_creds_harden(void)
{
	const struct rlimit none = {0, 0};

	/* no core file: a core of a process holding a password holds the password */
	if (setrlimit(RLIMIT_CORE, &none) != 0)
		return pv_error(PV_EIO, "cannot turn off core files (setrlimit): %s",
				strerror(errno));
	/* not dumpable: no core whatever the limit says (a setuid helper, core_pattern), and
	 * no ptrace attach or /proc/PID/mem, environ, fd by other processes of the same user */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0)
		return pv_error(PV_EIO, "cannot make the process non-dumpable (prctl): %s",
				strerror(errno));
	return PV_OK;
}

static int prompt(const char *what, struct pv_secret **out)
{
	struct termios old, quiet;
	int fd, r;

	fd = open("/dev/tty", O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return pv_error(PV_ECONFIG,
				"%s: {prompt: true} needs a terminal; use {file: PATH} or "
				"{env: NAME} when running unattended",
				what);
	if (tcgetattr(fd, &old) != 0) {
		close(fd);
		return pv_error(PV_ECONFIG, "%s: cannot turn off echo on the terminal", what);
	}
	quiet = old;
	quiet.c_lflag &= ~(tcflag_t)ECHO;
	/* echo off before the prompt shows, as getpass does: nothing typed after it is echoed */
	if (tcsetattr(fd, TCSAFLUSH, &quiet) != 0) {
		close(fd);
		return pv_error(PV_ECONFIG, "%s: cannot turn off echo on the terminal", what);
	}
	dprintf(fd, "%s: ", what);
	r = pv_secret_from_fd(fd, "the terminal", out);
	tcsetattr(fd, TCSAFLUSH, &old);
	dprintf(fd, "\n");
	close(fd);
	return r;
}

/* What a secret's outcome is: the secret, or the code and message of its failure. */
struct outcome {
	int code;
	char msg[1024];
	struct pv_secret *secret;
};

struct pv_creds {
	struct pv_ctx *ctx;
	pthread_mutex_t lock;
	bool stdin_taken;
	struct {
		bool asked;
		struct outcome o;
	} s[2];
	struct {
		bool taken;
		struct outcome o;
	} env[2]; /* the {env: NAME} of each, taken at start */
};

/* "the <kind> given at <place in the playbook or --set>", or "given by <option>". */
static void source_name(const struct pv_playbook_secret_ref *ref, const char *kind,
			const char *option, char *buf, size_t sz)
{
	const char *w = ref->where ? ref->where : option ? option : "the command line";

	snprintf(buf, sz, "the %s given %s %s", kind, w[0] == '-' ? "by" : "at", w);
}

/* Take the variable of an {env: NAME} reference out of the environment now. other: the other
 * secret's reference, taken already, which may name the same variable. */
static void take_env(struct pv_creds *c, enum pv_env_cred which,
		     const struct pv_playbook_secret_ref *ref,
		     const struct pv_playbook_secret_ref *other)
{
	char src[600];

	if (ref->source != PV_PLAYBOOK_SECRET_ENV || !ref->value)
		return;
	source_name(ref, "environment variable", NULL, src, sizeof(src));
	c->env[which].taken = true;
	if (other && other->source == PV_PLAYBOOK_SECRET_ENV && other->value &&
	    !strcmp(other->value, ref->value)) {
		const struct outcome *o = &c->env[!which].o;

		c->env[which].o = *o;
		if (o->secret &&
		    !(c->env[which].o.secret = pv_secret_new(o->secret->data, o->secret->len)))
			c->env[which].o.code = pv_error(PV_EIO, "out of memory");
		if (c->env[which].o.code != PV_OK)
			snprintf(c->env[which].o.msg, sizeof(c->env[which].o.msg), "%s",
				 o->code != PV_OK ? o->msg : pv_errmsg());
		return;
	}
	c->env[which].o.code = pv_secret_from_env(ref->value, src, &c->env[which].o.secret);
	if (c->env[which].o.code != PV_OK)
		snprintf(c->env[which].o.msg, sizeof(c->env[which].o.msg), "%s", pv_errmsg());
}

static int resolve(struct pv_creds *c, enum pv_env_cred which,
		   const struct pv_playbook_secret_ref *ref, const char *option, const char *what,
		   struct pv_secret **out)
{
	char src[600];
	int r;

	switch (ref->source) {
	case PV_PLAYBOOK_SECRET_FILE:
		source_name(ref, "file", option, src, sizeof(src));
		r = pv_secret_from_file(ref->value, src, out);
		break;
	case PV_PLAYBOOK_SECRET_ENV:
		if (!c->env[which].taken)
			return pv_error(PV_EBUG,
					"%s: the environment variable was not taken at "
					"start",
					what);
		r = c->env[which].o.code;
		if (r == PV_OK) {
			*out = c->env[which].o.secret; /* handed over */
			c->env[which].o.secret = NULL;
		} else {
			pv_error(r, "%s", c->env[which].o.msg);
		}
		break;
	case PV_PLAYBOOK_SECRET_STDIN:
		if (c->stdin_taken)
			return pv_error(PV_ECONFIG,
					"%s: stdin already gave another secret; only one "
					"secret can come from stdin",
					what);
		c->stdin_taken = true;
		r = pv_secret_from_fd(STDIN_FILENO, "stdin", out);
		break;
	case PV_PLAYBOOK_SECRET_PROMPT:
		r = prompt(what, out);
		break;
	default:
		return pv_error(PV_ECONFIG,
				"%s is not set in the playbook; give a reference such as "
				"{file: PATH}",
				what);
	}
	if (r != PV_OK)
		return pv_error_prefix(r, "%s", what);
	return PV_OK;
}

/* The users' shared password: --password-file, --stdin-password, else users.password. */
static int users_password(struct pv_creds *c, struct pv_secret **out)
{
	const struct pv_cli *cli = &c->ctx->cli;
	struct pv_playbook_secret_ref ref = c->ctx->pb->users.password;
	const char *option = NULL;

	if (cli->opt[OPT_PASSWORD_FILE] && cli->opt[OPT_STDIN_PASSWORD])
		return pv_error(PV_EUSAGE, "give --password-file or --stdin-password, not both");
	if (cli->opt[OPT_PASSWORD_FILE]) {
		ref.source = PV_PLAYBOOK_SECRET_FILE;
		ref.value = (char *)cli->opt[OPT_PASSWORD_FILE];
		ref.where = NULL;
		option = "--password-file";
	} else if (cli->opt[OPT_STDIN_PASSWORD]) {
		ref.source = PV_PLAYBOOK_SECRET_STDIN;
		ref.value = NULL;
		ref.where = NULL;
	}
	if (ref.source == PV_PLAYBOOK_SECRET_UNSET)
		return pv_error(PV_ECONFIG,
				"no password for the users: set users.password in the "
				"playbook (e.g. {file: PATH}), or pass --password-file or "
				"--stdin-password");
	return resolve(c, PV_ENV_CRED_USERS, &ref, option, "users' password", out);
}

static int provide(void *arg, enum pv_env_cred which, const struct pv_secret **out)
{
	struct pv_creds *c = arg;
	int r;

	if (!c->ctx->pb)
		return pv_error(PV_EBUG, "a secret asked for without a playbook");
	pthread_mutex_lock(&c->lock);
	if (!c->s[which].asked) {
		struct outcome *o = &c->s[which].o;

		c->s[which].asked = true;
		if (which == PV_ENV_CRED_ADMIN)
			r = resolve(c, which, &c->ctx->pb->domain.admin_password, NULL,
				    "admin password", &o->secret);
		else
			r = users_password(c, &o->secret);
		o->code = r;
		if (r != PV_OK)
			snprintf(o->msg, sizeof(o->msg), "%s", pv_errmsg());
	}
	r = c->s[which].o.code;
	if (r == PV_OK)
		*out = c->s[which].o.secret;
	else
		pv_error(r, "%s", c->s[which].o.msg);
	pthread_mutex_unlock(&c->lock);
	return r;
}

int pv_creds_init(struct pv_ctx *ctx)
{
	struct pv_creds *c = calloc(1, sizeof(*c));

	if (!c)
		return pv_error(PV_EIO, "out of memory");
	c->ctx = ctx;
	pthread_mutex_init(&c->lock, NULL);
	if (ctx->pb) {
		take_env(c, PV_ENV_CRED_ADMIN, &ctx->pb->domain.admin_password, NULL);
		take_env(c, PV_ENV_CRED_USERS, &ctx->pb->users.password,
			 &ctx->pb->domain.admin_password);
	}
	ctx->creds = c;
	ctx->env.cred = provide;
	ctx->env.cred_ctx = c;
	return PV_OK;
}

void pv_creds_free(struct pv_creds *c)
{
	if (!c)
		return;
	for (int i = 0; i < 2; i++) {
		pv_secret_free(c->s[i].o.secret);
		pv_secret_free(c->env[i].o.secret);
	}
	pthread_mutex_destroy(&c->lock);
	free(c);
}
