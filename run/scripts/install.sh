# run/scripts/install.sh: provision's binary on a client (run/install.h). Set before:
# dir (/var/tmp/provision-<digest prefix>), digest (the binary's SHA-256), tmp (the name the
# copy is sent to, in dir: one per host, for hosts that share a file system), mode:
#   check   prints "present" when $dir/provision is there with that digest and can run;
#           otherwise makes $dir (0700) for the copy and prints "absent"
#   finish  checks $dir/$tmp (digest, libraries), renames it to $dir/provision
# Exit 3: the folder is not one root can trust (the message says why); 4: the binary cannot
# run here (the missing libraries named); 5: the copy is not what was sent.
# shellcheck disable=SC2154 # dir, digest, tmp and mode are set by the preamble provision adds
set -u
umask 077

trusted() {
	if [ ! -d "$dir" ] || [ -L "$dir" ]; then
		echo "$dir is not a folder (a link?): remove it" >&2
		exit 3
	fi
	owner=$(stat -c %u -- "$dir") && perm=$(stat -c %a -- "$dir") || exit 3
	[ "$owner" = "$(id -u)" ] || { echo "$dir is not ours (owner uid $owner): remove it" >&2; exit 3; }
	case $perm in
	*[2367]? | *[2367]) echo "$dir is writable by others (mode $perm): remove it" >&2; exit 3 ;;
	esac
}

runs() { # FILE: the libraries it needs are all there
	missing=$(ldd -- "$1" 2>&1 | awk '/not found/ { print $1 }' | tr '\n' ' ')
	if [ -n "$missing" ]; then
		echo "provision cannot run here: libraries missing: ${missing% }; install them (Debian: apt-get install the packages of docs/load.md)" >&2
		exit 4
	fi
}

case $mode in
check)
	if [ -e "$dir" ] || [ -L "$dir" ]; then
		trusted
		if [ -f "$dir/provision" ] && [ ! -L "$dir/provision" ] &&
			[ "$(sha256sum <"$dir/provision" | cut -d' ' -f1)" = "$digest" ]; then
			runs "$dir/provision"
			echo present
			exit 0
		fi
	else
		# another host on the same file system may make it at the same time
		mkdir -m 0700 -- "$dir" 2>/dev/null || trusted
	fi
	rm -f -- "${dir:?}/$tmp"
	echo absent
	;;
finish)
	trusted
	f=$dir/$tmp
	if [ ! -f "$f" ] || [ -L "$f" ]; then
		echo "$f is missing" >&2
		exit 5
	fi
	[ "$(sha256sum <"$f" | cut -d' ' -f1)" = "$digest" ] || { echo "$f is not the binary sent" >&2; exit 5; }
	chmod 0700 -- "$f" || exit 5
	runs "$f"
	mv -f -- "$f" "$dir/provision" || exit 5
	echo installed
	;;
*)
	echo "install.sh: unknown mode '$mode'" >&2
	exit 2
	;;
esac
