/* fileset/fileset.h: a fileset description (YAML, docs/fileset.md) turned into a
 * deterministic tree plan: the folders and files of one user's home tree, each file's size
 * and the seed of its content, and the content itself as a function of (seed, offset).
 *
 * Pure logic: no I/O besides reading the description file in pv_fileset_read(). The YAML is
 * read through the playbook parser's node tree (playbooks/tree.h) and typed getters
 * (playbooks/schema.h), so libyaml stays in playbooks/ and errors read as the playbook's.
 *
 * The plan is the same for every user (names and sizes depend on the fileset's seed only);
 * with content 'unique' the bytes also depend on the user's name, with 'shared' they do not.
 * Errors are recorded with pv_error(): PV_EIO (file unreadable), PV_ECONFIG (invalid, or a plan
 * of more than PV_FILESET_ENTRIES entries: refused before any of it is built). */
#ifndef PV_FILESET_FILESET_H
#define PV_FILESET_FILESET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PV_FILESET_LEVELS   8		 /* folder levels under a part at most */
#define PV_FILESET_ENTRIES  1000000	 /* folders + files per user at most */
#define PV_FILESET_FILE_MAX (1ULL << 32) /* bytes per file at most (4 GiB) */
#define PV_FILESET_FANOUT   1000	 /* folders at a level under each of the level above */

/* FSCT's three kinds of data: read by the load (static), created by it in folders made
 * beforehand (new), and rewritten, renamed and deleted by it (volatile). */
enum pv_fileset_part {
	PV_FILESET_PART_STATIC,
	PV_FILESET_PART_NEW,
	PV_FILESET_PART_VOLATILE,
	PV_FILESET_PART_COUNT
};
enum pv_fileset_content { PV_FILESET_CONTENT_SHARED, PV_FILESET_CONTENT_UNIQUE };

struct pv_fileset_entry {
	char *path; /* relative to the user's folder, '/'-separated, e.g. "static/d01/f0003.doc" */
	bool dir;
	uint64_t size; /* files: bytes */
	uint64_t seed; /* files: content seed before the user is mixed in (see pv_fileset_seed) */
	enum pv_fileset_part part;
};

struct pv_fileset {
	char *name;
	uint64_t seed;
	enum pv_fileset_content content;
	/* the plan, in build order: a folder always before what it holds */
	struct pv_fileset_entry *entries;
	size_t n;
	size_t nfiles, ndirs; /* ndirs counts the part folders, not the user's own folder */
	uint64_t bytes;	      /* total file bytes per user */
	uint64_t max_size;    /* largest file */
};

/* Parse a description (name is used in messages) and build its plan. *out is set on success;
 * free with pv_fileset_free(). */
int pv_fileset_parse(const char *name, const char *text, size_t len, struct pv_fileset **out);
/* Same from a file (at most 1 MiB). */
int pv_fileset_read(const char *path, struct pv_fileset **out);
void pv_fileset_free(struct pv_fileset *fs);

/* The content seed of entry e for user (NULL or ignored with content 'shared'). */
uint64_t pv_fileset_seed(const struct pv_fileset *fs, const struct pv_fileset_entry *e,
			 const char *user);
/* Fill buf with len bytes of the content with this seed, from offset: the same bytes
 * whatever the chunking, so a file can be written in any pieces. */
void pv_fileset_fill(uint64_t seed, uint64_t offset, void *buf, size_t len);

/* Parse a size: "512", "10KiB", "1.5 MiB", "2GiB", "4KB" (decimal), "0". 0 or -1. */
int pv_fileset_size(const char *text, uint64_t *out);

#endif
