#!/usr/bin/perl
# tests/fuzz/fuzz_keytab.pl: the fuzz target of the keytab reader, samba/scripts/keytab.pl,
# which runs as root on the server and parses the keytab Samba uses (a file of root's, but
# one that other tools write and a crash may cut). It stays in Perl on the server, so that the
# machine account's keys never leave it (the alternative, parsing in C under libFuzzer, would
# send them to the controller); this target feeds it hostile keytabs instead. Perl has no
# libFuzzer: this is a small mutation fuzzer of its own, with libFuzzer's way of reporting, so
# that tests/fuzz/run.sh runs it like the others.
#
#   fuzz_keytab.pl replay DIR...               every file of the DIRs once
#   fuzz_keytab.pl fuzz SECONDS WORK ART DIR... mutate the files of WORK and the DIRs for
#                                              SECONDS; new shapes go to WORK, a broken promise
#                                              to ART; then the coverage of keytab.pl
#   fuzz_keytab.pl cover DIR...                (under -d:PvCov) the lines of keytab.pl run
#
# Each input is checked twice. In this process, keytab.pl's parse(): it returns nothing or
# entries that lie inside the image, in order, not overlapping, with their own fields, and the
# image's end after the last. And, for one input in RUN_EVERY (every one when replaying), the
# script itself as the server runs it, on a copy, adding then removing "cifs/fuzz" (timeout
# 20 s, 1 GiB of memory): it exits 0, 1 or 3 and never dies otherwise; a keytab it refuses or
# fails on is left byte for byte as it was (adding) or with only whole entries turned to holes
# (removing); one it adds to reads back with the new entries, and MIT's klist reads it
# whenever it read the original.
use strict;
use warnings;
use File::Temp qw(tempdir);
use Time::HiRes qw(time);

my $TOP = ($0 =~ m{^(.*)/tests/fuzz/[^/]+$})[0] // '.';
my $SCRIPT = "$TOP/samba/scripts/keytab.pl";
my $RUN_EVERY = 25;
my $MAX_LEN = 8192;

# keytab.pl's exit, in this process (the cover pass runs its main), ends only that run
BEGIN { *CORE::GLOBAL::exit = sub { die "exit " . ($_[0] // 0) . "\n" }; }
require $SCRIPT; # a modulino: defines parse() and friends, runs nothing

my $tmp = tempdir('pv-fuzz-keytab.XXXXXX', TMPDIR => 1, CLEANUP => 1);
my $klist = grep { -x "$_/klist" } split /:/, $ENV{PATH};
my %features;
my $runs = 0;

sub broken {
	my ($what, $img) = @_;
	die "fuzz_keytab: broken promise: $what\n";
}

# parse()'s promises about an image
sub check_parse {
	my ($img) = @_;
	my $k = parse($img);
	return 'refused' unless $k;
	my ($last, $n) = (2, 0);
	for my $e (@{$k->{entries}}) {
		my ($off, $len, $realm, $comp, $ntype, $kvno, $etype, $key) = @$e;
		broken("an entry before the one before it") if $off < $last;
		broken("an entry past the image") if $off + $len > length $img;
		broken("an entry shorter than its fixed fields") if $len < 4 + 2 + 2 + 4 + 4 + 1 + 2 + 2;
		broken("an entry's size field is not its length")
			if unpack('l>', substr($img, $off, 4)) != $len - 4;
		broken("a kvno out of range") if $kvno < 0 || $kvno > 0xffffffff;
		broken("an enctype out of range") if $etype < 0 || $etype > 0xffff;
		$last = $off + $len;
		$n++;
	}
	broken("the end before the last entry's") if $k->{end} < $last || $k->{end} > length $img;
	return 'entries' . ($n > 3 ? 'many' : $n);
}

sub slurp_file { open(my $f, '<:raw', $_[0]) or return undef; local $/; my $d = <$f>; return $d; }
sub spew { open(my $f, '>:raw', $_[0]) or die "$_[0]: $!\n"; print $f $_[1]; close $f or die; }

# The script itself, on a copy: MODE add or remove; its exit status and the file after.
sub run_script {
	my ($img, $mode, $file) = @_;
	spew($file, $img) if defined $img;
	spew("$tmp/names", "cifs/fuzz\n");
	my $pid = open(my $out, '-|') // die "fork: $!\n";
	if (!$pid) {
		open(STDERR, '>', '/dev/null');
		exec('sh', '-c', 'ulimit -v 1048576; exec timeout 20 perl "$1" "$2" "$3" <"$4"', 'sh',
		     $SCRIPT, $mode, $file, "$tmp/names") or CORE::exit(127);
	}
	my $said = do { local $/; <$out> } // '';
	close $out;
	return ($? >> 8, $said, slurp_file($file));
}

sub klist_ok { return !system("klist -k -- \Q$_[0]\E >/dev/null 2>&1"); }

sub check_script {
	my ($img) = @_;
	my $file = "$tmp/kt";
	my $k = parse($img);
	my $read_before = $klist && (spew($file, $img), klist_ok($file));
	my ($rc, $said, $after) = run_script($img, 'add', $file);
	broken("keytab.pl add exited $rc (timeout, memory or a crash)") unless $rc == 0 || $rc == 1 || $rc == 3;
	$features{"add:$rc"}++;
	if ($rc) {
		broken("keytab.pl add exited $rc and changed the keytab") if $after ne $img;
		return "add$rc";
	}
	broken("keytab.pl add said '$said'") unless $said =~ /^pv-kt added (\d+)\n\z/;
	my $n = $1;
	my $k2 = parse($after) or broken("what keytab.pl added does not parse");
	broken("keytab.pl added entries but says $n") if ($n == 0) != (@{$k2->{entries}} == @{$k->{entries}});
	broken("klist read the keytab before, and not after adding") if $read_before && !klist_ok($file);
	my ($rc2, $said2, $after2) = run_script(undef, 'remove', $file);
	broken("keytab.pl remove exited $rc2") unless $rc2 == 0 || $rc2 == 1 || $rc2 == 3;
	broken("keytab.pl remove said '$said2'") if !$rc2 && $said2 !~ /^pv-kt (removed \d+|none)\n\z/;
	my $k3 = parse($after2);
	broken("the keytab does not parse after remove") unless $k3;
	broken("cifs/fuzz still there after remove")
		if !$rc2 && grep { join('/', @{$_->[3]}) eq 'cifs/fuzz' } @{$k3->{entries}};
	broken("klist read the keytab before, and not after removing") if $read_before && !klist_ok($file);
	return "add0 remove$rc2";
}

sub one {
	my ($img, $full) = @_;
	$runs++;
	my $f = check_parse($img);
	$f .= ' ' . check_script($img) if $full;
	return !$features{$f}++;
}

sub files_of { map { my $d = $_; -d $d ? map { "$d/$_" } grep { !/^\./ } do { opendir(my $h, $d) or die; readdir $h } : () } @_ }

# Mutations: flips, bytes, sizes at entry boundaries, insertions, deletions, splices.
my @INTERESTING = (0, 1, -1, 2, 4, 0x7f, 0x80, 0xff, 0x7fff, 0x8000, 0xffff, 0x7fffffff,
		   -0x80000000, 16, 64);
sub mutate {
	my ($img, $pool) = @_;
	my $rounds = 1 + int(rand(4));
	for (1 .. $rounds) {
		my $len = length $img;
		my $op = int(rand(8));
		my $at = $len ? int(rand($len)) : 0;
		if ($op == 0 && $len) {
			substr($img, $at, 1) = chr(ord(substr($img, $at, 1)) ^ (1 << int(rand(8))));
		} elsif ($op == 1 && $len) {
			substr($img, $at, 1) = chr(int(rand(256)));
		} elsif ($op == 2 && $len >= 4) {
			# a 4-byte size at an entry's start, or anywhere
			my $k = parse($img);
			my @starts = $k ? map { $_->[0] } @{$k->{entries}} : ();
			my $p = @starts && rand() < 0.7 ? $starts[rand @starts] : int(rand($len - 3));
			my $v = $INTERESTING[rand @INTERESTING];
			$v = (unpack('l>', substr($img, $p, 4)) + (rand() < 0.5 ? 1 : -1)) if rand() < 0.3;
			substr($img, $p, 4) = pack('l>', $v);
		} elsif ($op == 3 && $len >= 2) {
			substr($img, $at & ~1, 2) = pack('n', $INTERESTING[rand @INTERESTING] & 0xffff)
				if ($at & ~1) + 2 <= $len;
		} elsif ($op == 4) {
			substr($img, $at, 0) = join('', map { chr(int(rand(256))) } 1 .. 1 + int(rand(16)));
		} elsif ($op == 5 && $len) {
			substr($img, $at, 1 + int(rand(16))) = '';
		} elsif ($op == 6 && $len) {
			$img = substr($img, 0, $at); # cut short
		} elsif ($op == 7 && @$pool) {
			my $o = $pool->[rand @$pool];
			my $from = length $o ? int(rand(length $o)) : 0;
			substr($img, $at, 0) = substr($o, $from, 1 + int(rand(64)));
		}
	}
	return length $img > $MAX_LEN ? substr($img, 0, $MAX_LEN) : $img;
}

sub stats {
	my ($t0, $cov, $corp) = @_;
	my $el = time - $t0 || 1e-9;
	printf "#%d\tDONE   cov: %s ft: %d corp: %d\n", $runs, $cov, scalar keys %features, $corp;
	printf "stat::number_of_executed_units: %d\n", $runs;
	printf "stat::average_exec_per_sec: %d\n", $runs / $el;
}

# The lines of keytab.pl that hold code, and those run over the inputs (under -d:PvCov).
sub coverage {
	my @dirs = @_;
	my $out = `perl -I"$TOP/tests/fuzz/perl" -d:PvCov "$0" cover @dirs 2>/dev/null`;
	return $out =~ /^covered (\d+) of (\d+)$/m ? $1 : '?';
}

my $mode = shift @ARGV // '';
if ($mode eq 'replay') {
	my $t0 = time;
	my @f = files_of(@ARGV);
	for my $p (@f) {
		my $img = slurp_file($p) // die "$p: $!\n";
		local $@;
		eval { one($img, 1); 1 } or do { print STDERR "fuzz_keytab: $p: $@"; CORE::exit(1) };
	}
	stats($t0, coverage(@ARGV), scalar @f);
} elsif ($mode eq 'fuzz') {
	my ($secs, $work, $art, @dirs) = @ARGV;
	my $t0 = time;
	my @pool = map { slurp_file($_) } files_of($work, @dirs);
	@pool = ("\x05\x02") unless @pool;
	one($_, 1) for @pool;
	my $seq = 0;
	while (time - $t0 < $secs) {
		my $img = mutate($pool[rand @pool], \@pool);
		my $full = $runs % $RUN_EVERY == 0;
		local $@;
		my $new = eval { one($img, $full) };
		if (!defined $new) {
			my $name = sprintf('%s/crash-%d-%d', $art, $$, $seq++);
			spew($name, $img);
			print STDERR "fuzz_keytab: $@", "Test unit written to $name\n";
			stats($t0, '?', scalar @pool);
			CORE::exit(1);
		}
		if ($new) {
			push @pool, $img;
			spew(sprintf('%s/new-%d-%d', $work, $$, $seq++), $img);
		}
	}
	stats($t0, coverage($work, @dirs), scalar @pool);
} elsif ($mode eq 'cover') {
	for my $p (files_of(@ARGV)) {
		my $img = slurp_file($p);
		my $file = "$tmp/kt";
		eval { parse($img) };
		# the script's own paths too, in this process: add, then remove, on a copy
		spew($file, $img);
		for my $m ('add', 'remove') {
			local @ARGV = ($m, $file);
			local *STDIN;
			local *STDOUT;
			local *STDERR;
			open(STDIN, '<', \"cifs/fuzz\n");
			open(STDOUT, '>', '/dev/null');
			open(STDERR, '>', '/dev/null');
			eval { main() };
		}
	}
	Devel::PvCov::report($SCRIPT);
} else {
	die "usage: $0 replay DIR... | fuzz SECONDS WORK ART DIR... | cover DIR...\n";
}
