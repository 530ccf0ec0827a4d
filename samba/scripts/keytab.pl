# samba/scripts/keytab.pl MODE KEYTAB: change the keytab Samba uses in place, as MIT's own file
# keytab code does, for the principals on stdin (one a line, without the realm, e.g.
# cifs/srvu7). MODE:
#   add     add each principal the keytab lacks, with the keys of the machine account's own
#           host/ entries; stdout "pv-kt added N"
#   remove  take every entry of each principal out (any realm, kvno, enctype); stdout
#           "pv-kt removed N" (N entries) or "pv-kt none"
#
# Why not 'net ads keytab add': it derives every principal's keys from the machine password
# anew (PBKDF2, ~0.1 s a principal), although every SPN of one account has the same keys (the
# salt is the account's, not the SPN's) and the same kvno. Copying them is what net would
# write, at a thousandth of the cost. Samba 4.17 has no 'net ads keytab delete' at all.
#
# The keytab (version 0x0502, the one MIT and Heimdal write; entries as in MIT's keytab.txt:
# size, principal, timestamp, 8-bit kvno, keyblock, optional 32-bit kvno, which overrides the
# 8-bit one unless it is 0) is changed in place, under the write lock MIT and Heimdal take on
# the file (an fcntl lock on the whole file), never renamed over: so a concurrent 'net ads
# keytab add' or winbind refresh waits for us and we for it, nothing written meanwhile is lost,
# and the file keeps its inode, owner, mode, SELinux label and other attributes, and stays a
# symbolic link when it is one (the link's target is changed). Adding appends after the last
# entry (cutting a trailing end mark or hole, after which an entry would go unread); removing
# turns each entry into a hole (its size negated, its bytes zeroed), which is what
# krb5_kt_remove_entry does. The result is read back under the lock and checked.
#
# Bad or hostile input: the file is read whole (at most KEYTAB_MAX bytes) and every field is
# bounds-checked; a keytab that does not parse is refused unchanged. A lock held by another
# writer for LOCK_WAIT seconds fails.
#
# Exit 3 when this keytab cannot be handled here (not a keytab this script reads, no host/
# entries to copy, a platform whose fcntl lock layout it does not know): the caller falls
# back ('net ads keytab add' to add, MIT's ktutil to remove). Exit 1 on a failure after those
# checks: adding puts the old bytes back (the keytab is unchanged); removing may have removed
# some entries, and the caller keeps its record so that the next cleanup removes the rest.
#
# tests/fuzz/fuzz_keytab.sh drives parse() with hostile keytabs (the script is a modulino: it
# only runs main when not loaded by another program).
use strict;
use warnings;
use Config;
use Fcntl qw(O_RDWR F_SETLKW F_WRLCK SEEK_SET);
use IO::Handle;

use constant KEYTAB_MAX => 256 << 20; # a keytab larger than this is refused (exit 3)
use constant LOCK_WAIT => 60;         # seconds another writer may hold the keytab's lock

sub cannot { print STDERR "$_[0]\n"; exit 3; }
sub fail { print STDERR "$_[0]\n"; exit 1; }

# The entries of a keytab image: [offset, length (size field included), realm, [components],
# name_type, kvno, enctype, key], and the end of the last one. undef when it is not a keytab
# of version 0x0502 or an entry runs past the end.
sub parse {
	my ($img) = @_;
	return undef if length($img) < 2 || unpack('n', substr($img, 0, 2)) != 0x0502;
	my ($pos, $end, @e) = (2, 2);
	while ($pos + 4 <= length($img)) {
		my $size = unpack('l>', substr($img, $pos, 4));
		last if $size == 0;
		if ($size < 0) { # a hole left by a deletion
			$pos += 4 - $size;
			next;
		}
		return undef if $size > length($img) - $pos - 4;
		my $d = substr($img, $pos + 4, $size);
		my $p = 0;
		my $take = sub {
			my ($n) = @_;
			die "short\n" if $n > length($d) - $p;
			my $s = substr($d, $p, $n);
			$p += $n;
			return $s;
		};
		my $ok = eval {
			my $ncomp = unpack('n', $take->(2));
			my $realm = $take->(unpack('n', $take->(2)));
			my @comp = map { $take->(unpack('n', $take->(2))) } 1 .. $ncomp;
			my $ntype = unpack('N', $take->(4));
			$take->(4); # timestamp
			my $kvno = unpack('C', $take->(1));
			my $etype = unpack('n', $take->(2));
			my $key = $take->(unpack('n', $take->(2)));
			# MIT: a 32-bit kvno of 0 is zero-fill, and the 8-bit one stands
			if (length($d) - $p >= 4) {
				my $k32 = unpack('N', $take->(4));
				$kvno = $k32 if $k32;
			}
			push @e, [$pos, $size + 4, $realm, \@comp, $ntype, $kvno, $etype, $key];
			1;
		};
		return undef unless $ok;
		$pos += 4 + $size;
		$end = $pos;
	}
	return { entries => \@e, end => $end, img => $img };
}

sub entry {
	my ($realm, $comp, $ntype, $kvno, $etype, $key) = @_;
	my $d = pack('n', scalar @$comp) . pack('n/a*', $realm);
	$d .= pack('n/a*', $_) for @$comp;
	$d .= pack('N N C n n/a* N', $ntype, time, $kvno & 0xff, $etype, $key, $kvno);
	return pack('l>', length $d) . $d;
}

sub name_of { join('/', @{$_[0][3]}) }

# The whole file through fh (locked), or exit 3 when it is too large to be a keytab.
sub slurp {
	my ($fh, $kt) = @_;
	my @st = stat($fh) or fail("cannot stat $kt: $!");
	cannot("$kt is larger than " . (KEYTAB_MAX >> 20) . " MiB: not a keytab this script reads")
		if $st[7] > KEYTAB_MAX;
	sysseek($fh, 0, 0) or fail("cannot read $kt: $!");
	my ($img, $n) = ('');
	while (($n = sysread($fh, $img, 65536, length $img))) {
		cannot("$kt is larger than " . (KEYTAB_MAX >> 20) . " MiB") if length $img > KEYTAB_MAX;
	}
	fail("cannot read $kt: $!") unless defined $n;
	return $img;
}

# pwrite: data at offset, whole or die.
sub put {
	my ($fh, $kt, $off, $data) = @_;
	sysseek($fh, $off, 0) or die "cannot seek in $kt: $!\n";
	my $done = 0;
	while ($done < length $data) {
		my $n = syswrite($fh, $data, length($data) - $done, $done);
		die "cannot write $kt: $!\n" unless $n;
		$done += $n;
	}
}

# The write lock MIT (krb5_lock_file: an OFD or POSIX fcntl lock, which conflict) and Heimdal
# take on the keytab, over the whole file, waiting at most LOCK_WAIT seconds. struct flock is
# packed by hand, so only for the layout of 64-bit Linux (short, short, pad, off_t, off_t,
# pid_t, pad); elsewhere exit 3: the fallbacks take their own locks.
sub lock_keytab {
	my ($fh, $kt) = @_;
	cannot("no fcntl lock layout known for $^O with $Config{ptrsize}-byte pointers")
		unless $^O eq 'linux' && $Config{ptrsize} == 8 && $Config{lseeksize} == 8;
	my $fl = pack('s s x4 q q l x4', F_WRLCK, SEEK_SET, 0, 0, 0);
	my $ok = eval {
		local $SIG{ALRM} = sub { die "timeout\n" };
		alarm LOCK_WAIT;
		my $r = fcntl($fh, F_SETLKW, $fl);
		alarm 0;
		$r;
	};
	alarm 0;
	fail("$kt stayed locked by another writer for " . LOCK_WAIT . " s; nothing was changed")
		if !$ok && ($@ // '') eq "timeout\n";
	fail("cannot lock $kt: $!") unless $ok;
}

sub names_in {
	my ($mode) = @_;
	my (@p, %seen);
	while (my $p = <STDIN>) {
		chomp $p;
		next if $p eq '' || $seen{$p}++;
		fail("principal '$p' has a realm or an empty component")
			if $p =~ /@/ || $p =~ m{(^|/)(/|$)};
		push @p, $p;
	}
	return @p;
}

sub add {
	my ($fh, $kt, $k, @want) = @_;
	my $e = $k->{entries};
	# the template: host/<name> at its highest kvno, one key per enctype
	my ($tkvno, $trealm, $tntype, %tkey);
	for my $x (@$e) {
		next unless @{$x->[3]} == 2 && $x->[3][0] eq 'host';
		$tkvno = $x->[5] if !defined $tkvno || $x->[5] > $tkvno;
	}
	cannot("$kt holds no host/ principal to copy the keys of") unless defined $tkvno;
	for my $x (@$e) {
		next unless @{$x->[3]} == 2 && $x->[3][0] eq 'host' && $x->[5] == $tkvno;
		($trealm, $tntype) = ($x->[2], $x->[4]) unless defined $trealm;
		next unless $x->[2] eq $trealm;
		$tkey{$x->[6]} //= $x->[7];
	}
	cannot("$kt: the host/ entries at kvno $tkvno hold no key") unless grep { length } values %tkey;
	my %have = map { (name_of($_) . "\@$_->[2] $_->[5]" => 1) } @$e;
	my ($add, $n) = ('', 0);
	for my $p (@want) {
		next if $have{"$p\@$trealm $tkvno"};
		$add .= entry($trealm, [split m{/}, $p], $tntype, $tkvno, $_, $tkey{$_})
			for sort { $a <=> $b } keys %tkey;
		$n++;
	}
	if ($n) {
		# a failure once writing began puts the old bytes back: the keytab is unchanged
		my $undo = sub {
			my ($why) = @_;
			eval {
				put($fh, $kt, $k->{end}, substr($k->{img}, $k->{end}));
				truncate($fh, length $k->{img});
				$fh->sync;
			};
			fail("$why; $kt is as it was" . ($@ ? " (except: $@)" : ''));
		};
		eval {
			put($fh, $kt, $k->{end}, $add);
			truncate($fh, $k->{end} + length $add) or die "cannot truncate $kt: $!\n";
			$fh->sync or die "cannot sync $kt: $!\n";
			1;
		} or $undo->($@ =~ s/\n$//r);
		my $back = parse(slurp($fh, $kt));
		$undo->("$kt did not read back as written after adding the alias principals")
			unless $back && @{$back->{entries}} == @$e + $n * keys %tkey;
	}
	print "pv-kt added $n\n";
}

sub remove {
	my ($fh, $kt, $k, @want) = @_;
	my %want = map { ($_ => 1) } @want;
	my @gone = grep { $want{name_of($_)} } @{$k->{entries}};
	if (!@gone) {
		print "pv-kt none\n";
		return;
	}
	# highest offset first: a failure part way leaves holes and whole entries only
	eval {
		put($fh, $kt, $_->[0], pack('l>', -($_->[1] - 4)) . ("\0" x ($_->[1] - 4)))
			for sort { $b->[0] <=> $a->[0] } @gone;
		1;
	} or fail($@ =~ s/\n$//r);
	$fh->sync or fail("cannot sync $kt: $!");
	my $back = parse(slurp($fh, $kt));
	fail("$kt does not read back as expected after taking the alias principals out")
		unless $back && @{$back->{entries}} == @{$k->{entries}} - @gone
		&& !grep { $want{name_of($_)} } @{$back->{entries}};
	printf "pv-kt removed %d\n", scalar @gone;
}

sub main {
	my ($mode, $kt) = @ARGV;
	die "usage: keytab.pl add|remove KEYTAB\n"
		unless defined $kt && ($mode eq 'add' || $mode eq 'remove');
	my @want = names_in();
	# opened through a link, if it is one: its target is what changes
	sysopen(my $fh, $kt, O_RDWR) or cannot("cannot open $kt: $!");
	binmode $fh;
	cannot("$kt is not a plain file") unless -f $fh;
	lock_keytab($fh, $kt);
	my $k = parse(slurp($fh, $kt))
		or cannot("$kt is not a keytab of version 0x0502 that this script reads");
	$mode eq 'add' ? add($fh, $kt, $k, @want) : remove($fh, $kt, $k, @want);
	close($fh) or fail("cannot close $kt: $!");
	exit 0;
}

main() unless caller;
1;
