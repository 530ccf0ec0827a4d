/* tests/fuzz/fuzz_smb2.c: libFuzzer target for our SMB2 client (smb/wire.c, smb/ntlm.c,
 * smb/listing.c). The input is the server's side of a whole conversation, its replies one
 * after another exactly as they go on the wire (NetBIOS header, SMB2 messages); a scripted
 * server on the other end of a socketpair(2) sends them while the client runs the plan of
 * tests/fuzz/smb2_plan.h: negotiate, NTLMv2 logon, tree connect, listing, a small build,
 * logoff. Whatever the bytes, the client must end with an error or success, never a crash,
 * a hang or a leak.
 *
 * The server writes the whole input at once and then closes its sending side: the client
 * reads the same bytes in the same order as it would if each reply came after its request
 * (it reads only when it waits for an answer), and it never waits on a timer, so a run is
 * deterministic and fast. What the client sends is read and dropped, so neither side can
 * block the other. The seeds (tests/fuzz/corpus/smb2) are what tests/unit/check_wire.c's
 * fake server sent for the same plan, valid and with faults; message ids line up.
 *
 * Built by `make fuzz` (clang -fsanitize=fuzzer,address,undefined against the project's
 * modules); by hand:
 *   clang-14 -g -O1 -fsanitize=fuzzer,address,undefined -I. -D_GNU_SOURCE \
 *     $(pkg-config --cflags smbclient) tests/fuzz/fuzz_smb2.c smb/wire.c smb/ntlm.c \
 *     smb/smb2.c smb/listing.c util/err.c util/buf.c util/utf16.c util/secret.c -lpthread
 *   ./a.out -max_len=131072 tests/fuzz/corpus/smb2 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tests/fuzz/smb2_plan.h"

/* A reply stream longer than this is not a conversation of the plan's size. */
#define INPUT_MAX (1u << 20)

struct server {
	int fd;
	const uint8_t *data;
	size_t len;
};

/* Send everything, then half-close; meanwhile, and after, read and drop what the client
 * sends, until it closes its end. */
static void *stream(void *arg)
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct server s = {-1, data, size};
	struct pv_smb_tree_result res;
	pthread_t th;
	int sv[2];

	if (size > INPUT_MAX || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
		return 0;
	s.fd = sv[1];
	if (pthread_create(&th, NULL, stream, &s) != 0) {
		close(sv[0]);
		close(sv[1]);
		return 0;
	}
	/* a long timeout: the stream ends with a close, so the client never waits for it */
	smb2_plan_run(sv[0], 60000, &res); /* owns sv[0] */
	pthread_join(th, NULL);
	close(sv[1]);
	return 0;
}
