/* util/embed.h: files of the tree built into the binary as NUL-terminated strings: the shell,
 * awk and Perl programs provision runs on hosts live as files beside their module (so that
 * shellcheck reads them), and reach the binary with this.
 *
 *   PV_EMBED(pv_samba_probe_sh, "samba/scripts/probe.sh");
 *
 * defines `extern const char pv_samba_probe_sh[]` holding the file, from the path relative to
 * the top of the tree (make runs there). The Makefile makes <module>/scripts.o depend on every
 * file in <module>/scripts/. */
#ifndef PV_UTIL_EMBED_H
#define PV_UTIL_EMBED_H

#define PV_EMBED(sym, file)                                                                        \
	__asm__(".pushsection .rodata\n"                                                           \
		".globl " #sym "\n"                                                                \
		".type " #sym ", @object\n" #sym ":\n"                                             \
		".incbin \"" file "\"\n"                                                           \
		".byte 0\n"                                                                        \
		".size " #sym ", . - " #sym "\n"                                                   \
		".popsection\n");                                                                  \
	extern const char sym[]

#endif
