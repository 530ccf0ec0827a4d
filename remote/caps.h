/* remote/caps.h: how much remote/ takes from a host, whatever the host sends
 * (docs/security-model.md lists every module's caps). Past a cap a command fails cleanly
 * (PV_EREMOTE naming the host, the command and the cap), and what came is dropped; stderr, which
 * only ever explains, is cut instead, and says so. */
#ifndef PV_REMOTE_CAPS_H
#define PV_REMOTE_CAPS_H

/* bytes of a command's stdout that pv_remote_exec keeps (pv_remote_exec_max takes another) */
#define PV_REMOTE_OUT_MAX (64u << 20)
/* bytes of a command's stderr kept, by pv_remote_exec and pv_remote_stream: the rest is
 * dropped and a line says how much */
#define PV_REMOTE_ERR_MAX (256u << 10)
/* bytes of one line of a stream's stdout (pv_remote_stream) */
#define PV_REMOTE_LINE_MAX (1u << 20)
/* bytes of a file read over SFTP (pv_remote_read_file) */
#define PV_REMOTE_FILE_MAX (64u << 20)

#endif
