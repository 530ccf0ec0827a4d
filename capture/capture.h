/* capture/capture.h: packet captures (pcap and pcapng files, as tcpdump -w and Wireshark write
 * them) read with libpcap, the one module that links it, and each frame taken apart down to its TCP
 * segment (capture/frame.c: pure logic, unit-tested). */
#ifndef PV_CAPTURE_PCAP_H
#define PV_CAPTURE_PCAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* The link types provision reads (LINKTYPE_* of the pcap format). */
#define PV_CAPTURE_LINK_NULL	 0   /* BSD loopback: a 4-byte address family */
#define PV_CAPTURE_LINK_ETHERNET 1   /* Ethernet II, with 802.1Q tags */
#define PV_CAPTURE_LINK_RAW	 101 /* raw IPv4 or IPv6 */
#define PV_CAPTURE_LINK_SLL	 113 /* Linux cooked capture (tcpdump -i any) */
#define PV_CAPTURE_LINK_SLL2	 276 /* Linux cooked capture v2 */

/* A TCP segment, its addresses as IPv4 mapped into IPv6 where they are IPv4. */
struct pv_capture_seg {
	uint8_t src[16], dst[16];
	uint16_t sport, dport;
	uint32_t seq, ack;
	uint8_t flags; /* TCP's: FIN 0x01, SYN 0x02, RST 0x04, ACK 0x10 */
	const uint8_t *data;
	size_t len;  /* the payload's bytes in the capture */
	size_t wire; /* the payload's bytes on the wire (more than len when the frame was cut) */
	double t;    /* seconds since the epoch */
};
#define PV_CAPTURE_TCP_FIN 0x01u
#define PV_CAPTURE_TCP_SYN 0x02u
#define PV_CAPTURE_TCP_RST 0x04u

enum pv_capture_what {
	PV_CAPTURE_TCP,	    /* a TCP segment: seg filled */
	PV_CAPTURE_NOT_TCP, /* IP without TCP, or not IP at all */
	PV_CAPTURE_BAD,	    /* a header that does not fit its frame (why says which) */
	PV_CAPTURE_FRAGMENT /* an IP fragment, which provision does not put together */
};

/* The frame (caplen bytes of a frame of wirelen) of link type link, taken apart. */
enum pv_capture_what pv_capture_frame(int link, const uint8_t *p, size_t caplen, size_t wirelen,
				      struct pv_capture_seg *seg, char *why, size_t whylen);
/* Whether provision reads the link type. */
bool pv_capture_link_known(int link);

/* ---- reading a file (capture/file.c) ---- */
struct pv_capture;
/* The capture at path, pcap or pcapng: PV_OK, or PV_ECONFIG when it is not one or its link
 * type is not read (the message names it and what provision reads), PV_EIO when it cannot be
 * opened. */
int pv_capture_open(const char *path, struct pv_capture **out);
/* The same over an open file f (named name in messages), which the capture then owns: it is
 * closed with it, or at once when it is refused. */
int pv_capture_open_file(FILE *f, const char *name, struct pv_capture **out);
int pv_capture_link(const struct pv_capture *c);
/* The next frame: 1 with it, 0 at the end, -1 (PV_ECONFIG's message set) when the file is
 * cut or damaged there. The bytes live until the next call. */
int pv_capture_next(struct pv_capture *c, const uint8_t **p, size_t *caplen, size_t *wirelen,
		    double *t);
void pv_capture_close(struct pv_capture *c);

#endif
