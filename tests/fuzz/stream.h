/* tests/fuzz/stream.h: the scripted server of the SMB2 fuzz targets (fuzz_smb2.c,
 * fuzz_async.c): the fuzzer's input is the server's side of a whole conversation, its replies
 * one after another exactly as they go on the wire; a thread on the other end of a
 * socketpair(2) sends them all at once and closes its sending side, so the client reads the
 * same bytes in the same order as if each reply came after its request, and never waits on
 * a timer: a run is deterministic and fast. What the client sends is read and dropped, so
 * neither side can block the other. Header-only: a fuzz target is one .c file. */
#ifndef PV_TESTS_FUZZ_STREAM_H
#define PV_TESTS_FUZZ_STREAM_H

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <unistd.h>

struct server {
	int fd;
	const uint8_t *data;
	size_t len;
};

/* Send everything, then half-close; meanwhile, and after, read and drop what the client
 * sends, until it closes its end. */
static inline void *stream(void *arg)
{
	struct server *s = arg;
	size_t sent = 0;
	bool closed_w = s->len == 0;
	uint8_t junk[65536];

	if (closed_w)
		shutdown(s->fd, SHUT_WR);
	for (;;) {
		struct pollfd p = {s->fd, (short)(POLLIN | (closed_w ? 0 : POLLOUT)), 0};

		if (poll(&p, 1, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (p.revents & POLLIN) {
			ssize_t n = recv(s->fd, junk, sizeof(junk), MSG_DONTWAIT);

			if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
				break; /* the client closed: done */
		}
		if (!closed_w && (p.revents & POLLOUT)) {
			ssize_t n = send(s->fd, s->data + sent, s->len - sent,
					 MSG_DONTWAIT | MSG_NOSIGNAL);

			if (n > 0)
				sent += (size_t)n;
			else if (n < 0 && errno != EAGAIN && errno != EINTR)
				break;
			if (sent == s->len) {
				shutdown(s->fd, SHUT_WR);
				closed_w = true;
			}
		}
		if ((p.revents & (POLLHUP | POLLERR)) && !(p.revents & POLLIN))
			break;
	}
	return NULL;
}

/* Start the server thread for data (len bytes); the client's end of the socketpair, or -1. */
static inline int stream_start(struct server *s, const uint8_t *data, size_t len, pthread_t *th)
{
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
		return -1;
	*s = (struct server){sv[1], data, len};
	if (pthread_create(th, NULL, stream, s) != 0) {
		close(sv[0]);
		close(sv[1]);
		return -1;
	}
	return sv[0];
}

/* Once the client closed its end. */
static inline void stream_stop(struct server *s, pthread_t th)
{
	pthread_join(th, NULL);
	close(s->fd);
}

#endif
