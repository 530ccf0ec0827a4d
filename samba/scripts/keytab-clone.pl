# samba/scripts/keytab-clone.pl KEYTAB: add the principals on stdin (one a line, without the
# realm, e.g. cifs/srvu7) to KEYTAB with the keys of the machine account's own host/ entries.
#
# Why not 'net ads keytab add': it derives every principal's keys from the machine password
# anew (PBKDF2, ~0.1 s a principal), although every SPN of one account has the same keys (the
# salt is the account's, not the SPN's) and the same kvno. Copying them is what net would
# write, at a thousandth of the cost.
#
# The keytab is read whole (version 0x0502, the one MIT and Heimdal write; entries as in MIT's
# keytab.txt: size, principal, timestamp, 8-bit kvno, keyblock, optional 32-bit kvno). The
# template is the host/<name> principal with the highest kvno: each of its enctypes (at that
# kvno) is copied once for every principal asked that the keytab lacks at that kvno. The
# result goes to a new file beside it (same mode and owner), is read back and checked, and is
# renamed over the old one. Nothing is changed when anything is off.
#
# stdout: "pv-kt added N" (N principals). Exit 3 when this keytab cannot be handled here (not
# version 0x0502, unreadable, no host/ entries): the caller falls back to 'net ads keytab add'.
# Exit 1 on a failure after those checks (the keytab is then unchanged).
use strict;
use warnings;
use Fcntl qw(O_WRONLY O_CREAT O_EXCL);
use IO::Handle;

my $kt = shift @ARGV // die "usage: keytab-clone.pl KEYTAB\n";

sub cannot { print STDERR "$_[0]\n"; exit 3; }
sub fail { print STDERR "$_[0]\n"; exit 1; }

# Entries of a keytab image: [offset, length, realm, [components], name_type, kvno, enctype, key]
sub parse {
	my ($img) = @_;
	return undef if length($img) < 2 || unpack('n', substr($img, 0, 2)) != 0x0502;
	my ($pos, @e) = (2);
	while ($pos + 4 <= length($img)) {
		my $size = unpack('l>', substr($img, $pos, 4));
		$pos += 4;
		last if $size == 0;
		if ($size < 0) { # a hole left by a deletion
			$pos += -$size;
			next;
		}
		return undef if $pos + $size > length($img);
		my $d = substr($img, $pos, $size);
		my $p = 0;
		my $take = sub {
			my ($n) = @_;
			die "short\n" if $p + $n > length($d);
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
			$kvno = unpack('N', $take->(4)) if $p + 4 <= length($d);
			push @e, [$pos - 4, $size + 4, $realm, \@comp, $ntype, $kvno, $etype, $key];
			1;
		};
		return undef unless $ok;
		$pos += $size;
	}
	return \@e;
}

sub entry {
	my ($realm, $comp, $ntype, $kvno, $etype, $key) = @_;
	my $d = pack('n', scalar @$comp) . pack('n/a*', $realm);
	$d .= pack('n/a*', $_) for @$comp;
	$d .= pack('N N C n n/a* N', $ntype, time, $kvno & 0xff, $etype, $key, $kvno);
	return pack('l>', length $d) . $d;
}

open(my $fh, '<:raw', $kt) or cannot("cannot read $kt: $!");
my $img = do { local $/; <$fh> };
close $fh;
my $e = parse($img) or cannot("$kt is not a keytab of version 0x0502 that this script reads");

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

my %have = map { (join('/', @{$_->[3]}) . "\@$_->[2] $_->[5]" => 1) } @$e;
my ($add, $n, %seen) = ('', 0);
while (my $p = <STDIN>) {
	chomp $p;
	next if $p eq '' || $seen{$p}++;
	fail("principal '$p' has a realm or an empty component") if $p =~ /@/ || $p =~ m{(^|/)(/|$)};
	next if $have{"$p\@$trealm $tkvno"};
	$add .= entry($trealm, [split m{/}, $p], $tntype, $tkvno, $_, $tkey{$_}) for sort { $a <=> $b } keys %tkey;
	$n++;
}
if (!$n) {
	print "pv-kt added 0\n";
	exit 0;
}

# after the last entry read: a keytab that ends with a zero size or a hole is cut there (an
# entry appended after it would go unread)
my $end = @$e ? $e->[-1][0] + $e->[-1][1] : 2;
my $out = substr($img, 0, $end) . $add;
my $new = "$kt.provision-new.$$";
my @st = stat($kt) or fail("cannot stat $kt: $!");
END { unlink $new if defined $new && -e $new; }
# O_EXCL: never through a file or link that is there already
sysopen(my $w, $new, O_WRONLY | O_CREAT | O_EXCL, 0600) or fail("cannot create $new: $!");
binmode $w;
(print $w $out) && $w->flush && $w->sync && close($w) or fail("cannot write $new: $!");
open(my $r, '<:raw', $new) or fail("cannot read back $new: $!");
my $back = parse(do { local $/; <$r> });
close $r;
fail("the new keytab does not read back as written; $kt is unchanged")
	unless $back && @$back == @$e + $n * keys %tkey;
chmod($st[2] & 07777, $new) && chown($st[4], $st[5], $new)
	or fail("cannot set the mode and owner of $new: $!");
rename($new, $kt) or fail("cannot rename $new over $kt: $!");
undef $new;
print "pv-kt added $n\n";
