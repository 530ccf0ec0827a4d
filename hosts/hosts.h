/* hosts/hosts.h: the hosts-file model. Finds this lab's managed block
 *     # BEGIN provision <lab>
 *     ...
 *     # END provision <lab>
 * renders a new one for Linux (LF) or Windows (CRLF, at most 9 names per line), merges it in or
 * takes it out, and keeps every byte outside it. Blocks of other labs are seen and left alone.
 *
 * Pure: no I/O. Failing functions record one message with pv_error() (no host or path in it:
 * the caller adds them with pv_error_prefix()) and return the code:
 *   PV_ECONFLICT  the file's markers are not a well-formed block of this lab (a BEGIN without
 *                 END, two blocks, another marker inside ours), or a name we would add is
 *                 already given another address outside our block
 *   PV_EIO        out of memory */
#ifndef PV_HOSTS_HOSTS_H
#define PV_HOSTS_HOSTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"
#include "util/strset.h"

/* Windows reads at most 9 host names on a line of its hosts file. */
#define PV_HOSTS_WINDOWS_NAMES 9
/* musl and busybox read hosts lines into 512-byte buffers and split longer ones; glibc has no
 * limit. Lines we write stay well under it. */
#define PV_HOSTS_LINE_MAX 255
/* A lab id is [A-Za-z0-9_-], 1..32 characters (the playbook enforces it). */
#define PV_HOSTS_LAB_MAX 32

enum pv_hosts_eol { PV_HOSTS_LF = 0, PV_HOSTS_CRLF };

/* How a block is written. */
struct pv_hosts_style {
	enum pv_hosts_eol eol;
	size_t max_names; /* names on one line, 0 = no limit */
	size_t max_width; /* bytes on one line, line break excluded, 0 = no limit */
};

/* Linux: LF, lines of at most PV_HOSTS_LINE_MAX bytes. Windows: CRLF, at most
 * PV_HOSTS_WINDOWS_NAMES names and PV_HOSTS_LINE_MAX bytes per line. */
void pv_hosts_style_for(bool windows, struct pv_hosts_style *st);

/* Where this lab's block is, as pv_hosts_parse() found it. */
struct pv_hosts_layout {
	bool found;	   /* this lab's block is present */
	size_t begin, end; /* its bytes [begin, end): BEGIN line to after END line's break */
	size_t begin_line, end_line;	  /* 1-based line numbers of the markers */
	bool added_break;		  /* the block says provision ended the line above it */
	size_t others;			  /* well-formed blocks of other labs (left alone) */
	char other[PV_HOSTS_LAB_MAX + 1]; /* the first other lab's id, "" when none */
	size_t lines;			  /* lines in the text */
};

/* Parse text (len bytes, need not be NUL-terminated) for the block of lab. On success *out is
 * filled; PV_ECONFLICT (recorded, with line numbers and what to do) for malformed markers. */
int pv_hosts_parse(const char *text, size_t len, const char *lab, struct pv_hosts_layout *out);

/* One address and the names that go with it; wrapped onto as many lines as the style needs. */
struct pv_hosts_group {
	const char *address;
	const char *const *names;
	size_t n;
};

/* Append a whole block for lab to out: the BEGIN marker, a comment saying who manages it, the
 * note when added_break, the groups' lines, the END marker; every line ends with st->eol. */
int pv_hosts_render(struct pv_buf *out, const char *lab, const struct pv_hosts_style *st,
		    const struct pv_hosts_group *g, size_t ng, bool added_break);

/* out = text with lab's block replaced by a new one from the groups (in place), or appended at
 * the end when there is none. When the text's last line has no line break, one (st->eol) is
 * added before the block and the block notes it, so pv_hosts_remove() gives the bytes back.
 * lay must come from pv_hosts_parse() of the same text and lab. */
int pv_hosts_merge(const char *text, size_t len, const struct pv_hosts_layout *lay, const char *lab,
		   const struct pv_hosts_style *st, const struct pv_hosts_group *g, size_t ng,
		   struct pv_buf *out);

/* out = text without lab's block (a copy when there is none); the line break the block notes it
 * added goes too, when the block is still at the end of the text. */
int pv_hosts_remove(const char *text, size_t len, const struct pv_hosts_layout *lay,
		    const struct pv_hosts_style *st, struct pv_buf *out);

/* Call fn for every (address, name) pair outside lab's block (comments skipped; other labs'
 * blocks included: they are names too). fn returns 0 to go on, else that code stops the walk
 * and is returned. Pointers are into text, not NUL-terminated. */
typedef int (*pv_hosts_entry_fn)(const char *addr, size_t alen, const char *name, size_t nlen,
				 size_t line, void *arg);
int pv_hosts_foreach(const char *text, size_t len, const struct pv_hosts_layout *lay,
		     pv_hosts_entry_fn fn, void *arg);

/* Fail PV_ECONFLICT when a name of names (case-insensitive) is given an address other than
 * address outside lab's block; the message names the line, the name, both addresses and the
 * other lab when the line is in one. The same address is fine (e.g. the server's own line). */
int pv_hosts_check_names(const char *text, size_t len, const struct pv_hosts_layout *lay,
			 const char *address, const struct pv_strset *names);

/* Two textual IP addresses are the same address (inet_pton on both; else a string compare). */
bool pv_hosts_same_address(const char *a, size_t alen, const char *b, size_t blen);

/* POSIX cksum (CRC-32, length included) of data, as `cksum <file` prints it: "CRC LEN".
 * Used to tell whether a remote file changed between read and write; not a secret or MAC. */
uint32_t pv_hosts_cksum(const void *data, size_t len);
void pv_hosts_cksum_str(const void *data, size_t len, char out[32]);

#endif
