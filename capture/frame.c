/* capture/frame.c: a captured frame taken apart down to its TCP segment (see capture/capture.h):
 * the link layer (Ethernet with VLAN tags, Linux cooked v1 and v2, BSD loopback, raw IP), IPv4 and
 * IPv6 (its extension headers skipped), TCP. Every length a header states is checked against
 * the bytes captured and against the IP packet's own length (Ethernet pads short frames). */
#include "capture/capture.h"

#include <stdio.h>
#include <string.h>

static uint16_t be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

bool pv_capture_link_known(int link)
{
	return link == PV_CAPTURE_LINK_NULL || link == PV_CAPTURE_LINK_ETHERNET ||
	       link == PV_CAPTURE_LINK_RAW || link == PV_CAPTURE_LINK_SLL ||
	       link == PV_CAPTURE_LINK_SLL2;
}

static enum pv_capture_what bad(char *why, size_t whylen, const char *fmt, size_t a, size_t b)
{
	snprintf(why, whylen, fmt, a, b);
	return PV_CAPTURE_BAD;
}

/* The TCP segment at p (caplen bytes captured of the IP payload's wire bytes). */
static enum pv_capture_what tcp(const uint8_t *p, size_t caplen, size_t wire,
				struct pv_capture_seg *s, char *why, size_t whylen)
{
	size_t hl;

	if (caplen < 20)
		return bad(why, whylen, "a TCP header cut at %zu bytes of %zu", caplen, 20);
	hl = (size_t)(p[12] >> 4) * 4;
	if (hl < 20 || hl > wire)
		return bad(why, whylen, "a TCP header of %zu bytes in a segment of %zu", hl, wire);
	if (hl > caplen)
		return bad(why, whylen, "a TCP header of %zu bytes cut at %zu", hl, caplen);
	s->sport = be16(p);
	s->dport = be16(p + 2);
	s->seq = be32(p + 4);
	s->ack = be32(p + 8);
	s->flags = p[13];
	s->data = p + hl;
	s->len = caplen - hl;
	s->wire = wire - hl;
	return PV_CAPTURE_TCP;
}

static enum pv_capture_what ipv4(const uint8_t *p, size_t caplen, size_t wirelen,
				 struct pv_capture_seg *s, char *why, size_t whylen)
{
	size_t hl, total;

	if (caplen < 20)
		return bad(why, whylen, "an IPv4 header cut at %zu bytes of %zu", caplen, 20);
	hl = (size_t)(p[0] & 0x0f) * 4;
	total = be16(p + 2);
	if (hl < 20 || total < hl || total > wirelen)
		return bad(why, whylen, "an IPv4 packet of %zu bytes in a frame of %zu", total,
			   wirelen);
	if (hl > caplen)
		return bad(why, whylen, "an IPv4 header of %zu bytes cut at %zu", hl, caplen);
	if ((be16(p + 6) & 0x3fff) != 0) /* more fragments, or an offset */
		return PV_CAPTURE_FRAGMENT;
	if (p[9] != 6)
		return PV_CAPTURE_NOT_TCP;
	memset(s->src, 0, 10);
	memset(s->src + 10, 0xff, 2);
	memcpy(s->src + 12, p + 12, 4);
	memset(s->dst, 0, 10);
	memset(s->dst + 10, 0xff, 2);
	memcpy(s->dst + 12, p + 16, 4);
	if (caplen > total)
		caplen = total; /* the link layer's padding is not the segment's */
	return tcp(p + hl, caplen - hl, total - hl, s, why, whylen);
}

static enum pv_capture_what ipv6(const uint8_t *p, size_t caplen, size_t wirelen,
				 struct pv_capture_seg *s, char *why, size_t whylen)
{
	size_t at = 40, total;
	uint8_t next;

	if (caplen < 40)
		return bad(why, whylen, "an IPv6 header cut at %zu bytes of %zu", caplen, 40);
	total = 40 + (size_t)be16(p + 4);
	if (total > wirelen)
		return bad(why, whylen, "an IPv6 packet of %zu bytes in a frame of %zu", total,
			   wirelen);
	next = p[6];
	/* the extension headers: hop-by-hop, routing, destination options (each its length in
	 * 8-byte units after the first 8); a fragment header ends it */
	for (int i = 0; i < 8 && (next == 0 || next == 43 || next == 60 || next == 44); i++) {
		if (next == 44)
			return PV_CAPTURE_FRAGMENT;
		if (at + 8 > caplen || at + 8 > total)
			return bad(why, whylen, "an IPv6 extension header cut at %zu bytes of %zu",
				   caplen, at + 8);
		next = p[at];
		at += 8 + (size_t)p[at + 1] * 8;
	}
	if (at > total)
		return bad(why, whylen, "IPv6 extension headers of %zu bytes in a packet of %zu",
			   at, total);
	if (next != 6)
		return PV_CAPTURE_NOT_TCP;
	if (at > caplen)
		return bad(why, whylen, "IPv6 extension headers of %zu bytes cut at %zu", at,
			   caplen);
	memcpy(s->src, p + 8, 16);
	memcpy(s->dst, p + 24, 16);
	if (caplen > total)
		caplen = total;
	return tcp(p + at, caplen - at, total - at, s, why, whylen);
}

/* The IP packet at p by its EtherType (or version, for 0) */
static enum pv_capture_what ip(unsigned type, const uint8_t *p, size_t caplen, size_t wirelen,
			       struct pv_capture_seg *s, char *why, size_t whylen)
{
	if (type == 0 && caplen > 0)
		type = (p[0] >> 4) == 4 ? 0x0800 : (p[0] >> 4) == 6 ? 0x86dd : 1;
	if (type == 0x0800)
		return ipv4(p, caplen, wirelen, s, why, whylen);
	if (type == 0x86dd)
		return ipv6(p, caplen, wirelen, s, why, whylen);
	return PV_CAPTURE_NOT_TCP;
}

enum pv_capture_what pv_capture_frame(int link, const uint8_t *p, size_t caplen, size_t wirelen,
				      struct pv_capture_seg *seg, char *why, size_t whylen)
{
	size_t at = 0;
	unsigned type = 0;

	if (caplen > wirelen)
		wirelen = caplen;
	switch (link) {
	case PV_CAPTURE_LINK_ETHERNET:
		if (caplen < 14)
			return bad(why, whylen, "an Ethernet header cut at %zu bytes of %zu",
				   caplen, 14);
		type = be16(p + 12);
		at = 14;
		for (int i = 0; i < 2 && (type == 0x8100 || type == 0x88a8); i++) {
			if (caplen < at + 4)
				return bad(why, whylen, "a VLAN tag cut at %zu bytes of %zu",
					   caplen, at + 4);
			type = be16(p + at + 2);
			at += 4;
		}
		if (type != 0x0800 && type != 0x86dd)
			return PV_CAPTURE_NOT_TCP;
		break;
	case PV_CAPTURE_LINK_SLL:
		if (caplen < 16)
			return bad(why, whylen, "a Linux cooked header cut at %zu bytes of %zu",
				   caplen, 16);
		type = be16(p + 14);
		at = 16;
		if (type != 0x0800 && type != 0x86dd)
			return PV_CAPTURE_NOT_TCP;
		break;
	case PV_CAPTURE_LINK_SLL2:
		if (caplen < 20)
			return bad(why, whylen, "a Linux cooked v2 header cut at %zu bytes of %zu",
				   caplen, 20);
		type = be16(p);
		at = 20;
		if (type != 0x0800 && type != 0x86dd)
			return PV_CAPTURE_NOT_TCP;
		break;
	case PV_CAPTURE_LINK_NULL: {
		uint32_t fam;

		if (caplen < 4)
			return bad(why, whylen, "a loopback header cut at %zu bytes of %zu", caplen,
				   4);
		/* the capturing host's byte order: either */
		fam = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
		      (uint32_t)p[3] << 24;
		if (fam > 0xffff)
			fam = be32(p);
		at = 4;
		type = fam == 2						    ? 0x0800
		       : (fam == 10 || fam == 24 || fam == 28 || fam == 30) ? 0x86dd
									    : 1;
		if (type == 1)
			return PV_CAPTURE_NOT_TCP;
		break;
	}
	case PV_CAPTURE_LINK_RAW:
		break;
	default:
		snprintf(why, whylen, "link type %d is not read", link);
		return PV_CAPTURE_BAD;
	}
	return ip(type, p + at, caplen - at, wirelen - at, seg, why, whylen);
}
