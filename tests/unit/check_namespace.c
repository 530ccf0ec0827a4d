/* tests/unit/check_namespace.c: the namespace provision learn reads from a capture's answers
 * (learn/namespace.c: paths under shares told apart without case, a file's folders, what the
 * capture made, a user's home, the shape of a home over the homes) and the fields of the
 * SMB2 messages it is read from (smb/trace.c: a CREATE's name and its answer's action,
 * attributes and size; a listing's entries in each information class, cut or malformed). */
#include <check.h>

#include "tests/unit/unit.h"
#include <stdio.h>
#include <string.h>

#include "learn/namespace.h"
#include "smb/smb2.h"
#include "smb/trace.h"
#include "util/buf.h"

/* a name as SMB2 carries it: UTF-16LE */
static size_t u16(const char *s, uint8_t *out)
{
	size_t n = 0;

	for (; *s; s++) {
		out[n++] = (uint8_t)*s;
		out[n++] = 0;
	}
	return n;
}

static long path(struct pv_learn_ns *ns, long at, const char *p)
{
	return pv_learn_ns_path(ns, at, p);
}

static long share(struct pv_learn_ns *ns, const char *p)
{
	return pv_learn_ns_share(ns, p, 0);
}

START_TEST(paths)
{
	struct pv_learn_ns ns;
	long s, t, a, b;

	pv_learn_ns_init(&ns);
	s = share(&ns, "\\\\srv\\FSROOT1");
	ck_assert_int_ge(s, 0);
	ck_assert_int_eq(share(&ns, "fsroot1"), s); /* the share's name alone, in any case */
	t = pv_learn_ns_share(&ns, NULL, 42);	    /* a tree whose connect was not captured */
	ck_assert(t >= 0 && t != s);
	ck_assert_int_eq(pv_learn_ns_share(&ns, NULL, 42), t);
	a = path(&ns, s, "U1\\Static\\A.docx");
	ck_assert_int_ge(a, 0);
	ck_assert_int_eq(ns.n[a].depth, 3);
	ck_assert_int_eq(path(&ns, s, "u1/static/a.DOCX"), a);
	ck_assert_int_eq(path(&ns, s, "u1\\.\\static\\..\\static\\\\a.docx"), a);
	ck_assert_int_ne(path(&ns, t, "u1\\static\\a.docx"), a); /* another share */
	ck_assert_int_eq(path(&ns, s, ""), s);
	ck_assert_int_eq(path(&ns, s, ".."), s); /* not above the share */
	/* what an answer showed: a file, and every folder above it one */
	b = ns.n[a].parent;
	ck_assert_int_eq(ns.n[b].flags, 0);
	pv_learn_ns_seen(&ns, a, false, 1234, false);
	ck_assert(ns.n[a].flags == (PV_LEARN_NS_FILE | PV_LEARN_NS_SIZED) && ns.n[a].size == 1234);
	ck_assert(ns.n[b].flags == PV_LEARN_NS_DIR &&
		  ns.n[ns.n[b].parent].flags == PV_LEARN_NS_DIR);
	ck_assert_int_eq(ns.n[s].flags, PV_LEARN_NS_DIR);
	/* its size as first seen (the capture's own writes do not change the namespace), and a
	 * file seen before a CREATE said it made it was there before */
	pv_learn_ns_seen(&ns, a, false, 0, true);
	ck_assert(ns.n[a].size == 1234 && !(ns.n[a].flags & PV_LEARN_NS_MADE));
	b = path(&ns, s, "u1\\static\\~wrl0001.tmp");
	pv_learn_ns_seen(&ns, b, false, 0, true);
	ck_assert(ns.n[b].flags & PV_LEARN_NS_MADE);
	/* a home: the deepest folder holding the files opened */
	ck_assert_int_eq(pv_learn_ns_home(&ns, -1, a), ns.n[a].parent);
	b = path(&ns, s, "u1\\static\\d02\\x.txt");
	pv_learn_ns_seen(&ns, b, false, 1, false);
	ck_assert_int_eq(pv_learn_ns_home(&ns, ns.n[a].parent, b), ns.n[a].parent);
	b = path(&ns, s, "u1\\volatile\\y.txt");
	pv_learn_ns_seen(&ns, b, false, 1, false);
	ck_assert_int_eq(pv_learn_ns_home(&ns, ns.n[a].parent, b), path(&ns, s, "u1"));
	ck_assert_int_eq(pv_learn_ns_home(&ns, path(&ns, t, "u1"), b), -1); /* two shares */
	/* where a path is from a home: its depth below it, outside it, or not known */
	b = path(&ns, s, "u1");
	ck_assert_int_eq(pv_learn_ns_depth(&ns, b, b), 0);
	ck_assert_int_eq(pv_learn_ns_depth(&ns, b, path(&ns, s, "u1\\volatile")), 1);
	ck_assert_int_eq(pv_learn_ns_depth(&ns, b, a), 2);
	ck_assert_int_eq(pv_learn_ns_depth(&ns, b, path(&ns, s, "u1\\a\\b\\c\\d\\e\\f\\g\\h")),
			 PV_LEARN_NS_DEEP);
	ck_assert_int_eq(pv_learn_ns_depth(&ns, b, s), PV_LEARN_NS_OUT); /* above */
	ck_assert_int_eq(pv_learn_ns_depth(&ns, b, path(&ns, s, "u2\\x")),
			 PV_LEARN_NS_OUT); /* beside */
	ck_assert_int_eq(pv_learn_ns_depth(&ns, b, path(&ns, t, "u1\\x")), PV_LEARN_NS_OUT);
	ck_assert_int_eq(pv_learn_ns_depth(&ns, -1, a), PV_LEARN_NS_UNKNOWN);
	ck_assert_int_eq(pv_learn_ns_depth(&ns, b, -1), PV_LEARN_NS_UNKNOWN);
	ck_assert_int_eq(ns.refused, 0);
	pv_learn_ns_release(&ns);
}
END_TEST

START_TEST(shape)
{
	struct pv_learn_ns ns;
	struct pv_learn_ns_shape sh;
	long s, homes[3];
	char p[128];

	pv_learn_ns_init(&ns);
	s = share(&ns, "\\\\srv\\fsroot1");
	/* two users' homes: 3 folders of 4 files each; sizes 1000 and 5000 bytes; one file
	 * written in place; one made by the capture (not counted); a third user in the first's
	 * home (counted once) */
	for (int u = 0; u < 2; u++) {
		for (int d = 0; d < 3; d++)
			for (int f = 0; f < 4; f++) {
				long x;

				snprintf(p, sizeof(p), "u%d\\docs\\d%d\\f%d.docx", u, d, f);
				x = path(&ns, s, p);
				pv_learn_ns_seen(&ns, x, false, f % 2 ? 5000 : 1000, false);
				homes[u] = pv_learn_ns_home(&ns, f || d ? homes[u] : -1, x);
			}
		snprintf(p, sizeof(p), "u%d\\docs\\d0\\new.tmp", u);
		pv_learn_ns_seen(&ns, path(&ns, s, p), false, 0, true);
	}
	pv_learn_ns_written(&ns, path(&ns, s, "u0\\docs\\d1\\f1.docx"));
	homes[2] = homes[0];
	ck_assert_int_eq(homes[0], path(&ns, s, "u0\\docs"));
	ck_assert_int_eq(pv_learn_ns_shape(&ns, homes, 3, &sh), 0);
	ck_assert_uint_eq(sh.homes, 2);
	ck_assert_uint_eq(sh.files, 24);
	ck_assert_uint_eq(sh.folders, 6);
	ck_assert_uint_eq(sh.levels, 1);
	ck_assert_uint_eq(sh.per[0], 3);
	ck_assert_uint_eq(sh.files_per, 4);
	ck_assert(sh.files_median == 12);
	ck_assert_uint_eq(sh.sizes.n, 24);
	ck_assert_uint_eq(sh.sizes.b[10], 12); /* 1000: [512, 1024) */
	ck_assert_uint_eq(sh.sizes.b[13], 12); /* 5000: [4096, 8192) */
	ck_assert_uint_eq(sh.written, 1);      /* 1 and 0: the median 0.5, up */
	ck_assert_uint_eq(sh.written_sizes.b[13], 1);
	/* a home with files at two depths: the levels down to where most are; the files a folder
	 * never more than a home holds over its folders */
	for (int f = 0; f < 30; f++) {
		snprintf(p, sizeof(p), "u0\\docs\\top%d.txt", f);
		pv_learn_ns_seen(&ns, path(&ns, s, p), false, 10, false);
	}
	ck_assert_int_eq(pv_learn_ns_shape(&ns, homes, 1, &sh), 0);
	ck_assert_uint_eq(sh.levels, 0);
	ck_assert_uint_eq(sh.files_per, 42);
	/* no home: nothing */
	ck_assert_int_eq(pv_learn_ns_shape(&ns, homes, 0, &sh), 0);
	ck_assert_uint_eq(sh.files, 0);
	pv_learn_ns_release(&ns);
}
END_TEST

/* ---- smb/trace.c ---- */

/* a listing's entry of class 37 (FileIdBothDirectoryInformation, names at 104) or 12 (names
 * at 12), appended to b; next: its NextEntryOffset's place kept for the one after */
static void entry(struct pv_buf *b, uint8_t cls, const char *name, uint32_t attrs, uint64_t eof,
		  size_t *prev)
{
	uint8_t e[512] = {0}, nm[128];
	size_t nlen = u16(name, nm), at = cls == 12 ? 12 : 104, len = (at + nlen + 7) / 8 * 8;

	if (*prev != SIZE_MAX) /* the one before points here */
		smb2_put32((uint8_t *)b->data + *prev, (uint32_t)(b->len - *prev));
	*prev = b->len;
	if (cls != 12) {
		smb2_put64(e + 40, eof);
		smb2_put32(e + 56, attrs);
		smb2_put32(e + 60, (uint32_t)nlen);
	} else {
		smb2_put32(e + 8, (uint32_t)nlen);
	}
	memcpy(e + at, nm, nlen);
	pv_buf_add(b, e, len);
}

struct listed {
	char names[8][32];
	bool dir[8];
	uint64_t eof[8];
	int n;
};

static void on_entry(void *arg, const char *name, bool dir, uint64_t eof)
{
	struct listed *l = arg;

	if (l->n >= 8)
		return;
	snprintf(l->names[l->n], sizeof(l->names[l->n]), "%s", name);
	l->dir[l->n] = dir;
	l->eof[l->n++] = eof;
}

START_TEST(listing)
{
	struct pv_buf b = PV_BUF_INIT;
	struct listed l;
	size_t prev = SIZE_MAX;

	entry(&b, 37, ".", 0x10, 0, &prev);
	entry(&b, 37, "a.txt", 0x20, 123, &prev);
	entry(&b, 37, "sub", 0x10, 0, &prev);
	memset(&l, 0, sizeof(l));
	ck_assert_int_eq(pv_smb_trace_dir((uint8_t *)b.data, b.len, 37, on_entry, &l), 3);
	ck_assert_str_eq(l.names[1], "a.txt");
	ck_assert(!l.dir[1] && l.eof[1] == 123);
	ck_assert(!strcmp(l.names[2], "sub") && l.dir[2]);
	/* cut inside the last entry's name: the two before it */
	memset(&l, 0, sizeof(l));
	ck_assert_int_eq(pv_smb_trace_dir((uint8_t *)b.data, b.len - 8, 37, on_entry, &l), 2);
	/* a class it does not read; a NextEntryOffset not a multiple of 8 (that entry, no more),
	 * or inside the entry's name (nothing) */
	ck_assert_int_eq(pv_smb_trace_dir((uint8_t *)b.data, b.len, 99, on_entry, &l), -1);
	smb2_put32((uint8_t *)b.data, 116);
	memset(&l, 0, sizeof(l));
	ck_assert_int_eq(pv_smb_trace_dir((uint8_t *)b.data, b.len, 37, on_entry, &l), 1);
	smb2_put32((uint8_t *)b.data, 8);
	memset(&l, 0, sizeof(l));
	ck_assert_int_eq(pv_smb_trace_dir((uint8_t *)b.data, b.len, 37, on_entry, &l), 0);
	/* FileNamesInformation: names only */
	pv_buf_reset(&b);
	prev = SIZE_MAX;
	entry(&b, 12, "x", 0, 0, &prev);
	entry(&b, 12, "yz", 0, 0, &prev);
	memset(&l, 0, sizeof(l));
	ck_assert_int_eq(pv_smb_trace_dir((uint8_t *)b.data, b.len, 12, on_entry, &l), 2);
	ck_assert_str_eq(l.names[1], "yz");
	pv_buf_release(&b, 0);
}
END_TEST

static void take(void *arg, const struct pv_smb_trace_msg *m)
{
	*(struct pv_smb_trace_msg *)arg = *m;
}

/* one message: header and body (the body's offsets count from the header) */
static void frame(struct pv_buf *b, uint16_t cmd, uint32_t flags, const struct pv_buf *body)
{
	uint8_t h[SMB2_HDR];
	struct smb2_hdr hd = {.command = cmd, .mid = 9, .tree = 7, .session = 5};

	pv_buf_reset(b);
	smb2_hdr_put(h, &hd);
	smb2_put32(h + 16, flags);
	pv_buf_add(b, h, sizeof(h));
	pv_buf_add(b, body->data, body->len);
}

/* Listings per folder: each folder's opens listed, the median and the p95 over the folders
 * listed: 20 folders, the first 18 listed 3 times, one 10 times, one 50 (p95 of 20: the 19th). */
START_TEST(listings)
{
	struct pv_learn_ns ns;
	double out[2] = {-1, -1};
	uint64_t folders = 7;
	long s;

	pv_learn_ns_init(&ns);
	s = share(&ns, "fsroot1");
	pv_learn_ns_listings(&ns, out, &folders);
	ck_assert(folders == 0 && out[0] == 0 && out[1] == 0); /* none listed */
	for (int i = 0; i < 20; i++) {
		char name[16];
		long d;

		snprintf(name, sizeof(name), "u1\\d%02d", i);
		d = path(&ns, s, name);
		ck_assert_int_ge(d, 0);
		for (int k = 0; k < (i < 18 ? 3 : i == 18 ? 10 : 50); k++)
			pv_learn_ns_listed(&ns, d);
	}
	pv_learn_ns_listed(&ns, -1); /* no node: nothing */
	pv_learn_ns_listings(&ns, out, &folders);
	ck_assert_uint_eq(folders, 20);
	ck_assert_double_eq(out[0], 3);
	ck_assert_double_eq(out[1], 10);
	pv_learn_ns_release(&ns);
}
END_TEST

START_TEST(trace_fields)
{
	struct pv_buf b = PV_BUF_INIT, body = PV_BUF_INIT;
	struct pv_smb_trace_msg m;
	struct smb2_create_req q = {.path = "u1/a.txt", .disposition = 1, .options = 0x40};
	uint8_t r[88] = {0}, fid[16];
	char why[160];
	struct listed l;
	size_t prev = SIZE_MAX;

	/* a CREATE's name and options */
	ck_assert_int_eq(smb2_create_enc(&body, &q), 0);
	frame(&b, SMB2_CREATE, 0, &body);
	ck_assert_int_eq(pv_smb_trace_frame((uint8_t *)b.data, b.len, b.len, take, &m, NULL, why,
					    sizeof(why)),
			 1);
	ck_assert(m.name && m.namelen == 16 && m.create_options == 0x40 && m.disposition == 1);
	ck_assert(!memcmp(m.name, "u\0001\0\\\0a\0", 8));
	/* the name cut off by the bytes kept: none */
	ck_assert_int_eq(pv_smb_trace_frame((uint8_t *)b.data, b.len - 4, b.len, take, &m, NULL,
					    why, sizeof(why)),
			 1);
	ck_assert_ptr_null(m.name);
	/* its answer: created, a file of 777 bytes */
	memset(fid, 0xab, sizeof(fid));
	smb2_put16(r, 89);
	smb2_put32(r + 4, 2);
	smb2_put64(r + 48, 777);
	smb2_put32(r + 56, 0x20);
	memcpy(r + 64, fid, 16);
	pv_buf_reset(&body);
	pv_buf_add(&body, r, sizeof(r));
	frame(&b, SMB2_CREATE, SMB2_FLAGS_RESPONSE, &body);
	ck_assert_int_eq(pv_smb_trace_frame((uint8_t *)b.data, b.len, b.len, take, &m, NULL, why,
					    sizeof(why)),
			 1);
	ck_assert(m.response && m.has_attrs && m.action == 2 && m.eof == 777 && m.attrs == 0x20);
	ck_assert(m.has_fid && !memcmp(m.fid, fid, 16));
	/* a listing's answer: its buffer, read by pv_smb_trace_dir */
	pv_buf_reset(&body);
	{
		struct pv_buf ents = PV_BUF_INIT;
		uint8_t fixed[8] = {9, 0};

		entry(&ents, 37, "f1.docx", 0x20, 5, &prev);
		smb2_put16(fixed + 2, SMB2_HDR + 8);
		smb2_put32(fixed + 4, (uint32_t)ents.len);
		pv_buf_add(&body, fixed, sizeof(fixed));
		pv_buf_add(&body, ents.data, ents.len);
		pv_buf_release(&ents, 0);
	}
	frame(&b, SMB2_QUERY_DIRECTORY, SMB2_FLAGS_RESPONSE, &body);
	ck_assert_int_eq(pv_smb_trace_frame((uint8_t *)b.data, b.len, b.len, take, &m, NULL, why,
					    sizeof(why)),
			 1);
	ck_assert(m.out && m.outlen == body.len - 8);
	memset(&l, 0, sizeof(l));
	ck_assert_int_eq(pv_smb_trace_dir(m.out, m.outlen, 37, on_entry, &l), 1);
	ck_assert(!strcmp(l.names[0], "f1.docx") && l.eof[0] == 5);
	/* kept in part: the buffer up to the cut */
	ck_assert_int_eq(pv_smb_trace_frame((uint8_t *)b.data, b.len - 10, b.len, take, &m, NULL,
					    why, sizeof(why)),
			 1);
	ck_assert(m.out && m.outlen == body.len - 18);
	/* a WRITE's file id */
	pv_buf_reset(&body);
	ck_assert_int_eq(smb2_write_enc(&body, fid, 0, "x", 1), 0);
	frame(&b, SMB2_WRITE, 0, &body);
	ck_assert_int_eq(pv_smb_trace_frame((uint8_t *)b.data, b.len, b.len, take, &m, NULL, why,
					    sizeof(why)),
			 1);
	ck_assert(m.has_fid && !memcmp(m.fid, fid, 16) && m.length == 1);
	pv_buf_release(&b, 0);
	pv_buf_release(&body, 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("namespace");
	TCase *tc = tcase_create("namespace");

	tcase_add_test(tc, paths);
	tcase_add_test(tc, shape);
	tcase_add_test(tc, listing);
	tcase_add_test(tc, listings);
	tcase_add_test(tc, trace_fields);
	suite_add_tcase(s, tc);
	return pv_unit_run(s);
}
