/* tests/unit/check_learn.c: provision learn's reading of a capture, without a file: TCP
 * reassembly (learn/stream.c: segments reordered, sent again, overlapping, missing, cut by the
 * snapshot length, across the wrap of sequence numbers, more held than it may hold), the
 * decoding of captured SMB2 frames (smb/trace.c: a compound, a frame kept in part, chains
 * that point outside their frame), frames taken apart (capture/frame.c: Ethernet with a VLAN
 * tag and padding, IPv6 with an extension header, Linux cooked, loopback, fragments, lying
 * lengths), and whole conversations counted (learn/learn.c: answers matched to requests, an
 * interim answer, a lease break, a stream begun in mid-frame found again, a keep-alive, an
 * encrypted frame, requests never answered). */
#include <check.h>

#include "tests/unit/unit.h"
#include <string.h>

#include "capture/capture.h"
#include "learn/hist.h"
#include "learn/kind.h"
#include "learn/learn.h"
#include "learn/stream.h"
#include "learn/table.h"
#include "learn/user.h"
#include "playbooks/workload.h"
#include "smb/smb2.h"
#include "smb/trace.h"
#include "util/buf.h"

/* ---- learn/stream.c ---- */

struct sink {
	uint8_t data[4096];
	size_t n;
	size_t gaps[16];
	size_t ngaps;
};

static void sink_data(void *arg, const uint8_t *p, size_t len)
{
	struct sink *k = arg;

	ck_assert_uint_le(k->n + len, sizeof(k->data));
	memcpy(k->data + k->n, p, len);
	k->n += len;
}

static void sink_gap(void *arg, size_t len)
{
	struct sink *k = arg;

	ck_assert_uint_lt(k->ngaps, 16);
	k->gaps[k->ngaps++] = len;
	memset(k->data + k->n, '?', len); /* the hole, marked */
	k->n += len;
}

static const uint8_t TEXT[] = "abcdefghijklmnopqrstuvwxyz0123456789";

/* segment i of 6-byte segments of TEXT, sequence numbers from isn + 1 */
static void seg(struct pv_learn_stream *s, uint32_t isn, int i)
{
	pv_learn_stream_seg(s, isn + 1 + (uint32_t)i * 6, 0, TEXT + i * 6, 6, 6);
}

START_TEST(stream_order)
{
	struct pv_learn_stream s;
	struct sink k = {0};

	/* in order after the SYN */
	pv_learn_stream_init(&s, sink_data, sink_gap, &k);
	pv_learn_stream_seg(&s, 1000, PV_CAPTURE_TCP_SYN, NULL, 0, 0);
	for (int i = 0; i < 6; i++)
		seg(&s, 1000, i);
	pv_learn_stream_end(&s);
	ck_assert_uint_eq(k.n, 36);
	ck_assert(!memcmp(k.data, TEXT, 36));
	ck_assert(!s.began_midway && s.gap_bytes == 0 && s.again_bytes == 0);
	pv_learn_stream_release(&s);

	/* reordered: 0 2 1 5 4 3, and 1 and 4 sent again */
	memset(&k, 0, sizeof(k));
	pv_learn_stream_init(&s, sink_data, sink_gap, &k);
	pv_learn_stream_seg(&s, 1000, PV_CAPTURE_TCP_SYN, NULL, 0, 0);
	seg(&s, 1000, 0);
	seg(&s, 1000, 2);
	ck_assert_uint_eq(k.n, 6); /* 2 held until 1 comes */
	seg(&s, 1000, 1);
	ck_assert_uint_eq(k.n, 18);
	seg(&s, 1000, 1);
	seg(&s, 1000, 5);
	seg(&s, 1000, 4);
	seg(&s, 1000, 3);
	seg(&s, 1000, 4);
	pv_learn_stream_end(&s);
	ck_assert_uint_eq(k.n, 36);
	ck_assert(!memcmp(k.data, TEXT, 36));
	ck_assert_uint_eq(s.again_bytes, 12);
	ck_assert_uint_eq(k.ngaps, 0);
	pv_learn_stream_release(&s);

	/* overlapping: bytes 0..9, then 4..15 (4..9 again), then 12..35 */
	memset(&k, 0, sizeof(k));
	pv_learn_stream_init(&s, sink_data, sink_gap, &k);
	pv_learn_stream_seg(&s, 7, PV_CAPTURE_TCP_SYN, NULL, 0, 0);
	pv_learn_stream_seg(&s, 8, 0, TEXT, 10, 10);
	pv_learn_stream_seg(&s, 12, 0, TEXT + 4, 12, 12);
	pv_learn_stream_seg(&s, 20, 0, TEXT + 12, 24, 24);
	ck_assert_uint_eq(k.n, 36);
	ck_assert(!memcmp(k.data, TEXT, 36));
	ck_assert_uint_eq(s.again_bytes, 6 + 4);
	pv_learn_stream_release(&s);
}
END_TEST

START_TEST(stream_holes)
{
	struct pv_learn_stream s;
	struct sink k = {0};

	/* segment 2 never captured: 0 1 then 3 4 5 held; at the end, a gap of 6, then the rest */
	pv_learn_stream_init(&s, sink_data, sink_gap, &k);
	pv_learn_stream_seg(&s, 50, PV_CAPTURE_TCP_SYN, NULL, 0, 0);
	for (int i = 0; i < 6; i++)
		if (i != 2)
			seg(&s, 50, i);
	ck_assert_uint_eq(k.n, 12);
	pv_learn_stream_end(&s);
	ck_assert_uint_eq(k.ngaps, 1);
	ck_assert_uint_eq(k.gaps[0], 6);
	ck_assert_uint_eq(k.n, 36);
	ck_assert(!memcmp(k.data, TEXT, 12) && !memcmp(k.data + 12, "??????", 6) &&
		  !memcmp(k.data + 18, TEXT + 18, 18));
	ck_assert_uint_eq(s.gap_bytes, 6);
	ck_assert_uint_eq(s.gaps, 1);
	pv_learn_stream_release(&s);

	/* the same hole, but the peer acknowledged past it: given up at once, not at the end */
	memset(&k, 0, sizeof(k));
	pv_learn_stream_init(&s, sink_data, sink_gap, &k);
	pv_learn_stream_seg(&s, 50, PV_CAPTURE_TCP_SYN, NULL, 0, 0);
	for (int i = 0; i < 6; i++)
		if (i != 2)
			seg(&s, 50, i);
	pv_learn_stream_acked(&s, 51 + 12); /* acked up to the hole only: nothing to give up */
	ck_assert_uint_eq(k.n, 12);
	pv_learn_stream_acked(&s, 51 + 24);
	ck_assert_uint_eq(k.n, 36);
	ck_assert(k.ngaps == 1 && k.gaps[0] == 6 && s.nheld == 0);
	/* acked past everything seen and held: the rest is a gap too */
	pv_learn_stream_acked(&s, 51 + 40);
	ck_assert(k.ngaps == 2 && k.gaps[1] == 4 && s.next == 51 + 40);
	pv_learn_stream_release(&s);

	/* a FIN takes a sequence number, not a byte: its acknowledgement is no hole */
	memset(&k, 0, sizeof(k));
	pv_learn_stream_init(&s, sink_data, sink_gap, &k);
	pv_learn_stream_seg(&s, 50, PV_CAPTURE_TCP_SYN, NULL, 0, 0);
	pv_learn_stream_seg(&s, 51, PV_CAPTURE_TCP_FIN, TEXT, 6, 6);
	pv_learn_stream_acked(&s, 51 + 6 + 1);
	ck_assert(k.n == 6 && k.ngaps == 0 && s.gap_bytes == 0);
	pv_learn_stream_release(&s);

	/* a frame cut by the snapshot length: 4 of its 6 bytes captured, the 2 others a gap */
	memset(&k, 0, sizeof(k));
	pv_learn_stream_init(&s, sink_data, sink_gap, &k);
	pv_learn_stream_seg(&s, 50, PV_CAPTURE_TCP_SYN, NULL, 0, 0);
	pv_learn_stream_seg(&s, 51, 0, TEXT, 4, 6);
	seg(&s, 50, 1);
	ck_assert_uint_eq(k.n, 12);
	ck_assert_uint_eq(k.ngaps, 1);
	ck_assert_uint_eq(k.gaps[0], 2);
	ck_assert(!memcmp(k.data + 6, TEXT + 6, 6));
	pv_learn_stream_release(&s);

	/* no SYN captured: the first segment seen is where it starts, said so */
	memset(&k, 0, sizeof(k));
	pv_learn_stream_init(&s, sink_data, sink_gap, &k);
	seg(&s, 50, 3);
	seg(&s, 50, 4);
	ck_assert(s.began_midway);
	ck_assert_uint_eq(k.n, 12);
	ck_assert(!memcmp(k.data, TEXT + 18, 12));
	pv_learn_stream_release(&s);

	/* across the wrap of sequence numbers: the ISN 10 bytes before 2^32 */
	memset(&k, 0, sizeof(k));
	pv_learn_stream_init(&s, sink_data, sink_gap, &k);
	pv_learn_stream_seg(&s, 0xfffffff5u, PV_CAPTURE_TCP_SYN, NULL, 0, 0);
	seg(&s, 0xfffffff5u, 1);
	seg(&s, 0xfffffff5u, 3);
	seg(&s, 0xfffffff5u, 2);
	seg(&s, 0xfffffff5u, 0);
	pv_learn_stream_end(&s);
	ck_assert_uint_eq(k.n, 24);
	ck_assert(!memcmp(k.data, TEXT, 24));
	ck_assert_uint_eq(k.ngaps, 0);
	pv_learn_stream_release(&s);
}
END_TEST

static void null_data(void *arg, const uint8_t *p, size_t len)
{
	(void)p;
	*(size_t *)arg += len;
}

static void null_gap(void *arg, size_t len)
{
	(void)arg;
	(void)len;
}

/* More held than it may hold: the hole is given up, nothing grows past the bounds */
START_TEST(stream_bounds)
{
	static uint8_t big[4096];
	struct pv_learn_stream s;
	size_t got = 0;

	pv_learn_stream_init(&s, null_data, null_gap, &got);
	pv_learn_stream_seg(&s, 0, PV_CAPTURE_TCP_SYN, NULL, 0, 0);
	/* byte 1 never comes; segments from 1001 on, each 4096 bytes, far more than the bound */
	for (uint32_t i = 0; i < 2 * PV_LEARN_STREAM_HOLD_SEGS; i++) {
		pv_learn_stream_seg(&s, 1001 + i * 4096, 0, big, sizeof(big), sizeof(big));
		ck_assert_uint_le(s.nheld, PV_LEARN_STREAM_HOLD_SEGS);
		ck_assert_uint_le(s.held_bytes, PV_LEARN_STREAM_HOLD_MAX);
	}
	ck_assert_uint_ge(s.gaps, 1);
	ck_assert_uint_eq(s.gap_bytes, 1000);
	pv_learn_stream_end(&s);
	ck_assert_uint_eq(got, 2 * PV_LEARN_STREAM_HOLD_SEGS * sizeof(big));
	pv_learn_stream_release(&s);
}
END_TEST

/* ---- smb/trace.c ---- */

static uint64_t session_id = 0x1234; /* the session msg() puts in its headers */

/* a message: header (request or answer) and body, appended to b, 8-aligned when more follow */
static void msg(struct pv_buf *b, uint16_t cmd, uint64_t mid, uint32_t flags, uint32_t status,
		const struct pv_buf *body, bool last)
{
	uint8_t h[SMB2_HDR];
	struct smb2_hdr hd = {.command = cmd,
			      .mid = mid,
			      .flags = flags,
			      .status = status,
			      .tree = 7,
			      .session = session_id};
	size_t start = b->len, pad;

	smb2_hdr_put(h, &hd);
	smb2_put32(h + 8, status);
	smb2_put32(h + 16, flags);
	pv_buf_add(b, h, sizeof(h));
	pv_buf_add(b, body->data, body->len);
	pad = last ? 0 : (8 - (b->len - start) % 8) % 8;
	for (size_t i = 0; i < pad; i++)
		pv_buf_add(b, "", 1);
	if (!last)
		smb2_put32((uint8_t *)b->data + start + 20, (uint32_t)(b->len - start));
}

struct seen {
	struct pv_smb_trace_msg m[8];
	size_t n;
};

static void see(void *arg, const struct pv_smb_trace_msg *m)
{
	struct seen *s = arg;

	if (s->n < 8)
		s->m[s->n] = *m;
	s->n++;
}

/* CREATE (OPEN_IF) + QUERY_INFO + CLOSE as a Windows client sends them */
static void compound(struct pv_buf *b)
{
	struct pv_buf body = PV_BUF_INIT;
	struct smb2_create_req q = {.path = "a/b.txt",
				    .access = 0x120089,
				    .share = 7,
				    .disposition = 3,
				    .options = 0x40,
				    .oplock = 0xff};

	ck_assert_int_eq(smb2_create_enc(&body, &q), 0);
	msg(b, SMB2_CREATE, 10, 0, 0, &body, false);
	pv_buf_reset(&body);
	ck_assert_int_eq(smb2_query_info_enc(&body, 1, 5, SMB2_RELATED_FID, 4096, 0), 0);
	msg(b, SMB2_QUERY_INFO, 11, SMB2_FLAGS_RELATED, 0, &body, false);
	pv_buf_reset(&body);
	ck_assert_int_eq(smb2_close_enc(&body, SMB2_RELATED_FID, 0), 0);
	msg(b, SMB2_CLOSE, 12, SMB2_FLAGS_RELATED, 0, &body, true);
	pv_buf_release(&body, 0);
}

START_TEST(trace_frames)
{
	struct pv_buf b = PV_BUF_INIT, body = PV_BUF_INIT;
	struct seen s = {0};
	char why[160];
	bool cut = true;
	uint8_t *p;

	compound(&b);
	p = (uint8_t *)b.data;
	ck_assert_int_eq(pv_smb_trace_kind(p, b.len), PV_SMB_TRACE_SMB2);
	ck_assert_int_eq(pv_smb_trace_frame(p, b.len, b.len, see, &s, &cut, why, sizeof(why)), 3);
	ck_assert(!cut);
	ck_assert(s.m[0].cmd == SMB2_CREATE && s.m[0].disposition == 3 && !s.m[0].related &&
		  s.m[0].access == 0x120089 && s.m[0].oplock == 0xff && s.m[0].mid == 10 &&
		  s.m[0].tree == 7 && s.m[0].session == 0x1234);
	ck_assert(s.m[1].cmd == SMB2_QUERY_INFO && s.m[1].related && s.m[1].info_type == 1 &&
		  s.m[1].info_class == 5);
	ck_assert(s.m[2].cmd == SMB2_CLOSE && s.m[2].mid == 12 && !s.m[2].response);

	/* a QUERY_DIRECTORY's pattern, as its name: "f000*", UTF-16LE */
	{
		static const uint8_t want[] = {'f', 0, '0', 0, '0', 0, '0', 0, '*', 0};
		struct pv_buf q = PV_BUF_INIT;
		struct seen d = {0};

		ck_assert_int_eq(smb2_query_dir_enc(&body, SMB2_RELATED_FID, 1, 0, "f000*", 65536),
				 0);
		msg(&q, SMB2_QUERY_DIRECTORY, 13, 0, 0, &body, true);
		pv_buf_reset(&body);
		ck_assert_int_eq(pv_smb_trace_frame((uint8_t *)q.data, q.len, q.len, see, &d, &cut,
						    why, sizeof(why)),
				 1);
		ck_assert(d.m[0].cmd == SMB2_QUERY_DIRECTORY && d.m[0].info_class == 1 &&
			  d.m[0].namelen == 10 && !memcmp(d.m[0].name, want, 10));
		ck_assert_uint_eq(pv_playbook_workload_learned_listing(d.m[0].name, d.m[0].namelen),
				  PV_PLAYBOOK_WORKLOAD_LEARNED_PATTERN);
		/* cut before its pattern: none */
		memset(&d, 0, sizeof(d));
		ck_assert_int_eq(pv_smb_trace_frame((uint8_t *)q.data, q.len - 4, q.len, see, &d,
						    &cut, why, sizeof(why)),
				 1);
		ck_assert(d.m[0].name == NULL && d.m[0].namelen == 0);
		pv_buf_release(&q, 0);
	}

	/* kept only in part: the first 110 bytes of it, the CREATE's header and fields in them */
	memset(&s, 0, sizeof(s));
	ck_assert_int_eq(pv_smb_trace_frame(p, 110, b.len, see, &s, &cut, why, sizeof(why)), 1);
	ck_assert(cut && s.m[0].disposition == 3 && s.m[0].oplock == 0xff && s.m[0].body_cut);
	/* ... its first 80: the header in, CreateDisposition (at 64 + 36) not */
	memset(&s, 0, sizeof(s));
	ck_assert_int_eq(pv_smb_trace_frame(p, 80, b.len, see, &s, &cut, why, sizeof(why)), 1);
	ck_assert(s.m[0].disposition == 0 && s.m[0].access == 0 && s.m[0].oplock == 0 &&
		  s.m[0].body_cut);

	/* a NextCommand that is not a multiple of 8, or points past the frame: refused, said */
	smb2_put32(p + 20, 0x41);
	memset(&s, 0, sizeof(s));
	ck_assert_int_eq(pv_smb_trace_frame(p, b.len, b.len, see, &s, &cut, why, sizeof(why)), -1);
	ck_assert_ptr_nonnull(strstr(why, "not a multiple of 8"));
	ck_assert_uint_eq(s.n, 0);
	smb2_put32(p + 20, (uint32_t)b.len + 8);
	ck_assert_int_eq(pv_smb_trace_frame(p, b.len, b.len, see, &s, &cut, why, sizeof(why)), -1);
	ck_assert_ptr_nonnull(strstr(why, "says the next is"));
	/* a chain whose next message is not SMB2 */
	pv_buf_reset(&b);
	compound(&b);
	p = (uint8_t *)b.data;
	p[smb2_get32(p + 20)] = 0xfd;
	memset(&s, 0, sizeof(s));
	ck_assert_int_eq(pv_smb_trace_frame(p, b.len, b.len, see, &s, &cut, why, sizeof(why)), -1);
	ck_assert_uint_eq(s.n, 1);
	ck_assert_ptr_nonnull(strstr(why, "is not SMB2"));
	/* too short for a header */
	ck_assert_int_eq(pv_smb_trace_frame(p, 40, 40, see, &s, &cut, why, sizeof(why)), -1);

	/* answers: a READ's bytes, an error READ's none */
	pv_buf_reset(&b);
	pv_buf_add(&body, "\x11\x00\x50\x00\x00\x10\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00x", 17);
	msg(&b, SMB2_READ, 4, SMB2_FLAGS_RESPONSE, 0, &body, true);
	memset(&s, 0, sizeof(s));
	ck_assert_int_eq(pv_smb_trace_frame((uint8_t *)b.data, b.len, b.len, see, &s, &cut, why,
					    sizeof(why)),
			 1);
	ck_assert(s.m[0].response && s.m[0].got == 4096);
	pv_buf_reset(&b);
	msg(&b, SMB2_READ, 4, SMB2_FLAGS_RESPONSE, 0xC0000011u, &body, true);
	memset(&s, 0, sizeof(s));
	pv_smb_trace_frame((uint8_t *)b.data, b.len, b.len, see, &s, &cut, why, sizeof(why));
	ck_assert(s.m[0].got == 0 && s.m[0].status == 0xC0000011u);

	ck_assert_int_eq(pv_smb_trace_kind((const uint8_t *)"\xfdSMB", 4), PV_SMB_TRACE_ENCRYPTED);
	ck_assert_int_eq(pv_smb_trace_kind((const uint8_t *)"\xffSMB", 4), PV_SMB_TRACE_SMB1);
	ck_assert_int_eq(pv_smb_trace_kind((const uint8_t *)"\xfcSMB", 4), PV_SMB_TRACE_COMPRESSED);
	ck_assert_int_eq(pv_smb_trace_kind((const uint8_t *)"GET ", 4), PV_SMB_TRACE_OTHER);
	ck_assert_int_eq(pv_smb_trace_kind((const uint8_t *)"\xfeSM", 3), PV_SMB_TRACE_OTHER);
	pv_buf_release(&b, 0);
	pv_buf_release(&body, 0);
}
END_TEST

/* ---- capture/frame.c ---- */

/* Ethernet (a VLAN tag when vlan), IPv4, TCP from 198.18.0.31:sport to 198.18.0.20:dport */
static size_t eth4(uint8_t *f, bool vlan, uint16_t sport, uint16_t dport, uint32_t seq,
		   uint8_t flags, const void *data, size_t len)
{
	size_t at = 12, ip, tcp;

	memset(f, 0, 64);
	if (vlan) {
		f[at] = 0x81, f[at + 1] = 0x00, f[at + 3] = 5;
		at += 4;
	}
	f[at] = 0x08, f[at + 1] = 0x00;
	ip = at + 2;
	f[ip] = 0x45;
	f[ip + 2] = (uint8_t)((40 + len) >> 8), f[ip + 3] = (uint8_t)(40 + len);
	f[ip + 8] = 64, f[ip + 9] = 6;
	/* the client 198.18.0.31, the server (port 445) 198.18.0.20 */
	memcpy(f + ip + (sport == 445 ? 16 : 12), "\xc6\x12\x00\x1f", 4);
	memcpy(f + ip + (sport == 445 ? 12 : 16), "\xc6\x12\x00\x14", 4);
	tcp = ip + 20;
	f[tcp] = (uint8_t)(sport >> 8), f[tcp + 1] = (uint8_t)sport;
	f[tcp + 2] = (uint8_t)(dport >> 8), f[tcp + 3] = (uint8_t)dport;
	f[tcp + 4] = (uint8_t)(seq >> 24), f[tcp + 5] = (uint8_t)(seq >> 16);
	f[tcp + 6] = (uint8_t)(seq >> 8), f[tcp + 7] = (uint8_t)seq;
	f[tcp + 12] = 5 << 4;
	f[tcp + 13] = flags;
	if (len)
		memcpy(f + tcp + 20, data, len);
	return tcp + 20 + len;
}

START_TEST(frames)
{
	uint8_t f[256], g[256];
	struct pv_capture_seg s;
	char why[160];
	size_t n;

	n = eth4(f, true, 40000, 445, 99, 0x18, "hello", 5);
	/* Ethernet pads a short frame: the padding is not the segment's */
	memset(f + n, 0xee, 10);
	ck_assert_int_eq(
		pv_capture_frame(PV_CAPTURE_LINK_ETHERNET, f, n + 10, n + 10, &s, why, sizeof(why)),
		PV_CAPTURE_TCP);
	ck_assert(s.sport == 40000 && s.dport == 445 && s.seq == 99 && s.len == 5 && s.wire == 5 &&
		  !memcmp(s.data, "hello", 5) && s.src[15] == 0x1f && s.dst[15] == 0x14 &&
		  s.src[10] == 0xff);
	/* cut by the snapshot: 2 of the 5 bytes captured */
	ck_assert_int_eq(
		pv_capture_frame(PV_CAPTURE_LINK_ETHERNET, f, n - 3, n, &s, why, sizeof(why)),
		PV_CAPTURE_TCP);
	ck_assert(s.len == 2 && s.wire == 5);
	/* lengths that lie: an IP total beyond the frame, a TCP header beyond the packet */
	memcpy(g, f, n);
	g[18 + 2] = 0x10;
	ck_assert_int_eq(pv_capture_frame(PV_CAPTURE_LINK_ETHERNET, g, n, n, &s, why, sizeof(why)),
			 PV_CAPTURE_BAD);
	ck_assert_ptr_nonnull(strstr(why, "IPv4 packet"));
	memcpy(g, f, n);
	g[18 + 20 + 12] = 0xf0;
	ck_assert_int_eq(pv_capture_frame(PV_CAPTURE_LINK_ETHERNET, g, n, n, &s, why, sizeof(why)),
			 PV_CAPTURE_BAD);
	ck_assert_ptr_nonnull(strstr(why, "TCP header"));
	/* a fragment; not TCP; not IP */
	memcpy(g, f, n);
	g[18 + 6] = 0x20;
	ck_assert_int_eq(pv_capture_frame(PV_CAPTURE_LINK_ETHERNET, g, n, n, &s, why, sizeof(why)),
			 PV_CAPTURE_FRAGMENT);
	memcpy(g, f, n);
	g[18 + 9] = 17;
	ck_assert_int_eq(pv_capture_frame(PV_CAPTURE_LINK_ETHERNET, g, n, n, &s, why, sizeof(why)),
			 PV_CAPTURE_NOT_TCP);
	memcpy(g, f, n);
	g[16] = 0x08, g[17] = 0x06; /* ARP */
	ck_assert_int_eq(pv_capture_frame(PV_CAPTURE_LINK_ETHERNET, g, n, n, &s, why, sizeof(why)),
			 PV_CAPTURE_NOT_TCP);
	ck_assert_int_eq(pv_capture_frame(PV_CAPTURE_LINK_ETHERNET, f, 10, n, &s, why, sizeof(why)),
			 PV_CAPTURE_BAD);

	/* Linux cooked: 16 bytes with the EtherType at 14, the same packet after them */
	n = eth4(f, false, 445, 40000, 7, 0x10, "xy", 2);
	memset(g, 0, 16);
	g[14] = 0x08;
	memcpy(g + 16, f + 14, n - 14);
	ck_assert_int_eq(
		pv_capture_frame(PV_CAPTURE_LINK_SLL, g, n + 2, n + 2, &s, why, sizeof(why)),
		PV_CAPTURE_TCP);
	ck_assert(s.sport == 445 && s.len == 2);
	/* loopback (AF_INET in the capturing host's order) and raw IP */
	memcpy(g, "\x02\x00\x00\x00", 4);
	memcpy(g + 4, f + 14, n - 14);
	ck_assert_int_eq(
		pv_capture_frame(PV_CAPTURE_LINK_NULL, g, n - 10, n - 10, &s, why, sizeof(why)),
		PV_CAPTURE_TCP);
	ck_assert_int_eq(
		pv_capture_frame(PV_CAPTURE_LINK_RAW, f + 14, n - 14, n - 14, &s, why, sizeof(why)),
		PV_CAPTURE_TCP);
	ck_assert_int_eq(pv_capture_frame(105, f, n, n, &s, why, sizeof(why)), PV_CAPTURE_BAD);
	ck_assert(!pv_capture_link_known(105) && pv_capture_link_known(PV_CAPTURE_LINK_SLL2));

	/* raw IPv6 with a destination-options header before TCP */
	memset(g, 0, sizeof(g));
	g[0] = 0x60;
	g[5] = 8 + 20 + 3; /* payload length */
	g[6] = 60;	   /* next: destination options */
	g[24 + 15] = 1;
	g[40] = 6;			    /* then TCP */
	g[41] = 0;			    /* 8 bytes */
	g[48 + 0] = 0x01, g[48 + 1] = 0xbd; /* 445 */
	g[48 + 12] = 5 << 4;
	memcpy(g + 68, "abc", 3);
	ck_assert_int_eq(pv_capture_frame(PV_CAPTURE_LINK_RAW, g, 71, 71, &s, why, sizeof(why)),
			 PV_CAPTURE_TCP);
	ck_assert(s.sport == 445 && s.len == 3 && !memcmp(s.data, "abc", 3) && s.dst[15] == 1);
	g[6] = 44; /* a fragment header */
	ck_assert_int_eq(pv_capture_frame(PV_CAPTURE_LINK_RAW, g, 71, 71, &s, why, sizeof(why)),
			 PV_CAPTURE_FRAGMENT);
}
END_TEST

/* ---- learn/hist.c, learn/table.c ---- */

/* The share, percent, that a replay's draws from l (log-linear between two levels) put between
 * a and b seconds. */
static double levels_between(const struct pv_learn_levels *l, double a, double b)
{
	double f[2], x[2] = {a, b};

	for (int k = 0; k < 2; k++) {
		f[k] = x[k] <= l->q[0] ? 0 : 100;
		for (unsigned i = 1; i < l->n; i++)
			if (x[k] >= l->q[i - 1] && x[k] < l->q[i]) {
				f[k] = l->level[i - 1] + (l->level[i] - l->level[i - 1]) *
								 log(x[k] / l->q[i - 1]) /
								 log(l->q[i] / l->q[i - 1]);
				break;
			}
	}
	return f[1] - f[0];
}

START_TEST(hists)
{
	struct pv_learn_hist h = {0};
	struct pv_learn_sizes z = {0};
	struct pv_learn_hole holes[4];
	struct pv_learn_counts *c;
	double split;

	/* two modes: 900 gaps of about 200 us (within activities), 100 of about 2 s (between) */
	for (int i = 0; i < 900; i++)
		pv_learn_hist_add(&h, 150e-6 + (double)(i % 10) * 10e-6);
	for (int i = 0; i < 100; i++)
		pv_learn_hist_add(&h, 1.5 + (double)(i % 10) * 0.1);
	split = pv_learn_hist_split(&h);
	ck_assert_msg(split > 250e-6 && split < 1.5, "split %g", split);
	ck_assert_uint_eq(pv_learn_hist_above(&h, split), 100);
	/* quantiles within a bin's 12% */
	ck_assert_double_eq_tol(pv_learn_hist_quantile(&h, 0.5), 195e-6, 195e-6 * 0.13);
	ck_assert_double_eq_tol(pv_learn_hist_quantile(&h, 0.95), 1.95, 1.95 * 0.13);
	ck_assert_double_eq(pv_learn_hist_quantile(&(struct pv_learn_hist){0}, 0.5), 0);
	ck_assert_double_eq(pv_learn_hist_split(&(struct pv_learn_hist){0}), 0);
	/* its one hole, from about 250 us to 1.5 s, 90% of the times under it */
	ck_assert_uint_eq(pv_learn_hist_holes(&h, PV_LEARN_HOLE_BINS, holes, 4), 1);
	ck_assert_double_eq_tol(holes[0].share, 0.9, 1e-12);
	ck_assert(holes[0].lo > 220e-6 && holes[0].lo < 260e-6 && holes[0].hi > 1.4 &&
		  holes[0].hi < 1.6);
	/* the quantiles a replay draws from put nothing in it (log-linear between two levels):
	 * at 90% and 90.001%, its edges; at 90% and 95% alone, 5% of the draws fell in it */
	c = calloc(1, sizeof(*c));
	ck_assert_ptr_nonnull(c);
	c->think_gaps = h;
	pv_learn_times(c);
	ck_assert_msg(levels_between(&c->think_q, 300e-6, 1.3) < 0.002, "%.4f%% in the hole",
		      levels_between(&c->think_q, 300e-6, 1.3));
	ck_assert_double_eq_tol(levels_between(&c->think_q, 100e-6, 300e-6), 90, 0.01);
	ck_assert(c->think_q.n > PV_LEARN_THINK_LEVELS && c->think_q.level[0] == 0 &&
		  c->think_q.level[c->think_q.n - 1] == 100);
	for (unsigned i = 1; i < c->think_q.n; i++)
		ck_assert(c->think_q.level[i] > c->think_q.level[i - 1] &&
			  c->think_q.q[i] >= c->think_q.q[i - 1]);
	free(c);
	/* holes the widest first, at most as many as asked: 10 us, 100 us (19 empty bins
	 * between), 140 us (2: not one), 300 us (5) */
	{
		struct pv_learn_hist g = {0};

		pv_learn_hist_add(&g, 10e-6);
		pv_learn_hist_add(&g, 100e-6);
		pv_learn_hist_add(&g, 140e-6);
		pv_learn_hist_add(&g, 300e-6);
		ck_assert_uint_eq(pv_learn_hist_holes(&g, 3, holes, 4), 2);
		ck_assert(holes[0].share == 0.25 && holes[1].share == 0.75);
		ck_assert_uint_eq(pv_learn_hist_holes(&g, 3, holes, 1), 1);
		ck_assert(holes[0].share == 0.25);
		ck_assert_uint_eq(pv_learn_hist_holes(&g, 20, holes, 4), 0);
	}
	pv_learn_hist_add(&h, 0);   /* below the range */
	pv_learn_hist_add(&h, 1e9); /* above it */
	ck_assert(h.under == 1 && h.over == 1 && h.n == 1002);

	/* sizes: bins of powers of two, the quantile's upper bound */
	for (int i = 0; i < 10; i++)
		pv_learn_sizes_add(&z, 4096);
	pv_learn_sizes_add(&z, 1 << 20);
	pv_learn_sizes_add(&z, 0);
	ck_assert_uint_eq(pv_learn_sizes_quantile(&z, 0.5), 8192);
	ck_assert_uint_eq(pv_learn_sizes_quantile(&z, 0.99), 2u << 20);
	ck_assert_uint_eq(pv_learn_sizes_quantile(&z, 0.01), 0);
	ck_assert_uint_eq(z.total, 10 * 4096 + (1 << 20));
}
END_TEST

/* The quantile within its bin: as the replay draws (a share at the low edge, the rest even) */
START_TEST(sizes_value)
{
	struct pv_learn_sizes a = {0}, b = {0}, e = {0}, u = {0};

	ck_assert(pv_learn_sizes_value(&e, 0.5) == 0);
	/* all at one size, a power of two: that size, not its bin's bound */
	for (int i = 0; i < 100; i++)
		pv_learn_sizes_add(&e, 65536);
	ck_assert(pv_learn_sizes_value(&e, 0.5) == 65536);
	ck_assert(pv_learn_sizes_value(&e, 0.95) == 65536);
	/* a bin's mean at 1.5 times its edge: spread evenly, its middle at the mean */
	for (int i = 0; i < 100; i++)
		pv_learn_sizes_add(&u, 4096 + (uint64_t)i * 4096 / 100);
	ck_assert_double_eq_tol(pv_learn_sizes_value(&u, 0.5), 6103, 25);
	/* half the reads either side of 32 KiB, a few more on one side, then the other: the
	 * bins' bounds are 32 and 64 KiB apart; the values are within 1% */
	for (int i = 0; i < 1000; i++) {
		pv_learn_sizes_add(&a, i < 498 ? 20000 : 40000);
		pv_learn_sizes_add(&b, i < 503 ? 20000 : 40000);
	}
	ck_assert_uint_eq(pv_learn_sizes_quantile(&a, 0.5), 65536);
	ck_assert_uint_eq(pv_learn_sizes_quantile(&b, 0.5), 32768);
	ck_assert(pv_learn_sizes_value(&a, 0.5) == 32768);
	ck_assert_double_eq_tol(pv_learn_sizes_value(&b, 0.5), 32543, 20);
	ck_assert_double_eq_tol(pv_learn_sizes_value(&a, 0.95),
				32768 + 32768 * (0.9 - 0.559) / 0.441, 300);
}
END_TEST

START_TEST(table)
{
	struct pv_learn_table t;
	struct pv_learn_table_entry e;

	pv_learn_table_init(&t, 1000);
	/* keys that crowd the same slots, put, found, taken in another order */
	for (uint64_t k = 0; k < 1000; k++)
		ck_assert(pv_learn_table_put(&t, k << 32, (double)k, (uint32_t)k));
	ck_assert(!pv_learn_table_put(&t, 5000ull << 32, 0, 0)); /* at its bound */
	ck_assert_uint_eq(t.n, 1000);
	for (uint64_t k = 0; k < 1000; k += 2)
		ck_assert(pv_learn_table_take(&t, k << 32, &e) && e.v == k && e.t == (double)k);
	for (uint64_t k = 0; k < 1000; k++)
		ck_assert((pv_learn_table_get(&t, k << 32) != NULL) == (k % 2 == 1));
	ck_assert(!pv_learn_table_take(&t, 0, NULL));
	ck_assert(pv_learn_table_put(&t, 1ull << 32, 9, 9) &&
		  pv_learn_table_get(&t, 1ull << 32)->v == 9);
	ck_assert_uint_eq(t.n, 500);
	pv_learn_table_release(&t);
}
END_TEST

/* ---- learn/kind.c ---- */

static struct pv_learn_kind_shape shape(const uint16_t *cmds, size_t n)
{
	struct pv_learn_kind_shape s = {0};

	for (size_t i = 0; i < n; i++)
		pv_learn_kind_shape_add(&s, cmds[i]);
	return s;
}

START_TEST(kinds)
{
	static const uint16_t open_read[] = {5, 16, 8, 8, 8, 6}, open_read2[] = {5, 16, 8, 6},
			      listing[] = {5, 14, 14, 6};
	uint16_t longer[PV_LEARN_KIND_STEPS + 16];
	struct pv_learn_kind_shape a = shape(open_read, 6), b = shape(open_read2, 4), c, d;
	struct pv_learn_kinds t;
	size_t order[3];
	char name[PV_LEARN_KIND_NAME_MAX];

	/* repeats folded: READ READ READ and READ are one shape's READ+ and READ */
	pv_learn_kind_name(&a, name, sizeof(name));
	ck_assert_str_eq(name, "CREATE QUERY_INFO READ+ CLOSE");
	pv_learn_kind_name(&b, name, sizeof(name));
	ck_assert_str_eq(name, "CREATE QUERY_INFO READ CLOSE");
	/* cut after PV_LEARN_KIND_STEPS, marked */
	for (size_t i = 0; i < PV_LEARN_KIND_STEPS + 16; i++)
		longer[i] = (uint16_t)(i % 2 ? 8 : 9);
	c = shape(longer, PV_LEARN_KIND_STEPS + 16);
	ck_assert(c.n == PV_LEARN_KIND_STEPS && c.cut);
	pv_learn_kind_name(&c, name, sizeof(name));
	ck_assert_msg(strstr(name, "WRITE READ ...") != NULL, "%s", name);
	d = shape(listing, 4);

	pv_learn_kinds_init(&t);
	pv_learn_kinds_add(&t, &a, 6, 0.5);
	pv_learn_kinds_add(&t, &d, 4, 0.25);
	pv_learn_kinds_add(&t, &a, 8, 1.5);
	pv_learn_kinds_add(&t, &b, 4, 0.1);
	pv_learn_kinds_add(&t, &d, 4, 0.25);
	pv_learn_kinds_add(&t, &a, 5, 1.0);
	pv_learn_kinds_add(&t, &(struct pv_learn_kind_shape){0}, 0, 0); /* empty: nothing */
	/* READ+ and READ: one kind, 4 activities, its READ+ read 3, 3, 3 and 1 times */
	ck_assert_uint_eq(t.n, 2);
	pv_learn_kinds_order(&t, order);
	ck_assert(t.k[order[0]].count == 4 && t.k[order[0]].requests == 23 &&
		  t.k[order[0]].seconds == 3.1);
	ck_assert_uint_eq(t.k[order[0]].step_requests[2], 10);
	ck_assert_uint_eq(t.k[order[0]].step_requests[0], 4);
	pv_learn_kind_name(&t.k[order[0]].shape, name, sizeof(name));
	ck_assert_str_eq(name, "CREATE QUERY_INFO READ+ CLOSE");
	ck_assert(t.k[order[1]].count == 2);
	/* b first: the READ+ comes with a, still */
	pv_learn_kinds_release(&t);
	pv_learn_kinds_init(&t);
	pv_learn_kinds_add(&t, &b, 4, 0.1);
	pv_learn_kinds_add(&t, &a, 6, 0.5);
	ck_assert_uint_eq(t.n, 1);
	pv_learn_kind_name(&t.k[0].shape, name, sizeof(name));
	ck_assert_str_eq(name, "CREATE QUERY_INFO READ+ CLOSE");
	pv_learn_kinds_release(&t);
}
END_TEST

/* The shapes of the paths: a listing of the home and one of a folder below it are two kinds of
 * the same commands; a CREATE's depth is its own (one folded into a repeat keeps the first's),
 * a step that names no path has none, and the depths come out in the order of the CREATEs. */
START_TEST(kinds_depths)
{
	static const uint16_t listing[] = {5, 14, 14, 6};
	struct pv_learn_kind_shape home = {0}, below = {0}, two = {0};
	struct pv_learn_kinds t;
	int d[PV_LEARN_KIND_STEPS];

	for (size_t i = 0; i < 4; i++) {
		pv_learn_kind_shape_add(&home, listing[i]);
		pv_learn_kind_shape_add(&below, listing[i]);
		if (listing[i] == 5) {
			pv_learn_kind_shape_depth(&home, 0);
			pv_learn_kind_shape_depth(&below, 2);
		}
	}
	pv_learn_kind_shape_depth(&home, 4); /* on a CLOSE: no depth */
	ck_assert_int_eq(home.depth[3], 0);
	pv_learn_kinds_init(&t);
	pv_learn_kinds_add(&t, &home, 4, 0.1);
	pv_learn_kinds_add(&t, &below, 4, 0.1);
	pv_learn_kinds_add(&t, &home, 4, 0.1);
	ck_assert_uint_eq(t.n, 2);
	ck_assert_uint_eq(t.k[0].count, 2);
	ck_assert_int_eq(pv_learn_kind_depths(&t.k[0].shape, d), 1);
	ck_assert_int_eq(d[0], 0);
	ck_assert_int_eq(pv_learn_kind_depths(&t.k[1].shape, d), 1);
	ck_assert_int_eq(d[0], 2);
	pv_learn_kinds_release(&t);
	/* CREATE CREATE (a repeat: the first's depth), CREATE(REFUSED) deep, not known, outside */
	pv_learn_kind_shape_add(&two, 5);
	pv_learn_kind_shape_depth(&two, 1);
	pv_learn_kind_shape_add(&two, 5);
	pv_learn_kind_shape_depth(&two, 3);
	pv_learn_kind_shape_add(&two, 6);
	pv_learn_kind_shape_add(&two, 5);
	pv_learn_kind_shape_depth(&two, 12);
	pv_learn_kind_shape_refused(&two);
	pv_learn_kind_shape_add(&two, 6);
	pv_learn_kind_shape_add(&two, 5);
	pv_learn_kind_shape_add(&two, 6);
	pv_learn_kind_shape_add(&two, 5);
	pv_learn_kind_shape_depth(&two, PV_LEARN_NS_OUT);
	ck_assert_int_eq(pv_learn_kind_depths(&two, d), 4);
	ck_assert_int_eq(d[0], 1);
	ck_assert_int_eq(d[1], PV_PLAYBOOK_WORKLOAD_DEEP);
	ck_assert_int_eq(d[2], PV_PLAYBOOK_WORKLOAD_OUT);
	ck_assert_int_eq(d[3], PV_PLAYBOOK_WORKLOAD_OUT);
}
END_TEST

/* The kinds past those written, each to the written kind nearest it: by their commands'
 * shares of their requests, then by their requests an activity; and the share of all requests
 * that then become another command. */
START_TEST(kinds_nearest)
{
	static const uint16_t rd[] = {5, 8, 6}, rd2[] = {5, 8, 6, 5, 8, 6}, ls[] = {5, 14, 6},
			      ls2[] = {5, 14, 6, 14, 6},
			      rd4[] = {5, 8, 6, 5, 8, 6, 5, 8, 6, 5, 8, 6};
	struct pv_learn_kind_shape a = shape(rd, 3), a2 = shape(rd2, 6), b = shape(ls, 3),
				   c = shape(ls2, 5), e = shape(rd4, 12);
	struct pv_learn_kinds t;
	size_t order[5], near[5], at[5];
	double moved;

	pv_learn_kinds_init(&t);
	for (int i = 0; i < 10; i++) {
		pv_learn_kinds_add(&t, &a, 3, 0.1);
		pv_learn_kinds_add(&t, &b, 3, 0.1);
	}
	for (int i = 0; i < 5; i++)
		pv_learn_kinds_add(&t, &a2, 6, 0.2);
	/* past the three kept: c (a folder opened, listed, closed, listed and closed again: b's
	 * commands, in other shares), e (a's shares, at 12 requests an activity: nearer a2's 6
	 * than a's 3) */
	pv_learn_kinds_add(&t, &c, 5, 0.1);
	pv_learn_kinds_add(&t, &c, 5, 0.1);
	pv_learn_kinds_add(&t, &e, 12, 0.3);
	ck_assert_uint_eq(t.n, 5);
	pv_learn_kinds_order(&t, order);
	for (size_t i = 0; i < 5; i++)
		at[i] = t.k[order[i]].shape.n;
	/* a, b (10 each, a first by its shape), a2 (5), c (2), e (1) */
	ck_assert(at[0] == 3 && at[2] == 6 && at[3] == 5 && at[4] == 12);
	moved = pv_learn_kinds_nearest(&t, order, 3, near);
	ck_assert_uint_eq(t.k[order[near[3]]].shape.step[1], 14); /* c as b */
	ck_assert_uint_eq(near[4], 2);				  /* e as a2 */
	/* c's shares 1/5, 2/5, 2/5 against b's thirds: L1 4/15, half of that of its 10 requests
	 * moved; of 30 + 30 + 30 + 10 + 12 */
	ck_assert_double_eq_tol(moved, 10 * (4.0 / 15) / 2 / 112, 1e-9);
	/* none past, or none kept: nothing moved */
	ck_assert_double_eq(pv_learn_kinds_nearest(&t, order, 5, near), 0);
	ck_assert_double_eq(pv_learn_kinds_nearest(&t, order, 0, near), 0);
	pv_learn_kinds_release(&t);
}
END_TEST

/* ---- learn/user.c ---- */

/* An NTLM AUTHENTICATE message (MS-NLMP 2.2.1.3) for DOMAIN\user, after pre bytes of SPNEGO */
static size_t ntlm_auth(uint8_t *b, size_t pre, const char *dom, const char *user, bool unicode)
{
	uint8_t *m = b + pre;
	size_t at = 88, n;

	memset(b, 0x30, pre);
	memset(m, 0, 400);
	memcpy(m, "NTLMSSP", 8);
	m[8] = 3;
	m[60] = unicode ? 1 : 0;
	for (int f = 0; f < 2; f++) {
		const char *s = f ? user : dom;
		size_t fo = f ? 36 : 28, len = strlen(s) * (unicode ? 2 : 1);

		m[fo] = (uint8_t)len;
		m[fo + 2] = (uint8_t)len;
		m[fo + 4] = (uint8_t)at;
		for (size_t i = 0; s[i]; i++)
			m[at + i * (unicode ? 2 : 1)] = (uint8_t)s[i];
		at += len;
	}
	n = pre + at;
	return n;
}

START_TEST(users)
{
	uint8_t b[512];
	char id[80], id2[80];
	struct pv_learn_users t;
	long u;
	size_t n;

	n = ntlm_auth(b, 16, "LAB", "Alice", true);
	ck_assert_int_eq(pv_learn_ntlm_user(b, n, false, id, sizeof(id)), 1);
	ck_assert(!strncmp(id, "ntlm:", 5) && strlen(id) == 17);
	ck_assert_ptr_null(strstr(id, "alice"));
	/* kept as a name when asked */
	ck_assert_int_eq(pv_learn_ntlm_user(b, n, true, id2, sizeof(id2)), 1);
	ck_assert_str_eq(id2, "ntlm:lab\\alice");
	/* the same account in OEM characters and another case: the same user */
	n = ntlm_auth(b, 0, "lab", "ALICE", false);
	ck_assert_int_eq(pv_learn_ntlm_user(b, n, false, id2, sizeof(id2)), 1);
	ck_assert_str_eq(id, id2);
	n = ntlm_auth(b, 0, "LAB", "bob", true);
	ck_assert_int_eq(pv_learn_ntlm_user(b, n, false, id2, sizeof(id2)), 1);
	ck_assert_str_ne(id, id2);
	/* anonymous; not an AUTHENTICATE; a name outside the message */
	n = ntlm_auth(b, 0, "", "", true);
	ck_assert_int_eq(pv_learn_ntlm_user(b, n, false, id, sizeof(id)), 0);
	b[8] = 1;
	ck_assert_int_eq(pv_learn_ntlm_user(b, n, false, id, sizeof(id)), 0);
	n = ntlm_auth(b, 0, "LAB", "bob", true);
	b[36 + 4] = 250;
	ck_assert_int_eq(pv_learn_ntlm_user(b, n, false, id, sizeof(id)), -1);
	ck_assert_int_eq(
		pv_learn_ntlm_user((const uint8_t *)"a Kerberos token", 16, false, id, sizeof(id)),
		0);

	pv_learn_users_init(&t);
	u = pv_learn_users_get(&t, "addr:198.18.0.31", PV_LEARN_USER_ADDR);
	ck_assert_int_eq(u, 0);
	ck_assert_int_eq(pv_learn_users_get(&t, "ntlm:0123456789ab", PV_LEARN_USER_NTLM), 1);
	ck_assert_int_eq(pv_learn_users_get(&t, "addr:198.18.0.31", PV_LEARN_USER_ADDR), 0);
	pv_learn_user_request(&t.u[0], 10.0);
	pv_learn_user_request(&t.u[0], 10.5);
	pv_learn_user_request(&t.u[0], 12.5);
	ck_assert(t.u[0].requests == 3 && t.u[0].first == 10.0 && t.u[0].last == 12.5 &&
		  t.u[0].gaps.n == 2);
	/* logons again: user 0 logged on at 10, 40 and 70 s (two again in a minute: 120 an
	 * hour), user 1 once (none: left out, whatever the capture's length) */
	pv_learn_user_logon(&t.u[0], 10.0);
	pv_learn_user_logon(&t.u[0], 40.0);
	pv_learn_user_logon(&t.u[0], 70.0);
	pv_learn_user_logon(&t.u[1], 5.0);
	{
		double v[3];

		ck_assert_uint_eq(pv_learn_users_relogon_rates(&t, v), 1);
		ck_assert_double_eq_tol(v[0], 120.0, 1e-9);
		pv_learn_user_logon(&t.u[1], 5.0); /* two at the same time: no span */
		ck_assert_uint_eq(pv_learn_users_relogon_rates(&t, v), 1);
		pv_learn_user_logon(&t.u[1], 3605.0);
		ck_assert_uint_eq(pv_learn_users_relogon_rates(&t, v), 2);
		ck_assert_double_eq_tol(v[1], 2.0, 1e-9); /* two more in an hour */
		/* two logons a second apart at the start of an hour's work: one again an hour,
		 * not 3,600 (smbclient's first connection, then its session) */
		ck_assert_int_eq(pv_learn_users_get(&t, "ntlm:0123456789ac", PV_LEARN_USER_NTLM),
				 2);
		pv_learn_user_logon(&t.u[2], 100.0);
		pv_learn_user_request(&t.u[2], 100.0);
		pv_learn_user_logon(&t.u[2], 101.0);
		pv_learn_user_request(&t.u[2], 3700.0);
		ck_assert_uint_eq(pv_learn_users_relogon_rates(&t, v), 3);
		ck_assert_double_eq_tol(v[2], 1.0, 1e-9);
	}
	for (int i = 0; i < 3000; i++) {
		char k[32];

		snprintf(k, sizeof(k), "session:%x@x", i);
		ck_assert_int_eq(pv_learn_users_get(&t, k, PV_LEARN_USER_SESSION), i + 3);
	}
	ck_assert_uint_eq(t.n, 3003);
	pv_learn_users_release(&t);
}
END_TEST

/* ---- learn/learn.c: whole conversations ---- */

/* NetBIOS frame of b's bytes */
static void nb(struct pv_buf *out, const struct pv_buf *b)
{
	uint8_t h[4] = {0, (uint8_t)(b->len >> 16), (uint8_t)(b->len >> 8), (uint8_t)b->len};

	pv_buf_add(out, h, 4);
	pv_buf_add(out, b->data, b->len);
}

/* the bytes of stream as TCP segments of at most mss bytes from seq0 (the SYN's seq + 1) */
static void send_stream(struct pv_learn *l, bool to_srv, uint32_t seq0, const struct pv_buf *st,
			size_t mss, bool reverse)
{
	uint8_t f[2048];
	size_t nseg = (st->len + mss - 1) / mss;

	for (size_t k = 0; k < nseg; k++) {
		size_t i = reverse ? nseg - 1 - k : k;
		size_t len = st->len - i * mss < mss ? st->len - i * mss : mss;
		size_t n = eth4(f, false, to_srv ? 40000 : 445, to_srv ? 445 : 40000,
				seq0 + (uint32_t)(i * mss), 0x18, st->data + i * mss, len);

		pv_learn_frame(l, f, n, n, 1.0 + (double)k);
	}
}

static void syn(struct pv_learn *l, bool to_srv, uint32_t isn)
{
	uint8_t f[128];
	size_t n = eth4(f, false, to_srv ? 40000 : 445, to_srv ? 445 : 40000, isn,
			PV_CAPTURE_TCP_SYN, NULL, 0);

	pv_learn_frame(l, f, n, n, 0.5);
}

START_TEST(conversation)
{
	struct pv_buf req = PV_BUF_INIT, rsp = PV_BUF_INIT, one = PV_BUF_INIT, body = PV_BUF_INIT;
	struct pv_learn_counts c;
	struct pv_learn *l = pv_learn_begin(NULL, PV_CAPTURE_LINK_ETHERNET, &c);
	uint8_t f[256];
	size_t n;

	ck_assert_ptr_nonnull(l);
	/* the client: a compound (CREATE, QUERY_INFO, CLOSE), a READ that is never answered, a
	 * keep-alive, a WRITE of 5 bytes */
	compound(&one);
	nb(&req, &one);
	pv_buf_reset(&one);
	pv_buf_reset(&body);
	ck_assert_int_eq(smb2_read_enc(&body, SMB2_RELATED_FID, 0, 65536), 0);
	msg(&one, SMB2_READ, 13, 0, 0, &body, true);
	nb(&req, &one);
	pv_buf_add(&req, "\x85\x00\x00\x00", 4);
	pv_buf_reset(&one);
	pv_buf_reset(&body);
	ck_assert_int_eq(smb2_write_enc(&body, SMB2_RELATED_FID, 0, "hello", 5), 0);
	msg(&one, SMB2_WRITE, 14, 0, 0, &body, true);
	nb(&req, &one);
	/* the server: the CREATE answered, QUERY_INFO pending then answered, CLOSE answered, a
	 * lease break of its own, the WRITE answered, an answer to no request, an encrypted
	 * frame */
	pv_buf_reset(&body);
	pv_buf_addstr(&body, "\x09"); /* an error body, enough for counting */
	static const struct {
		uint16_t cmd;
		uint64_t mid;
		uint32_t flags, status;
	} ans[] = {{SMB2_CREATE, 10, 1, 0},
		   {SMB2_QUERY_INFO, 11, 3, 0x103},
		   {SMB2_QUERY_INFO, 11, 3, 0},
		   {SMB2_CLOSE, 12, 1, 0},
		   {SMB2_OPLOCK_BREAK, UINT64_MAX, 1, 0},
		   {SMB2_WRITE, 14, 1, 0xC000007Fu},
		   {SMB2_ECHO, 99, 1, 0}};
	for (size_t i = 0; i < sizeof(ans) / sizeof(ans[0]); i++) {
		pv_buf_reset(&one);
		msg(&one, ans[i].cmd, ans[i].mid, ans[i].flags, ans[i].status, &body, true);
		nb(&rsp, &one);
	}
	pv_buf_reset(&one);
	pv_buf_add(&one, "\xfdSMB", 4);
	pv_buf_addstr(&one, "0123456789012345678901234567890123456789012345678901234567890123");
	nb(&rsp, &one);

	syn(l, true, 5000);
	syn(l, false, 9000);
	/* the client's bytes in 100-byte segments, last first; the server's in order */
	send_stream(l, true, 5001, &req, 100, true);
	send_stream(l, false, 9001, &rsp, 64, false);
	/* a second connection begun before the capture, in mid-frame: its first bytes are the
	 * tail of a frame, then one whole frame (an ECHO) that must be found again */
	pv_buf_reset(&one);
	pv_buf_reset(&body);
	pv_buf_add(&body, "\x04\x00\x00\x00", 4);
	msg(&one, SMB2_ECHO, 77, 0, 0, &body, true);
	pv_buf_reset(&req);
	pv_buf_addstr(&req, "tail of an earlier frame");
	nb(&req, &one);
	n = eth4(f, false, 40001, 445, 123456, 0x18, req.data, req.len);
	pv_learn_frame(l, f, n, n, 9.0);
	pv_learn_end(l);

	ck_assert_uint_eq(c.conns, 2);
	ck_assert_uint_eq(c.conns_midway, 1);
	ck_assert_uint_eq(c.resyncs, 1);
	ck_assert_uint_eq(c.req[SMB2_CREATE], 1);
	ck_assert_uint_eq(c.req[SMB2_QUERY_INFO], 1);
	ck_assert_uint_eq(c.req[SMB2_CLOSE], 1);
	ck_assert_uint_eq(c.req[SMB2_READ], 1);
	ck_assert_uint_eq(c.req[SMB2_WRITE], 1);
	ck_assert_uint_eq(c.req[SMB2_ECHO], 1);
	ck_assert_uint_eq(c.disposition[3], 1);
	ck_assert_uint_eq(c.read_asked, 65536);
	ck_assert_uint_eq(c.written, 5);
	ck_assert_uint_eq(c.keepalives, 1);
	ck_assert_uint_eq(c.interim, 1);
	ck_assert_uint_eq(c.notifications, 1);
	ck_assert_uint_eq(c.matched, 4);	       /* CREATE, QUERY_INFO, CLOSE, WRITE */
	ck_assert_uint_eq(c.unmatched_ans, 1);	       /* the ECHO answer to no request */
	ck_assert_uint_eq(c.unanswered, 2);	       /* the READ, and the midway ECHO */
	ck_assert_uint_eq(c.errors, 1);		       /* DISK_FULL */
	ck_assert_uint_eq(c.resp[SMB2_QUERY_INFO], 2); /* interim and final */
	ck_assert_uint_eq(c.ans[SMB2_QUERY_INFO], 1);
	ck_assert_uint_eq(c.enc_frames, 1);
	ck_assert_uint_eq(c.enc_bytes, 68);
	ck_assert_uint_eq(c.malformed, 0);
	ck_assert_uint_eq(c.gap_bytes, 0);
	ck_assert(c.frames == c.tcp && c.not_tcp == 0 && c.bad_frames == 0);
	/* no logon captured: one user, by session and address, with its 6 requests */
	ck_assert_uint_eq(c.users.n, 1);
	ck_assert_str_eq(c.users.u[0].id, "session:1234@198.18.0.31");
	ck_assert(c.users.u[0].kind == PV_LEARN_USER_SESSION && c.users.u[0].requests == 6 &&
		  c.users.u[0].opens == 1 && c.users.u[0].logons == 0);
	ck_assert_uint_eq(c.read_sizes.n, 1);
	ck_assert_uint_eq(c.write_sizes.n, 1);
	ck_assert_uint_eq(c.open_times.n, 1); /* the compound's own CLOSE */
	pv_learn_counts_release(&c);
	pv_buf_release(&req, 0);
	pv_buf_release(&rsp, 0);
	pv_buf_release(&one, 0);
	pv_buf_release(&body, 0);
}
END_TEST

/* A segment lost in mid-frame: the frame counted, the next one found again */
START_TEST(lost_segment)
{
	struct pv_buf st = PV_BUF_INIT, one = PV_BUF_INIT, body = PV_BUF_INIT;
	struct pv_learn_counts c;
	struct pv_learn *l = pv_learn_begin(NULL, PV_CAPTURE_LINK_ETHERNET, &c);
	uint8_t f[2048];
	size_t n, cut;

	ck_assert_ptr_nonnull(l);
	pv_buf_add(&body, "\x04\x00\x00\x00", 4);
	for (uint64_t mid = 1; mid <= 3; mid++) {
		pv_buf_reset(&one);
		compound(&one);
		nb(&st, &one);
		pv_buf_reset(&one);
		msg(&one, SMB2_ECHO, 100 + mid, 0, 0, &body, true);
		nb(&st, &one);
	}
	syn(l, true, 0);
	/* bytes 1..40 of the second compound never captured */
	cut = st.len / 3;
	n = eth4(f, false, 40000, 445, 1, 0x18, st.data, cut + 10);
	pv_learn_frame(l, f, n, n, 1);
	n = eth4(f, false, 40000, 445, 1 + (uint32_t)cut + 50, 0x18, st.data + cut + 50,
		 st.len - cut - 50);
	pv_learn_frame(l, f, n, n, 2);
	pv_learn_end(l);
	ck_assert_uint_eq(c.gap_bytes, 40);
	ck_assert_uint_eq(c.gaps, 1);
	/* every ECHO counted: the hole was in a frame, the frames after it read */
	ck_assert_uint_eq(c.req[SMB2_ECHO], 3);
	ck_assert_uint_ge(c.req[SMB2_CREATE], 2);
	ck_assert_uint_eq(c.malformed, 0);
	pv_learn_counts_release(&c);
	pv_buf_release(&st, 0);
	pv_buf_release(&one, 0);
	pv_buf_release(&body, 0);
}
END_TEST

/* An NTLM logon names the user; its requests in two activities; a file open for 2 s */
START_TEST(logon)
{
	struct pv_buf body = PV_BUF_INIT, one = PV_BUF_INIT;
	struct pv_learn_counts c;
	struct pv_learn_opts o = {.gap = 1.0};
	struct pv_learn *l = pv_learn_begin(&o, PV_CAPTURE_LINK_ETHERNET, &c);
	uint8_t tok[512], f[2048], fid[16];
	uint32_t cseq = 1, sseq = 1;
	size_t n;
	char id[80];
	/* a request (to the server) or an answer at time t */
	struct pv_buf st = PV_BUF_INIT;
#define SEND(to_srv, t)                                                                            \
	do {                                                                                       \
		pv_buf_reset(&st);                                                                 \
		nb(&st, &one);                                                                     \
		n = eth4(f, false, (to_srv) ? 40000 : 445, (to_srv) ? 445 : 40000,                 \
			 (to_srv) ? cseq : sseq, 0x18, st.data, st.len);                           \
		*((to_srv) ? &cseq : &sseq) += (uint32_t)st.len;                                   \
		pv_learn_frame(l, f, n, n, (t));                                                   \
	} while (0)

	ck_assert_ptr_nonnull(l);
	syn(l, true, 0);
	syn(l, false, 0);
	/* SESSION_SETUP with LAB\carol's AUTHENTICATE, in session 0x77 (its second leg) */
	session_id = 0x77;
	n = ntlm_auth(tok, 20, "LAB", "carol", true);
	ck_assert_int_eq(smb2_session_setup_enc(&body, 1, tok, n, 0), 0);
	pv_buf_reset(&one);
	msg(&one, SMB2_SESSION_SETUP, 2, 0, 0, &body, true);
	SEND(true, 10.0);
	pv_buf_reset(&body);
	pv_buf_add(&body, "\x09\x00\x00\x00\x48\x00\x00\x00", 8);
	pv_buf_reset(&one);
	msg(&one, SMB2_SESSION_SETUP, 2, 1, 0, &body, true);
	SEND(false, 10.001);
	/* a CREATE at 10.1 answered with file id 42.., the CLOSE at 12.1: open 2 s; an ECHO
	 * at 20.0, a new activity (gap 1 s). It asks to read the attributes alone (and
	 * SYNCHRONIZE): a stat open, CREATE(STAT) */
	pv_buf_reset(&body);
	ck_assert_int_eq(smb2_create_enc(&body, &(struct smb2_create_req){.path = "f",
									  .access = 0x00100080u,
									  .disposition = 1}),
			 0);
	pv_buf_reset(&one);
	msg(&one, SMB2_CREATE, 10, 0, 0, &body, true);
	SEND(true, 10.1);
	memset(fid, 42, sizeof(fid));
	pv_buf_reset(&body);
	for (int i = 0; i < 88; i++)
		pv_buf_add(&body, i >= 64 && i < 80 ? "\x2a" : "\x00", 1);
	pv_buf_reset(&one);
	msg(&one, SMB2_CREATE, 10, 1, 0, &body, true);
	SEND(false, 10.102);
	pv_buf_reset(&body);
	ck_assert_int_eq(smb2_close_enc(&body, fid, 0), 0);
	pv_buf_reset(&one);
	msg(&one, SMB2_CLOSE, 11, 0, 0, &body, true);
	SEND(true, 12.102);
	/* a CREATE at 13.0 refused (not found): it opened nothing (a stat open too: refused all
	 * the same) */
	pv_buf_reset(&body);
	ck_assert_int_eq(smb2_create_enc(&body, &(struct smb2_create_req){.path = "g",
									  .access = 0x80u,
									  .disposition = 1}),
			 0);
	pv_buf_reset(&one);
	msg(&one, SMB2_CREATE, 20, 0, 0, &body, true);
	SEND(true, 13.0);
	pv_buf_reset(&body);
	pv_buf_addstr(&body, "\x09");
	pv_buf_reset(&one);
	msg(&one, SMB2_CREATE, 20, 1, 0xC0000034u, &body, true);
	SEND(false, 13.001);
	pv_buf_reset(&body);
	pv_buf_add(&body, "\x04\x00\x00\x00", 4);
	pv_buf_reset(&one);
	msg(&one, SMB2_ECHO, 12, 0, 0, &body, true);
	SEND(true, 20.0);
	/* and a LOGOFF at 25.0: the session lived 15 s from its logon */
	pv_buf_reset(&body);
	ck_assert_int_eq(smb2_logoff_enc(&body), 0);
	pv_buf_reset(&one);
	msg(&one, SMB2_LOGOFF, 13, 0, 0, &body, true);
	SEND(true, 25.0);
	pv_learn_end(l);
	session_id = 0x1234;

	ck_assert_uint_eq(c.logons, 1);
	ck_assert_uint_eq(c.users.n, 1);
	n = ntlm_auth(tok, 0, "lab", "CAROL", false);
	ck_assert_int_eq(pv_learn_ntlm_user(tok, n, false, id, sizeof(id)), 1);
	ck_assert_str_eq(c.users.u[0].id, id);
	ck_assert(c.users.u[0].kind == PV_LEARN_USER_NTLM && c.users.u[0].logons == 1 &&
		  c.users.u[0].requests == 5 && c.users.u[0].opens == 2);
	ck_assert(c.logoffs == 1 && c.still_on == 0 && c.session_times.n == 1);
	/* its rates over its own hours, from its first request to its last, not the capture's
	 * (which began before it) */
	ck_assert(c.users.u[0].first > c.t0 && c.users.u[0].last > c.users.u[0].first);
	ck_assert_double_eq_tol(c.user_hours, (c.users.u[0].last - c.users.u[0].first) / 3600,
				1e-12);
	ck_assert_double_eq_tol(c.req_per_user_hour[0], 5 / c.user_hours, 1e-6);
	ck_assert_double_eq_tol(c.logons_per_user_hour[0], 1 / c.user_hours, 1e-6);
	ck_assert_double_eq_tol(pv_learn_hist_quantile(&c.session_times, 0.5), 15.0, 15.0 * 0.13);
	ck_assert_uint_eq(c.open_times.n, 1);
	ck_assert_double_eq_tol(pv_learn_hist_quantile(&c.open_times, 0.5), 2.0, 2.0 * 0.13);
	ck_assert_uint_eq(c.still_open, 0);
	/* gaps 2.0, 0.9, 7.0 and 5.0 s, three over the 1 s set; but the file opened at 10.1 is
	 * open until its CLOSE 2 s later, under the 10 s an open file holds an activity
	 * together, and the CREATE refused at 13.0 holds nothing open: three activities; the
	 * refused CREATE is a kind's CREATE(REFUSED) */
	ck_assert(!c.gap_learned && c.activity_gap == 1.0);
	ck_assert_uint_eq(c.activities, 3);
	/* the gaps within the first activity, by the command of the request each follows: 2.0 s
	 * after the CREATE, 0.9 s after the CLOSE */
	ck_assert(c.act_within.n == 2 && c.act_within_after[5].n == 1 &&
		  c.act_within_after[6].n == 1);
	ck_assert_double_eq_tol(c.within_after[5][0], 2.0, 2.0 * 0.13);
	ck_assert_double_eq_tol(c.within_after[6][0], 0.9, 0.9 * 0.13);
	ck_assert_double_eq_tol(c.within_after_q[6].q[c.within_after_q[6].n - 1], 0.9, 0.9 * 0.13);
	/* the client's own time: the CREATE's answer at 10.102 to the CLOSE at 12.102 (2 s, over
	 * the gap, but within an activity: its file held open; what a replay waits there); the
	 * CREATE at 13.0, the ECHO and the LOGOFF came with the CLOSE unanswered, so none of them
	 * is timed */
	ck_assert_uint_eq(c.client_delays.n, 1);
	ck_assert_double_eq_tol(pv_learn_hist_quantile(&c.client_delays, 0.5), 2.0, 2.0 * 0.13);
	ck_assert_uint_eq(c.act_client.n, 1);
	ck_assert_double_eq_tol(c.client[0], 2.0, 2.0 * 0.13);
	ck_assert_uint_eq(c.client_q.n, PV_LEARN_THINK_LEVELS); /* one gap: no hole */
	ck_assert_double_eq_tol(c.client_q.q[0], 2.0, 2.0 * 0.13);
	ck_assert_double_eq(c.client_q.q[PV_LEARN_THINK_LEVELS - 1], c.client_q.q[0]);
	/* the think times: from an activity's last request to the next one's first, 0.9 s (12.102
	 * to 13.0) left out as under the gap, 7.0 s to the ECHO and 5.0 s to the LOGOFF */
	ck_assert_uint_eq(c.think_gaps.n, 2);
	ck_assert_double_eq_tol(c.think_q.q[0], 5.0, 5.0 * 0.13);
	ck_assert_double_eq_tol(c.think_q.q[c.think_q.n - 1], 7.0, 7.0 * 0.13);
	ck_assert_double_eq_tol(c.think[1], 7.0, 7.0 * 0.13);
	/* the gap set: the kinds in the same pass, one activity of each */
	ck_assert(c.has_kinds && c.kinds.n == 3 && c.kinds.other == 0);
	for (size_t i = 0; i < 3; i++) {
		char name[64];

		pv_learn_kind_name(&c.kinds.k[i].shape, name, sizeof(name));
		static const char *const want[] = {"CREATE(STAT) CLOSE CREATE(REFUSED)", "ECHO",
						   "LOGOFF"};

		ck_assert_str_eq(name, want[i]);
		ck_assert(c.kinds.k[i].count == 1 && c.kinds.k[i].requests == (i ? 1 : 3));
	}
	/* each kind's think time, after it: 7.0 s after the first (to the ECHO), 5.0 s after
	 * the ECHO (to the LOGOFF), none after the user's last */
	ck_assert_uint_eq(c.kinds.k[0].think.n, 1);
	ck_assert_double_eq_tol(pv_learn_hist_quantile(&c.kinds.k[0].think, 0.5), 7.0, 7.0 * 0.13);
	ck_assert_uint_eq(c.kinds.k[1].think.n, 1);
	ck_assert_double_eq_tol(pv_learn_hist_quantile(&c.kinds.k[1].think, 0.5), 5.0, 5.0 * 0.13);
	ck_assert_uint_eq(c.kinds.k[2].think.n, 0);
	pv_learn_counts_release(&c);
	pv_buf_release(&body, 0);
	pv_buf_release(&one, 0);
	pv_buf_release(&st, 0);
#undef SEND
}
END_TEST

/* A listing in two QUERY_DIRECTORYs: the gap between them is not one after a listing (a replay
 * makes a listing whole, and waits after its last request) */
START_TEST(listing_gaps)
{
	struct pv_buf body = PV_BUF_INIT, one = PV_BUF_INIT, st = PV_BUF_INIT;
	struct pv_learn_counts c;
	struct pv_learn_opts o = {.gap = 1.0};
	struct pv_learn *l = pv_learn_begin(&o, PV_CAPTURE_LINK_ETHERNET, &c);
	uint8_t f[2048], fid[16];
	uint32_t cseq = 1, sseq = 1;
	size_t n;
	static const uint16_t cmds[] = {SMB2_CREATE, SMB2_QUERY_DIRECTORY, SMB2_QUERY_DIRECTORY,
					SMB2_CLOSE};

	ck_assert_ptr_nonnull(l);
	memset(fid, 42, sizeof(fid));
	syn(l, true, 0);
	syn(l, false, 0);
	/* requests at 10.0, 10.2, 10.3 and 10.6 s, each answered 1 ms after it */
	for (unsigned i = 0; i < 4; i++) {
		double t = 10.0 + (i == 1 ? 0.2 : i == 2 ? 0.3 : i == 3 ? 0.6 : 0);

		pv_buf_reset(&body);
		if (cmds[i] == SMB2_CREATE)
			ck_assert_int_eq(
				smb2_create_enc(&body, &(struct smb2_create_req){.path = "d",
										 .access = 0x1u,
										 .disposition = 1}),
				0);
		else if (cmds[i] == SMB2_CLOSE)
			ck_assert_int_eq(smb2_close_enc(&body, fid, 0), 0);
		else
			ck_assert_int_eq(smb2_query_dir_enc(&body, fid, 1, 0, "*", 65536), 0);
		pv_buf_reset(&one);
		msg(&one, cmds[i], 10 + i, 0, 0, &body, true);
		pv_buf_reset(&st);
		nb(&st, &one);
		n = eth4(f, false, 40000, 445, cseq, 0x18, st.data, st.len);
		cseq += (uint32_t)st.len;
		pv_learn_frame(l, f, n, n, t);
		pv_buf_reset(&body);
		pv_buf_add(&body, "\x09\x00\x00\x00\x48\x00\x00\x00", 8);
		pv_buf_reset(&one);
		msg(&one, cmds[i], 10 + i, 1, i == 2 ? 0x80000006u : 0, &body, true);
		pv_buf_reset(&st);
		nb(&st, &one);
		n = eth4(f, false, 445, 40000, sseq, 0x18, st.data, st.len);
		sseq += (uint32_t)st.len;
		pv_learn_frame(l, f, n, n, t + 0.001);
	}
	pv_learn_end(l);
	ck_assert_uint_eq(c.req[SMB2_QUERY_DIRECTORY], 2);
	/* three gaps within the activity: 0.2 s after the CREATE, 0.3 s after the second
	 * QUERY_DIRECTORY, and the 0.1 s from the first to the second, left out by command */
	ck_assert_uint_eq(c.activities, 1);
	ck_assert_uint_eq(c.act_within.n, 3);
	ck_assert_uint_eq(c.act_within_after[SMB2_CREATE].n, 1);
	ck_assert_uint_eq(c.act_within_after[SMB2_QUERY_DIRECTORY].n, 1);
	ck_assert_double_eq_tol(
		pv_learn_hist_quantile(&c.act_within_after[SMB2_QUERY_DIRECTORY], 0.5), 0.3,
		0.3 * 0.13);
	pv_learn_counts_release(&c);
	pv_buf_release(&body, 0);
	pv_buf_release(&one, 0);
	pv_buf_release(&st, 0);
}
END_TEST

/* Sessions without end on one connection: users and sessions stop at their bounds, counted */
START_TEST(many_sessions)
{
	struct pv_buf body = PV_BUF_INIT, one = PV_BUF_INIT, st = PV_BUF_INIT;
	struct pv_learn_counts c;
	struct pv_learn *l = pv_learn_begin(NULL, PV_CAPTURE_LINK_ETHERNET, &c);
	uint8_t f[512];
	uint32_t seq = 1;
	const unsigned n = PV_LEARN_USERS_MAX + 1000;

	ck_assert_ptr_nonnull(l);
	syn(l, true, 0);
	pv_buf_add(&body, "\x04\x00\x00\x00", 4);
	for (unsigned i = 1; i <= n; i++) {
		size_t len;

		session_id = i;
		pv_buf_reset(&one);
		pv_buf_reset(&st);
		msg(&one, SMB2_ECHO, i, 0, 0, &body, true);
		nb(&st, &one);
		len = eth4(f, false, 40000, 445, seq, 0x18, st.data, st.len);
		seq += (uint32_t)st.len;
		pv_learn_frame(l, f, len, len, 1.0 + i * 1e-3);
	}
	session_id = 0x1234;
	pv_learn_end(l);
	ck_assert_uint_eq(c.req[SMB2_ECHO], n);
	ck_assert_uint_eq(c.users.n, PV_LEARN_USERS_MAX);
	ck_assert_uint_eq(c.users.refused, 1000);
	/* and the requests awaiting an answer on one connection: the rest counted, untracked */
	ck_assert_uint_eq(c.unanswered, PV_LEARN_PENDING_MAX);
	ck_assert_uint_eq(c.untracked, n - PV_LEARN_PENDING_MAX);
	pv_learn_counts_release(&c);
	pv_buf_release(&body, 0);
	pv_buf_release(&one, 0);
	pv_buf_release(&st, 0);
}
END_TEST

/* A client's ports used again: a SYN after the first connection carried bytes is a new one */
START_TEST(ports_again)
{
	struct pv_buf body = PV_BUF_INIT, one = PV_BUF_INIT, st = PV_BUF_INIT;
	struct pv_learn_counts c;
	struct pv_learn *l = pv_learn_begin(NULL, PV_CAPTURE_LINK_ETHERNET, &c);
	uint8_t f[512];
	size_t n;

	ck_assert_ptr_nonnull(l);
	pv_buf_add(&body, "\x04\x00\x00\x00", 4);
	msg(&one, SMB2_ECHO, 1, 0, 0, &body, true);
	nb(&st, &one);
	for (uint32_t isn = 0; isn < 2; isn++) {
		syn(l, true, isn * 5000000u);
		n = eth4(f, false, 40000, 445, isn * 5000000u + 1,
			 0x18 | (isn ? 0 : PV_CAPTURE_TCP_FIN), st.data, st.len);
		pv_learn_frame(l, f, n, n, 2.0 + isn);
	}
	pv_learn_end(l);
	ck_assert_uint_eq(c.conns, 2);
	ck_assert_uint_eq(c.req[SMB2_ECHO], 2);
	ck_assert_uint_eq(c.gap_bytes, 0);
	ck_assert_uint_eq(c.conns_midway, 0);
	pv_learn_counts_release(&c);
	pv_buf_release(&body, 0);
	pv_buf_release(&one, 0);
	pv_buf_release(&st, 0);
}
END_TEST

/* A compound that opens and closes a file: its answer's file id is not kept as open; a file
 * opened alone and never closed is still open at the end */
START_TEST(compound_close)
{
	struct pv_buf body = PV_BUF_INIT, one = PV_BUF_INIT, req = PV_BUF_INIT, rsp = PV_BUF_INIT;
	struct pv_learn_counts c;
	struct pv_learn *l = pv_learn_begin(NULL, PV_CAPTURE_LINK_ETHERNET, &c);

	ck_assert_ptr_nonnull(l);
	compound(&one); /* CREATE 10, QUERY_INFO 11, CLOSE 12 (related) */
	nb(&req, &one);
	pv_buf_reset(&body);
	ck_assert_int_eq(
		smb2_create_enc(&body, &(struct smb2_create_req){.path = "g", .disposition = 1}),
		0);
	pv_buf_reset(&one);
	msg(&one, SMB2_CREATE, 20, 0, 0, &body, true);
	nb(&req, &one);
	/* both CREATEs answered with a file id (88 bytes of body, FileId at 64) */
	pv_buf_reset(&body);
	for (int i = 0; i < 88; i++)
		pv_buf_add(&body, i >= 64 && i < 80 ? "\x07" : "\x00", 1);
	for (int k = 0; k < 2; k++) {
		pv_buf_reset(&one);
		body.data[64] = (char)(k + 1); /* two file ids */
		msg(&one, SMB2_CREATE, k ? 20 : 10, 1, 0, &body, true);
		nb(&rsp, &one);
	}
	syn(l, true, 0);
	syn(l, false, 0);
	send_stream(l, true, 1, &req, 1000, false);
	send_stream(l, false, 1, &rsp, 1000, false);
	pv_learn_end(l);
	ck_assert_uint_eq(c.still_open, 1);
	ck_assert_uint_eq(c.open_times.n, 1); /* the compound's CLOSE */
	pv_learn_counts_release(&c);
	pv_buf_release(&body, 0);
	pv_buf_release(&one, 0);
	pv_buf_release(&req, 0);
	pv_buf_release(&rsp, 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("learn");
	TCase *tc = tcase_create("learn");

	tcase_add_test(tc, stream_order);
	tcase_add_test(tc, stream_holes);
	tcase_add_test(tc, stream_bounds);
	tcase_add_test(tc, trace_frames);
	tcase_add_test(tc, frames);
	tcase_add_test(tc, hists);
	tcase_add_test(tc, sizes_value);
	tcase_add_test(tc, table);
	tcase_add_test(tc, users);
	tcase_add_test(tc, kinds);
	tcase_add_test(tc, kinds_depths);
	tcase_add_test(tc, kinds_nearest);
	tcase_add_test(tc, conversation);
	tcase_add_test(tc, lost_segment);
	tcase_add_test(tc, logon);
	tcase_add_test(tc, listing_gaps);
	tcase_add_test(tc, many_sessions);
	tcase_add_test(tc, ports_again);
	tcase_add_test(tc, compound_close);
	suite_add_tcase(s, tc);
	return pv_unit_run(s);
}
