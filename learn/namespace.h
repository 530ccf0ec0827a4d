/* learn/namespace.h: the namespace a capture reveals (provision learn): the folders and files
 * its CREATE answers opened (a folder or not, its size, made by the capture or there before)
 * and its QUERY_DIRECTORY answers listed, under the share each tree connected to, and each
 * user's home: the deepest folder holding every file the user opened. What a home holds, over
 * the homes, becomes the shape of one: folders per level, files per folder of the last level,
 * the files' sizes, and the files written in place; learn/workload.c writes it as a fileset
 * that `prepare` builds (docs/fileset.md).
 *
 * No name is kept, not even in memory: a node is the hash of its parent's and of its name in
 * lower case. Memory is bounded: at most PV_LEARN_NS_MAX nodes (past it, names are counted in
 * `refused`, not followed). Pure logic. */
#ifndef PV_LEARN_NAMESPACE_H
#define PV_LEARN_NAMESPACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fileset/fileset.h"
#include "learn/hist.h"

#define PV_LEARN_NS_MAX	   (1u << 20)	     /* folders and files followed at most */
#define PV_LEARN_NS_DEPTH  64		     /* a path's levels followed at most */
#define PV_LEARN_NS_LEVELS PV_FILESET_LEVELS /* a home's levels in the shape, a fileset's */

struct pv_learn_ns_node {
	uint64_t key;
	uint64_t size;	   /* a file's EndOfFile, when sized */
	int32_t parent;	   /* -1 for a share */
	uint32_t listings; /* a folder: its opens listed (QUERY_DIRECTORY), each counted once */
	uint16_t depth;	   /* 0 for a share */
	uint8_t flags;	   /* PV_LEARN_NS_* */
};

enum {
	PV_LEARN_NS_DIR = 1,	 /* a folder (an answer said so, or it holds one that is) */
	PV_LEARN_NS_FILE = 2,	 /* a file an answer showed */
	PV_LEARN_NS_SIZED = 4,	 /* its size known */
	PV_LEARN_NS_MADE = 8,	 /* made by the capture's own CREATE: not there before it */
	PV_LEARN_NS_WRITTEN = 16 /* written, or its information set, through an open of it */
};

struct pv_learn_ns {
	struct pv_learn_ns_node *n;
	size_t count, cap;
	uint32_t *slot; /* the hash index: a node's place + 1, 0 for none */
	size_t slots;
	uint64_t refused; /* names past PV_LEARN_NS_MAX (or out of memory) */
};

void pv_learn_ns_init(struct pv_learn_ns *ns);
void pv_learn_ns_release(struct pv_learn_ns *ns);

/* The node of a share: by the last part of a TREE_CONNECT's path (UTF-8: "\\srv\fsroot1" is
 * "fsroot1" in any case), or, when the tree's connect was not captured, by tag (path NULL:
 * the connection and the tree id, hashed by the caller). -1 when out of room. */
long pv_learn_ns_share(struct pv_learn_ns *ns, const char *path, uint64_t tag);
/* The node of the path (UTF-8, parts split by '\' or '/') under node at: the folders on its
 * way added when new. The empty path is at itself. -1 when out of room. */
long pv_learn_ns_path(struct pv_learn_ns *ns, long at, const char *name);
/* What an answer showed of node i: a folder or a file of size bytes, made by the capture (a
 * CREATE's action FILE_CREATED); every folder above it is then one. */
void pv_learn_ns_seen(struct pv_learn_ns *ns, long i, bool dir, uint64_t size, bool made);
void pv_learn_ns_written(struct pv_learn_ns *ns, long i);
/* Node i (a folder) listed once more: an open of it whose first QUERY_DIRECTORY came. */
void pv_learn_ns_listed(struct pv_learn_ns *ns, long i);
/* How often each folder listed was listed: the median and the p95 over those folders into
 * out, their count into *folders (0: none listed, out left 0). */
void pv_learn_ns_listings(const struct pv_learn_ns *ns, double out[2], uint64_t *folders);
/* A user's home after it opened node i (a file): the deepest folder holding both home (-1:
 * none yet) and i's folder. */
long pv_learn_ns_home(const struct pv_learn_ns *ns, long home, long i);

/* Where node i is from home (a user's): its depth below it, 0 for the home itself, at most
 * PV_LEARN_NS_DEEP (that deep or deeper); PV_LEARN_NS_OUT when it is not in the home (above
 * it: a share's root; or beside it: another's); PV_LEARN_NS_UNKNOWN when either is not known
 * (-1). The depth of what a CREATE opens, a part of its kind's shape (learn/kind.h). */
#define PV_LEARN_NS_DEEP    7
#define PV_LEARN_NS_OUT	    (-1)
#define PV_LEARN_NS_UNKNOWN (-2)
int pv_learn_ns_depth(const struct pv_learn_ns *ns, long home, long i);

/* The shape of a home, over the homes given (each node's place; a home held by several users
 * counted once; what a home holds counted under the nearest home above it). */
struct pv_learn_ns_shape {
	size_t homes;
	uint64_t files, folders;	  /* seen in the homes, in all (made by the capture: not) */
	double files_median;		  /* a home's files, the median over the homes */
	unsigned levels;		  /* folder levels down to the files, the most files' */
	unsigned per[PV_LEARN_NS_LEVELS]; /* folders per level (each at least 1) */
	unsigned files_per;		  /* files in each folder of the last level */
	struct pv_learn_sizes sizes;	  /* the files' sizes, those known */
	unsigned written;		  /* files written in place a home, the median (up) */
	struct pv_learn_sizes written_sizes;
};
/* 0, or -1 out of memory. */
int pv_learn_ns_shape(const struct pv_learn_ns *ns, const long *homes, size_t nhomes,
		      struct pv_learn_ns_shape *out);

#endif
