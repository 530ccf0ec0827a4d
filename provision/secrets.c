/* provision/secrets.c: the credentials provider phases ask (phases/phase.h): a playbook secret
 * reference, or the command line's, turned into a secret on first use: a file, the environment,
 * the first line of stdin (once per run), or a no-echo prompt on the terminal. Each secret is
 * resolved once and kept (wiped at the end); a failure is kept too, so nobody is asked twice. */
#include "provision/provision.h"

#include "util/err.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

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
	dprintf(fd, "%s: ", what);
	tcsetattr(fd, TCSAFLUSH, &quiet);
	r = pv_secret_from_fd(fd, "the terminal", out);
	tcsetattr(fd, TCSAFLUSH, &old);
	dprintf(fd, "\n");
	close(fd);
	return r;
}

struct pv_creds {
	struct pv_ctx *ctx;
	pthread_mutex_t lock;
	bool stdin_taken;
	struct {
		bool asked;
		int code;
		char msg[1024];
		struct pv_secret *secret;
	} s[2];
};

static int resolve(struct pv_creds *c, const struct pv_secret_ref *ref, const char *what,
		   struct pv_secret **out)
{
	int r;

	switch (ref->source) {
	case PV_SECRET_FILE:
		r = pv_secret_from_file(ref->value, out);
		break;
	case PV_SECRET_ENV:
		r = pv_secret_from_env(ref->value, out);
		break;
	case PV_SECRET_STDIN:
		if (c->stdin_taken)
			return pv_error(PV_ECONFIG,
					"%s: stdin already gave another secret; only one "
					"secret can come from stdin",
					what);
		c->stdin_taken = true;
		r = pv_secret_from_fd(STDIN_FILENO, "stdin", out);
		break;
	case PV_SECRET_PROMPT:
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
	struct pv_secret_ref ref = c->ctx->pb->users.password;

	if (cli->opt[OPT_PASSWORD_FILE] && cli->opt[OPT_STDIN_PASSWORD])
		return pv_error(PV_EUSAGE, "give --password-file or --stdin-password, not both");
	if (cli->opt[OPT_PASSWORD_FILE]) {
		ref.source = PV_SECRET_FILE;
		ref.value = (char *)cli->opt[OPT_PASSWORD_FILE];
	} else if (cli->opt[OPT_STDIN_PASSWORD]) {
		ref.source = PV_SECRET_STDIN;
		ref.value = NULL;
	}
	if (ref.source == PV_SECRET_UNSET)
		return pv_error(PV_ECONFIG,
				"no password for the users: set users.password in the "
				"playbook (e.g. {file: PATH}), or pass --password-file or "
				"--stdin-password");
	return resolve(c, &ref, "users' password", out);
}

static int provide(void *arg, enum pv_cred which, const struct pv_secret **out)
{
	struct pv_creds *c = arg;
	int r;

	if (!c->ctx->pb)
		return pv_error(PV_EBUG, "a secret asked for without a playbook");
	pthread_mutex_lock(&c->lock);
	if (!c->s[which].asked) {
		c->s[which].asked = true;
		if (which == PV_CRED_ADMIN)
			r = resolve(c, &c->ctx->pb->domain.admin_password, "admin password",
				    &c->s[which].secret);
		else
			r = users_password(c, &c->s[which].secret);
		c->s[which].code = r;
		if (r != PV_OK)
			snprintf(c->s[which].msg, sizeof(c->s[which].msg), "%s", pv_errmsg());
	}
	r = c->s[which].code;
	if (r == PV_OK)
		*out = c->s[which].secret;
	else
		pv_error(r, "%s", c->s[which].msg);
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
	ctx->creds = c;
	ctx->env.cred = provide;
	ctx->env.cred_ctx = c;
	return PV_OK;
}

void pv_creds_free(struct pv_creds *c)
{
	if (!c)
		return;
	for (int i = 0; i < 2; i++)
		pv_secret_free(c->s[i].secret);
	pthread_mutex_destroy(&c->lock);
	free(c);
}
