/* provision/secrets.c: turn a playbook secret reference into a secret: file, environment,
 * first line of stdin (once per run), or a no-echo prompt on the terminal. */
#include "provision/provision.h"

#include "util/err.h"

#include <fcntl.h>
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
		return pv_error(PV_ECONFIG, "%s: {prompt: true} needs a terminal; use {file: PATH} or "
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

int pv_resolve_secret(struct pv_ctx *ctx, const struct pv_secret_ref *ref, const char *what,
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
		if (ctx->stdin_taken)
			return pv_error(PV_ECONFIG, "%s: stdin already gave another secret; only one "
						    "secret can come from stdin",
					what);
		ctx->stdin_taken = true;
		r = pv_secret_from_fd(STDIN_FILENO, "stdin", out);
		break;
	case PV_SECRET_PROMPT:
		r = prompt(what, out);
		break;
	default:
		return pv_error(PV_ECONFIG, "%s is not set in the playbook; give a reference such as "
					    "{file: PATH}",
				what);
	}
	if (r != PV_OK)
		return pv_error_prefix(r, "%s", what);
	return PV_OK;
}
