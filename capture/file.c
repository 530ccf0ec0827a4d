/* capture/file.c: a capture file read with libpcap (see capture/capture.h). libpcap reads both pcap
 * and pcapng, checks each record's lengths against the file's snapshot length, and says where a
 * file is cut. */
#include "capture/capture.h"

#include "util/err.h"

#include <errno.h>
#include <pcap/pcap.h>
#include <stdlib.h>
#include <string.h>

struct pv_capture {
	pcap_t *p;
	int link; /* PV_CAPTURE_LINK_* */
	char path[512];
	unsigned long frames;
};

/* libpcap's DLT_ values for the link types read, as the LINKTYPE_ of the format */
static int link_of(int dlt)
{
	switch (dlt) {
	case DLT_NULL:
		return PV_CAPTURE_LINK_NULL;
	case DLT_EN10MB:
		return PV_CAPTURE_LINK_ETHERNET;
	case DLT_RAW:
#ifdef DLT_IPV4
	case DLT_IPV4:
	case DLT_IPV6:
#endif
		return PV_CAPTURE_LINK_RAW;
	case DLT_LINUX_SLL:
		return PV_CAPTURE_LINK_SLL;
#ifdef DLT_LINUX_SLL2
	case DLT_LINUX_SLL2:
		return PV_CAPTURE_LINK_SLL2;
#endif
	default:
		return -1;
	}
}

int pv_capture_open(const char *path, struct pv_capture **out)
{
	FILE *f;

	*out = NULL;
	/* opened here, so that a file that is not there or not readable says so as such */
	if (!(f = fopen(path, "rb")))
		return pv_error(errno == ENOENT || errno == EACCES ? PV_ECONFIG : PV_EIO,
				"cannot open the capture %s: %s", path, strerror(errno));
	return pv_capture_open_file(f, path, out);
}

int pv_capture_open_file(FILE *f, const char *path, struct pv_capture **out)
{
	char err[PCAP_ERRBUF_SIZE] = "";
	struct pv_capture *c;
	int dlt;

	*out = NULL;
	if (!(c = calloc(1, sizeof(*c)))) {
		fclose(f);
		return pv_error(PV_EIO, "out of memory");
	}
	snprintf(c->path, sizeof(c->path), "%s", path);
	c->p = pcap_fopen_offline_with_tstamp_precision(f, PCAP_TSTAMP_PRECISION_MICRO, err);
	if (!c->p) {
		fclose(f);
		free(c);
		return pv_error(PV_ECONFIG,
				"%s is not a capture provision can read (%s); give a pcap or "
				"pcapng file, as tcpdump -w or Wireshark writes",
				path, err[0] ? err : "unknown format");
	}
	dlt = pcap_datalink(c->p);
	if ((c->link = link_of(dlt)) < 0) {
		const char *name = pcap_datalink_val_to_name(dlt);

		pv_capture_close(c);
		return pv_error(PV_ECONFIG,
				"%s has link type %s (%d), which provision does not read: capture "
				"on an Ethernet or loopback interface, or with tcpdump -i any",
				path, name ? name : "unknown", dlt);
	}
	*out = c;
	return PV_OK;
}

int pv_capture_link(const struct pv_capture *c)
{
	return c->link;
}

int pv_capture_next(struct pv_capture *c, const uint8_t **p, size_t *caplen, size_t *wirelen,
		    double *t)
{
	struct pcap_pkthdr *h;
	const u_char *d;
	int r = pcap_next_ex(c->p, &h, &d);

	if (r == PCAP_ERROR_BREAK)
		return 0;
	if (r != 1) {
		pv_error(PV_ECONFIG, "%s is damaged after frame %lu: %s", c->path, c->frames,
			 pcap_geterr(c->p));
		return -1;
	}
	c->frames++;
	*p = d;
	*caplen = h->caplen;
	*wirelen = h->len;
	*t = (double)h->ts.tv_sec + (double)h->ts.tv_usec / 1e6;
	return 1;
}

void pv_capture_close(struct pv_capture *c)
{
	if (!c)
		return;
	if (c->p)
		pcap_close(c->p); /* closes the FILE too */
	free(c);
}
