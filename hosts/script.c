/* hosts/script.c: the shell script that writes a hosts file safely on a POSIX host (see
 * script.h for what it does and why). It uses only POSIX sh, cat, cp, mv, rm, mktemp, cksum,
 * sync, getent and, when present, flock (util-linux, busybox). LC_ALL=C keeps the error text of
 * mv in English, which is how EBUSY is told apart from other rename failures. */
#include "hosts/script.h"

#include "remote/quote.h"

#include "util/err.h"

#include <stdio.h>
#include <string.h>


/* The fixed part. Variables set before it: f b old new mkbak dropbak wait, and the positional
 * parameters are the names to verify. */
static const char body[] =
	"tmp= prev= bt=\n"
	"clean() { [ -z \"$tmp$prev$bt\" ] || rm -f -- \"$tmp\" \"$prev\" \"$bt\"; }\n"
	"trap clean EXIT\n"
	"trap 'exit 129' HUP\n"
	"trap 'exit 130' INT\n"
	"trap 'exit 143' TERM\n"
	"die() { c=$1; shift; printf '%s\\n' \"$*\" >&2; exit \"$c\"; }\n"
	"fsync() { sync -- \"$1\" 2>/dev/null || sync; }\n"
	/* a symlinked hosts file is edited where it points, so the link stays a link */
	"if [ -L \"$f\" ]; then f=$(readlink -f -- \"$f\") || die 20 \"cannot follow the link "
	"$f\"; fi\n"
	"[ -f \"$f\" ] && [ -r \"$f\" ] || die 20 \"cannot open $f: missing, not a file or not "
	"readable\"\n"
	"if [ -n \"$new\" ] || [ \"$dropbak\" = 1 ]; then\n"
	"  exec 9<\"$f\"\n"
	"  if command -v flock >/dev/null 2>&1; then\n"
	"    flock -w \"$wait\" 9 || die 21 \"$f stayed locked by another writer for $wait s; "
	"nothing was written: try again\"\n"
	"  else\n"
	"    echo \"pv-warn no flock on this host: $f is changed without a lock\"\n"
	"  fi\n"
	"  [ \"$(cksum <\"$f\")\" = \"$old\" ] || die 22 \"$f changed after provision read it; "
	"nothing was written: run the command again\"\n"
	"fi\n"
	"if [ -n \"$new\" ]; then\n"
	/* A file that is a mount point cannot be renamed onto (EBUSY): skip the attempt when
	 * mountinfo says so; the EBUSY test below catches what this misses. */
	"  how=rename\n"
	"  if [ -r /proc/self/mountinfo ] && grep -qF \" $f \" /proc/self/mountinfo; then "
	"how=in-place; fi\n"
	"  tmp=$(mktemp \"$f.provision-new.XXXXXX\") || die 23 \"cannot create a temporary file "
	"next to $f\"\n"
	/* the file that replaces it gets its mode and owner (mktemp makes 0600) */
	"  if [ \"$how\" = rename ]; then cp -p -- \"$f\" \"$tmp\" 2>/dev/null || chmod 0644 "
	"\"$tmp\"; fi\n"
	"  cat >\"$tmp\" || die 24 \"cannot write the temporary file $tmp\"\n"
	"  [ \"$(cksum <\"$tmp\")\" = \"$new\" ] || die 25 \"the new content of $f arrived "
	"incomplete; nothing was written\"\n"
	"  if [ \"$mkbak\" = 1 ]; then\n"
	"    if [ -e \"$b\" ]; then echo 'pv-backup exists'\n"
	"    else\n"
	"      { bt=$(mktemp \"$b.XXXXXX\") && cp -p -- \"$f\" \"$bt\" && fsync \"$bt\" && "
	"mv -f -- \"$bt\" \"$b\"; } || die 26 \"cannot keep a backup of $f as $b; nothing was "
	"written\"\n"
	"      bt=; echo 'pv-backup made'\n"
	"    fi\n"
	"  fi\n"
	"  if [ \"$how\" = rename ]; then\n"
	"    fsync \"$tmp\"\n"
	"    if err=$(mv -f -- \"$tmp\" \"$f\" 2>&1); then\n"
	"      tmp=; fsync \"${f%/*}/\"\n"
	"    else\n"
	"      case $err in *[Bb]usy*) how=in-place ;; *) die 27 \"cannot replace $f: $err\" ;; "
	"esac\n"
	"    fi\n"
	"  fi\n"
	"  if [ \"$how\" = in-place ]; then\n"
	"    prev=$tmp.old; cat -- \"$f\" >\"$prev\" || die 27 "
	"\"cannot save a copy of $f before rewriting it in place; nothing was written\"\n"
	"    if cat -- \"$tmp\" >\"$f\" && fsync \"$f\" && [ \"$(cksum <\"$f\")\" = \"$new\" ]; "
	"then :\n"
	"    else\n"
	"      cat -- \"$prev\" >\"$f\"; fsync \"$f\"\n"
	"      die 28 \"rewriting $f in place failed; its previous content was written back\"\n"
	"    fi\n"
	"  fi\n"
	"  echo \"pv-write $how\"\n"
	"fi\n"
	"if [ \"$dropbak\" = 1 ] && [ -e \"$b\" ]; then\n"
	"  if [ \"$(cksum <\"$b\")\" = \"$(cksum <\"$f\")\" ]; then rm -f -- \"$b\" && echo "
	"'pv-backup removed'\n"
	"  else echo 'pv-backup kept'; fi\n"
	"fi\n"
	"if [ $# -gt 0 ]; then\n"
	"  out=$(getent hosts \"$@\"); rc=$?\n"
	"  echo 'pv-getent-output'; printf '%s\\n' \"$out\"; echo \"pv-getent $rc\"\n"
	"fi\n"
	"exit 0\n";

static int var(struct pv_buf *out, const char *name, const char *value)
{
	if (pv_buf_addf(out, "%s=", name) < 0 || pv_remote_quote(out, value ? value : "") < 0 ||
	    pv_buf_addstr(out, "\n") < 0)
		return -1;
	return 0;
}

int pv_hosts_script(struct pv_buf *out, const struct pv_hosts_write *w)
{
	char num[16];

	snprintf(num, sizeof(num), "%d", w->lock_wait > 0 ? w->lock_wait : 30);
	if (pv_buf_addstr(out, "set -u\nLC_ALL=C; export LC_ALL\numask 022\n") < 0 ||
	    var(out, "f", w->path) < 0 || var(out, "b", w->backup) < 0 ||
	    var(out, "old", w->old_sum) < 0 || var(out, "new", w->new_sum) < 0 ||
	    var(out, "mkbak", w->make_backup && w->backup ? "1" : "0") < 0 ||
	    var(out, "dropbak", w->drop_backup && w->backup ? "1" : "0") < 0 ||
	    var(out, "wait", num) < 0 || pv_buf_addstr(out, "set --") < 0)
		return pv_error(PV_EIO, "out of memory");
	for (size_t i = 0; i < w->nverify; i++)
		if (pv_buf_addstr(out, " ") < 0 || pv_remote_quote(out, w->verify[i]) < 0)
			return pv_error(PV_EIO, "out of memory");
	if (pv_buf_addstr(out, "\n") < 0 || pv_buf_add(out, body, sizeof(body) - 1) < 0)
		return pv_error(PV_EIO, "out of memory");
	return PV_OK;
}
