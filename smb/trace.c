/* smb/trace.c: SMB2 frames as a capture holds them, decoded through the codec's reader (see
 * smb/trace.h). Offsets of the bodies are those of MS-SMB2 2.2.13 (CREATE), 2.2.19-2.2.21
 * (READ, WRITE), 2.2.31 (IOCTL), 2.2.33 (QUERY_DIRECTORY), 2.2.35 (CHANGE_NOTIFY), 2.2.37 and
 * 2.2.39 (QUERY_INFO, SET_INFO). */
#include "smb/trace.h"

#include "smb/smb2.h"

#include <stdio.h>
#include <string.h>

enum pv_smb_trace_kind pv_smb_trace_kind(const uint8_t *p, size_t len)
{
	if (len < 4 || memcmp(p + 1, "SMB", 3) != 0)
		return PV_SMB_TRACE_OTHER;
	switch (p[0]) {
	case 0xfe:
		return PV_SMB_TRACE_SMB2;
	case 0xfd:
		return PV_SMB_TRACE_ENCRYPTED;
	case 0xfc:
		return PV_SMB_TRACE_COMPRESSED;
	case 0xff:
		return PV_SMB_TRACE_SMB1;
	default:
		return PV_SMB_TRACE_OTHER;
	}
}

const char *pv_smb_trace_cmd_name(uint16_t cmd)
{
	return smb2_cmd_name(cmd);
}

/* A request's name (CREATE's, TREE_CONNECT's path, QUERY_DIRECTORY's pattern) from its
 * offset (from the header) and length at n's place into m->name, where it is whole in the
 * bytes kept and UTF-16 long; its length as the request says it. */
static uint16_t name_at(struct pv_smb_trace_msg *m, struct smb2_rd *n, struct smb2_rd *hdr)
{
	struct smb2_rd nb;
	uint16_t off = smb2_rd_u16(n), len = smb2_rd_u16(n);

	if (!n->bad && off >= SMB2_HDR && !(len & 1) &&
	    smb2_rd_span(hdr, off, len, "the name", &nb) == 0) {
		m->name = nb.p;
		m->namelen = nb.len;
	}
	return len;
}

/* The fields of a body (b: the bytes after the header that are in the frame; hdr: the
 * message from its header on, for the offsets that count from there). */
static void body(struct pv_smb_trace_msg *m, struct smb2_rd *b, struct smb2_rd *hdr)
{
	struct smb2_rd r = *b;

	if (m->cmd == SMB2_SESSION_SETUP &&
	    (!m->response || m->status == ST_OK || m->status == ST_MORE_PROCESSING)) {
		struct smb2_rd sb;
		uint16_t off, len;

		smb2_rd_seek(&r, m->response ? 4 : 12);
		off = smb2_rd_u16(&r);
		len = smb2_rd_u16(&r);
		/* offsets count from the header, 64 bytes before the body */
		if (!r.bad && off >= SMB2_HDR &&
		    smb2_rd_span(hdr, off, len, "the security buffer", &sb) == 0) {
			m->sec = sb.p;
			m->seclen = sb.len;
		}
		r.bad = false;
	}
	if (m->response) {
		if (m->cmd == SMB2_READ &&
		    (m->status == ST_OK || m->status == ST_BUFFER_OVERFLOW)) {
			smb2_rd_seek(&r, 4);
			m->got = smb2_rd_u32(&r);
		}
		if (m->cmd == SMB2_CREATE && m->status == ST_OK) {
			const uint8_t *f;

			smb2_rd_seek(&r, 4);
			m->action = smb2_rd_u32(&r);
			smb2_rd_seek(&r, 48);
			m->eof = smb2_rd_u64(&r);
			m->attrs = smb2_rd_u32(&r);
			m->has_attrs = !r.bad;
			smb2_rd_seek(&r, 64);
			if ((f = smb2_rd_bytes(&r, 16))) {
				memcpy(m->fid, f, 16);
				m->has_fid = true;
			}
		}
		if (m->cmd == SMB2_QUERY_DIRECTORY && m->status == ST_OK) {
			struct smb2_rd ob;
			uint16_t off;
			uint32_t olen;

			smb2_rd_seek(&r, 2);
			off = smb2_rd_u16(&r);
			olen = smb2_rd_u32(&r);
			/* a buffer kept in part is read up to the cut */
			if (!r.bad && off >= SMB2_HDR && off < hdr->len) {
				size_t have = hdr->len - off < olen ? hdr->len - off : olen;

				if (smb2_rd_span(hdr, off, have, "the listing", &ob) == 0) {
					m->out = ob.p;
					m->outlen = ob.len;
				}
			}
		}
		m->body_cut = r.bad;
		return;
	}
	if (m->cmd == SMB2_CLOSE || m->cmd == SMB2_QUERY_DIRECTORY || m->cmd == SMB2_WRITE ||
	    m->cmd == SMB2_SET_INFO || m->cmd == SMB2_CHANGE_NOTIFY) {
		const uint8_t *f;

		smb2_rd_seek(&r, m->cmd == SMB2_WRITE || m->cmd == SMB2_SET_INFO ? 16 : 8);
		if ((f = smb2_rd_bytes(&r, 16))) {
			memcpy(m->fid, f, 16);
			m->has_fid = true;
			m->fid_related = !memcmp(f, SMB2_RELATED_FID, 16);
		}
	}
	switch (m->cmd) {
	case SMB2_CREATE:
	case SMB2_TREE_CONNECT: {
		struct smb2_rd n;
		uint16_t len;

		if (m->cmd == SMB2_CREATE) {
			smb2_rd_seek(&r, 3);
			m->oplock = smb2_rd_u8(&r);
			smb2_rd_seek(&r, 24);
			m->access = smb2_rd_u32(&r);
			smb2_rd_seek(&r, 36);
			m->disposition = smb2_rd_u32(&r);
		}
		/* the options and the name on a reader of their own: not all kept, they are
		 * left out (0, NULL), the disposition kept */
		n = r;
		if (m->cmd == SMB2_CREATE)
			m->create_options = smb2_rd_u32(&n);
		else
			smb2_rd_seek(&n, 4);
		len = name_at(m, &n, hdr);
		if (n.bad)
			m->create_options = 0;
		m->body_cut = n.bad || (!m->name && len);
		break;
	}
	case SMB2_IOCTL:
	case SMB2_READ:
	case SMB2_WRITE:
		smb2_rd_seek(&r, 4);
		if (m->cmd == SMB2_IOCTL)
			m->ctl = smb2_rd_u32(&r);
		else
			m->length = smb2_rd_u32(&r);
		break;
	case SMB2_QUERY_INFO:
	case SMB2_SET_INFO:
		smb2_rd_seek(&r, 2);
		m->info_type = smb2_rd_u8(&r);
		m->info_class = smb2_rd_u8(&r);
		break;
	case SMB2_QUERY_DIRECTORY: {
		struct smb2_rd n;

		smb2_rd_seek(&r, 2);
		m->info_class = smb2_rd_u8(&r);
		/* its pattern, on a reader of its own: not all kept, it is left out (NULL) */
		n = r;
		smb2_rd_seek(&n, 24);
		name_at(m, &n, hdr);
		break;
	}
	case SMB2_CHANGE_NOTIFY:
		smb2_rd_seek(&r, 2);
		m->flags = smb2_rd_u16(&r);
		break;
	default:
		break;
	}
	if (r.bad) { /* a field past the bytes kept: none of them */
		m->disposition = m->ctl = m->length = m->create_options = m->access = 0;
		m->oplock = 0;
		m->name = NULL;
		m->namelen = 0;
		m->info_type = m->info_class = 0;
		m->flags = 0;
		m->body_cut = true;
	}
}

int pv_smb_trace_frame(const uint8_t *p, size_t len, size_t total, pv_smb_trace_fn fn, void *arg,
		       bool *cut, char *why, size_t whylen)
{
	size_t at = 0;
	int n = 0;

	if (cut)
		*cut = false;
	if (len > total)
		len = total;
	for (;;) {
		struct pv_smb_trace_msg m;
		struct smb2_rd r, b;
		size_t end;

		if (at + SMB2_HDR > len) {
			if (at + SMB2_HDR <= total && cut) /* the header is past what was kept */
				*cut = true;
			else if (at + SMB2_HDR > total) {
				snprintf(
					why, whylen,
					"a message at byte %zu of a frame of %zu bytes has no room "
					"for its 64-byte header",
					at, total);
				return -1;
			}
			return n;
		}
		smb2_rd_init(&r, p + at, len - at);
		if (memcmp(p + at, "\xfeSMB", 4) != 0 || smb2_get16(p + at + 4) != SMB2_HDR) {
			snprintf(why, whylen, "the message at byte %zu of a frame is not SMB2", at);
			return -1;
		}
		memset(&m, 0, sizeof(m));
		smb2_rd_seek(&r, 8);
		m.status = smb2_rd_u32(&r);
		m.cmd = smb2_rd_u16(&r);
		smb2_rd_skip(&r, 2); /* credits */
		{
			uint32_t flags = smb2_rd_u32(&r), next = smb2_rd_u32(&r);

			m.response = flags & SMB2_FLAGS_RESPONSE;
			m.async = flags & SMB2_FLAGS_ASYNC;
			m.related = flags & SMB2_FLAGS_RELATED;
			m.mid = smb2_rd_u64(&r);
			if (m.async) {
				m.async_id = smb2_rd_u64(&r);
			} else {
				smb2_rd_skip(&r, 4);
				m.tree = smb2_rd_u32(&r);
			}
			m.session = smb2_rd_u64(&r);
			if (next && (next % 8 || next < SMB2_HDR || next > total - at)) {
				snprintf(why, whylen,
					 "the message at byte %zu of a frame of %zu bytes says the "
					 "next is %u bytes on%s",
					 at, total, next, next % 8 ? " (not a multiple of 8)" : "");
				return -1;
			}
			end = next ? at + next : total;
		}
		/* the body: its bytes in this message and in what was kept */
		if (smb2_rd_span(&r, SMB2_HDR, (end < len ? end : len) - at - SMB2_HDR, "the body",
				 &b) == 0) {
			struct smb2_rd whole;

			smb2_rd_init(&whole, p + at, (end < len ? end : len) - at);
			body(&m, &b, &whole);
		}
		if (end > len)
			m.body_cut = true;
		fn(arg, &m);
		n++;
		if (end == total)
			return n;
		at = end;
	}
}

int pv_smb_trace_dir(const uint8_t *p, size_t len, uint8_t info_class, pv_smb_trace_dir_fn fn,
		     void *arg)
{
	struct smb2_dir_it it;
	struct smb2_dirent e;
	struct smb2_rd buf;
	int n = 0;

	smb2_rd_init(&buf, p, len);
	if (smb2_dir_init_class(&it, &buf, info_class) < 0)
		return -1;
	while (smb2_dir_next(&it, &e) == 1) {
		fn(arg, e.name, e.dir, e.size);
		n++;
	}
	return n;
}
