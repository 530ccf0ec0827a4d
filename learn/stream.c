/* learn/stream.c: TCP reassembly of one direction (see learn/stream.h). Sequence numbers are
 * compared modulo 2^32 (RFC 793's arithmetic): a before b when (int32_t)(a - b) < 0. */
#include "learn/stream.h"

#include "capture/capture.h"

#include <stdlib.h>
#include <string.h>

struct pv_learn_stream_seg {
	uint32_t seq;
	size_t len, wire; /* bytes held, bytes on the wire (the rest cut by the snapshot) */
	uint8_t *p;
};

static int32_t seq_diff(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b);
}

void pv_learn_stream_init(struct pv_learn_stream *s, void (*data)(void *, const uint8_t *, size_t),
			  void (*gap)(void *, size_t), void *arg)
{
	memset(s, 0, sizeof(*s));
	s->data = data;
	s->gap = gap;
	s->arg = arg;
}

/* The FIN, once every byte before it was given: it takes a sequence number of its own (the
 * peer acknowledges it), not a byte. */
static void past_fin(struct pv_learn_stream *s)
{
	if (s->has_fin && s->next == s->fin) {
		s->next++;
		s->has_fin = false;
	}
}

static void give_gap(struct pv_learn_stream *s, size_t n)
{
	if (!n)
		return;
	s->gap_bytes += n;
	s->bytes += n;
	s->next += (uint32_t)n;
	s->gap(s->arg, n);
}

/* The segment at seq (len bytes of its wire bytes) once nothing is missing before it: the
 * part already given is dropped, the rest given. */
static void give(struct pv_learn_stream *s, uint32_t seq, const uint8_t *p, size_t len, size_t wire)
{
	int32_t d = seq_diff(seq, s->next);
	size_t skip = d < 0 ? (size_t) - (int64_t)d : 0;

	if (skip >= wire) {
		s->again_bytes += wire;
		return;
	}
	s->again_bytes += skip;
	if (skip < len) {
		s->data(s->arg, p + skip, len - skip);
		s->bytes += len - skip;
		s->next += (uint32_t)(len - skip);
		skip = len;
	}
	give_gap(s, wire - skip);
}

/* Give every held segment that nothing is missing before any more. */
static void drain(struct pv_learn_stream *s)
{
	bool more = true;

	while (more) {
		more = false;
		for (size_t i = 0; i < s->nheld; i++) {
			struct pv_learn_stream_seg g = s->held[i];

			if (seq_diff(g.seq, s->next) > 0)
				continue;
			s->held[i] = s->held[--s->nheld];
			s->held_bytes -= g.len;
			give(s, g.seq, g.p, g.len, g.wire);
			free(g.p);
			past_fin(s);
			more = true;
			break;
		}
	}
}

/* Give up the bytes before the earliest held segment (a gap), then what follows it. */
static void skip_hole(struct pv_learn_stream *s)
{
	size_t first = 0;

	if (!s->nheld)
		return;
	for (size_t i = 1; i < s->nheld; i++)
		if (seq_diff(s->held[i].seq, s->held[first].seq) < 0)
			first = i;
	if (seq_diff(s->held[first].seq, s->next) > 0) {
		s->gaps++;
		give_gap(s, (size_t)seq_diff(s->held[first].seq, s->next));
	}
	drain(s);
	past_fin(s);
}

static void hold(struct pv_learn_stream *s, uint32_t seq, const uint8_t *p, size_t len, size_t wire)
{
	struct pv_learn_stream_seg *h;

	while (s->nheld && (s->nheld >= PV_LEARN_STREAM_HOLD_SEGS ||
			    s->held_bytes + len > PV_LEARN_STREAM_HOLD_MAX))
		skip_hole(s);
	if (seq_diff(seq, s->next) <= 0) { /* the hole closed as it was given up */
		give(s, seq, p, len, wire);
		drain(s);
		return;
	}
	if (len > PV_LEARN_STREAM_HOLD_MAX)
		len = PV_LEARN_STREAM_HOLD_MAX; /* the rest: a gap when it is given */
	if (!(s->nheld % 16)) {
		h = realloc(s->held, (s->nheld + 16) * sizeof(*h));
		if (!h) {
			s->refused_bytes += wire;
			return;
		}
		s->held = h;
	}
	h = &s->held[s->nheld];
	h->seq = seq;
	h->len = len;
	h->wire = wire;
	h->p = len ? malloc(len) : NULL;
	if (len && !h->p) {
		s->refused_bytes += wire;
		return;
	}
	if (len)
		memcpy(h->p, p, len);
	s->nheld++;
	s->held_bytes += len;
}

void pv_learn_stream_seg(struct pv_learn_stream *s, uint32_t seq, uint8_t flags, const uint8_t *p,
			 size_t len, size_t wire)
{
	if (len > wire)
		len = wire;
	if (!s->synced) {
		s->synced = true;
		if (flags & PV_CAPTURE_TCP_SYN) {
			s->next = seq + 1;
			return;
		}
		s->began_midway = true;
		s->next = seq;
	}
	if (flags & PV_CAPTURE_TCP_SYN) { /* a SYN sent again, or one with data (TCP Fast Open) */
		if (seq_diff(seq + 1, s->next) > 0 && !s->bytes)
			s->next = seq + 1;
		seq++;
	}
	if (flags & PV_CAPTURE_TCP_FIN) {
		s->has_fin = true;
		s->fin = seq + (uint32_t)wire;
	}
	if (wire) {
		if (seq_diff(seq, s->next) <= 0) {
			give(s, seq, p, len, wire);
			drain(s);
		} else {
			hold(s, seq, p, len, wire);
		}
	}
	past_fin(s);
}

void pv_learn_stream_acked(struct pv_learn_stream *s, uint32_t ack)
{
	if (!s->synced)
		return;
	while (seq_diff(ack, s->next) > 0) {
		size_t first = 0;
		int32_t d;

		if (!s->nheld) { /* nothing held: the bytes up to ack are gone */
			s->gaps++;
			give_gap(s, (size_t)seq_diff(ack, s->next));
			past_fin(s);
			return;
		}
		for (size_t i = 1; i < s->nheld; i++)
			if (seq_diff(s->held[i].seq, s->held[first].seq) < 0)
				first = i;
		d = seq_diff(s->held[first].seq, s->next);
		if (d > 0 && seq_diff(ack, s->held[first].seq) < 0) {
			/* the hole ends at ack, before what is held */
			s->gaps++;
			give_gap(s, (size_t)seq_diff(ack, s->next));
			past_fin(s);
			return;
		}
		skip_hole(s);
	}
}

void pv_learn_stream_end(struct pv_learn_stream *s)
{
	while (s->nheld)
		skip_hole(s);
}

void pv_learn_stream_release(struct pv_learn_stream *s)
{
	for (size_t i = 0; i < s->nheld; i++)
		free(s->held[i].p);
	free(s->held);
	s->held = NULL;
	s->nheld = s->held_bytes = 0;
}
