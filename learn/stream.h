/* learn/stream.h: one direction of a captured TCP connection put back in order. Segments come
 * as the capture has them, reordered, sent again, overlapping, or missing; the bytes go out in
 * order to data(), and what was never seen goes out as its length to gap(), so that the reader
 * above knows where it lost step. Out-of-order segments are held in a bounded buffer: when it
 * is full, or at the end, what is missing before them is given up as a gap. Pure logic. */
#ifndef PV_LEARN_STREAM_H
#define PV_LEARN_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* At most this many bytes, and segments, held out of order in one direction. */
#define PV_LEARN_STREAM_HOLD_MAX  (1u << 20)
#define PV_LEARN_STREAM_HOLD_SEGS 512u

struct pv_learn_stream_seg;

struct pv_learn_stream {
	bool synced;	   /* next is known (a SYN seen, or the first data) */
	bool began_midway; /* its SYN was not captured: the first bytes are in mid-message */
	uint32_t next;	   /* the sequence number of the next byte in order */
	bool has_fin;	   /* a FIN seen: it takes the sequence number fin */
	uint32_t fin;
	struct pv_learn_stream_seg *held;
	size_t nheld, held_bytes;
	uint64_t bytes;		/* bytes given in order (gaps included) */
	uint64_t gap_bytes;	/* of them never seen */
	uint64_t gaps;		/* how many times bytes were given up */
	uint64_t again_bytes;	/* bytes that came again (retransmitted or overlapping) */
	uint64_t refused_bytes; /* bytes not held: out of memory */
	void (*data)(void *arg, const uint8_t *p, size_t len);
	void (*gap)(void *arg, size_t len);
	void *arg;
};

void pv_learn_stream_init(struct pv_learn_stream *s, void (*data)(void *, const uint8_t *, size_t),
			  void (*gap)(void *, size_t), void *arg);
/* A segment of this direction: its sequence number, TCP flags, the len bytes captured of its
 * wire bytes of payload (wire > len when the frame was cut by the snapshot length: the rest
 * is a gap). */
void pv_learn_stream_seg(struct pv_learn_stream *s, uint32_t seq, uint8_t flags, const uint8_t *p,
			 size_t len, size_t wire);
/* The other direction acknowledged every byte of this one before ack (its ACK number): bytes
 * before it that the capture does not hold reached the peer and will never come again, so
 * they are given up as a gap at once and what was held after them given out, instead of
 * waiting for the buffer to fill (which would give a request out after its answer). */
void pv_learn_stream_acked(struct pv_learn_stream *s, uint32_t ack);
/* The end of the capture or of the connection: what is held is given out, the holes before
 * it as gaps. */
void pv_learn_stream_end(struct pv_learn_stream *s);
void pv_learn_stream_release(struct pv_learn_stream *s);

#endif
