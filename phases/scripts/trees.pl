# phases/scripts/trees.pl: writes users' home trees on the server's disk (`server --via ssh`)
# without ever acting as root inside a folder a user owns. Run as root by trees.sh:
#
#   perl -e "$prog" extract BASE        a ustar stream on stdin, paths relative to BASE
#   perl -e "$prog" copy BASE TPL       the template folder TPL (relative to BASE) into the
#                                       folders of the users on stdin, "uid gid folder" lines
#
# A user's own folder (<share>/<user>, two components; its parent, the share's folder, is
# root's and 0755, so no user can put anything there) is made by root and given to the user.
# Everything inside it is written with the effective uid and gid of its owner and no other
# groups: the kernel then checks every path component as that user, so a symbolic link the
# user planted (before the run or during it) leads only where the user could write anyway.
# The last component is opened with O_NOFOLLOW, and a link or file where the fileset has
# something else is removed first (as the user) and made anew. A write that fails removes
# its file, so a tree holds whole files only; the first failure ends the run with
# "PATH: REASON" on stderr.
use strict;
use warnings;
use Fcntl qw(O_WRONLY O_CREAT O_TRUNC O_NOFOLLOW);

my ( $cuid, $cgid ) = ( 0, 0 );    # the identity we act as now

sub become {
	my ( $uid, $gid ) = @_;
	return if $uid == $cuid && $gid == $cgid;
	$> = 0;    # back to root first: only root may take another identity
	die "cannot become root again: $!\n" if $> != 0;
	$) = "$gid $gid";    # egid, and the supplementary groups: that one only
	die "cannot take gid $gid: $!\n" if ( split / /, $) )[0] != $gid;
	if ( $uid != 0 ) {
		$> = $uid;
		die "cannot take uid $uid: $!\n" if $> != $uid;
	}
	( $cuid, $cgid ) = ( $uid, $gid );
}

# a path we make: relative, no '.' or '..' component, no empty component
sub checked {
	my $p = shift;
	die "$p: not a relative path below the share folder\n"
	  if $p eq '' || $p =~ m{^/} || grep { $_ eq '' || $_ eq '.' || $_ eq '..' } split m{/}, $p, -1;
	return $p;
}

# <share>/<user>: made by root when missing, given to the user, 0700; only in a share folder
# that is root's and that nobody else may write to (else a user could swap what root touches)
sub user_folder {
	my ( $p, $uid, $gid ) = @_;
	my ($share) = $p =~ m{^([^/]+)/};
	become( 0, 0 );
	my @st = lstat $share or die "$share: $!
";
	die "$share: the share's folder must be root's and not writable by others
"
	  if -l _ || !-d _ || $st[4] != 0 || ( $st[2] & 022 );
	if ( lstat $p ) {
		die "$p: not a folder\n" if -l _ || !-d _;
	} else {
		mkdir $p, 0700 or die "$p: $!\n";
	}
	chown $uid, $gid, $p or die "$p: $!\n";
	chmod 0700, $p or die "$p: $!\n";
}

sub folder {
	my ( $p, $mode ) = @_;
	if ( lstat $p ) {
		return if -d _ && !-l _;
		unlink $p or die "$p: $!\n";    # a link or a file where a folder belongs
	}
	mkdir $p, $mode or die "$p: $!\n";
}

# open a file for writing, never through a link; what stood there and was not a file goes
sub create {
	my ( $p, $mode ) = @_;
	if ( lstat $p ) {
		die "$p: a folder where the fileset has a file\n" if -d _ && !-l _;
		unlink $p or die "$p: $!\n" if !-f _ || -l _;
	}
	sysopen( my $fh, $p, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, $mode ) or die "$p: $!\n";
	binmode $fh;
	return $fh;
}

sub write_all {
	my ( $fh, $p, $buf ) = @_;
	my $done = 0;
	while ( $done < length $buf ) {
		my $w = syswrite( $fh, $buf, length($buf) - $done, $done );
		if ( !defined $w ) {
			my $e = $!;
			close $fh;
			unlink $p;
			die "$p: $e\n";
		}
		$done += $w;
	}
}

sub finish_file {
	my ( $fh, $p ) = @_;
	close $fh or do { my $e = $!; unlink $p; die "$p: $e\n" };
}

sub read_exact {
	my $n = shift;
	my $buf = '';
	while ( length $buf < $n ) {
		my $r = sysread( STDIN, $buf, $n - length $buf, length $buf );
		die "the tar stream ended early\n" if !$r;
	}
	return $buf;
}

sub oct_field { my $v = shift; $v =~ s/[\0 ]+$//; $v =~ s/^\s+//; return $v eq '' ? 0 : oct $v }

sub extract {
	binmode STDIN;
	while (1) {
		my $h = read_exact(512);
		last if $h eq "\0" x 512;
		my ( $name, $mode, $uid, $gid, $size, $type, $prefix ) =
		  map { substr $h, $_->[0], $_->[1] } [ 0, 100 ], [ 100, 8 ], [ 108, 8 ], [ 116, 8 ], [ 124, 12 ],
		  [ 156, 1 ], [ 345, 155 ];
		s/\0.*//s for $name, $prefix;
		( $mode, $uid, $gid, $size ) = map { oct_field($_) } $mode, $uid, $gid, $size;
		my $p = $prefix eq '' ? $name : "$prefix/$name";
		$p =~ s{/+$}{};
		checked($p);
		my $pad = ( 512 - $size % 512 ) % 512;
		if ( $p =~ tr{/}{} == 1 ) {    # <share>/<user>
			die "$p: expected the user's folder\n" if $type ne '5';
			user_folder( $p, $uid, $gid );
			next;
		}
		die "$p: outside a user's folder\n" if $p !~ m{/.+/};
		become( $uid, $gid );
		if ( $type eq '5' ) {
			folder( $p, $mode & 07777 );
		} elsif ( $type eq '0' || $type eq "\0" ) {
			my $fh = create( $p, $mode & 07777 );
			my $left = $size;
			while ( $left > 0 ) {
				my $n = $left < 1048576 ? $left : 1048576;
				write_all( $fh, $p, read_exact($n) );
				$left -= $n;
			}
			finish_file( $fh, $p );
		} else {
			die "$p: an entry of type '$type' is not made\n";
		}
		read_exact($pad) if $pad;
	}
	become( 0, 0 );
}

sub copy_template {
	my $tpl = shift;
	$tpl =~ s{^\./}{};
	checked($tpl);
	my ( @d, @f );
	my $walk;
	$walk = sub {
		my $r = shift;
		opendir( my $h, "$tpl/$r" ) or die "$tpl/$r: $!\n";
		for my $e ( sort grep { !/^\.\.?$/ } readdir $h ) {
			my $p = $r eq "" ? $e : "$r/$e";
			if ( -d "$tpl/$p" ) { push @d, $p; $walk->($p) }
			else                { push @f, $p }
		}
	};
	$walk->("");
	while ( my $l = <STDIN> ) {
		chomp $l;
		my ( $uid, $gid, $to ) = split / /, $l, 3;
		checked($to);
		die "$to: expected <share>/<user>\n" if $to =~ tr{/}{} != 1;
		user_folder( $to, $uid, $gid );
		become( $uid, $gid );
		folder( "$to/$_", 0755 ) for @d;
		for my $p (@f) {
			open( my $i, "<", "$tpl/$p" ) or die "$tpl/$p: $!\n";
			binmode $i;
			my $fh = create( "$to/$p", 0644 );
			my $b;
			while ( my $n = sysread( $i, $b, 1048576 ) ) {
				write_all( $fh, "$to/$p", $b );
			}
			close $i;
			finish_file( $fh, "$to/$p" );
		}
		become( 0, 0 );
	}
}

my $what = shift // '';
my $base = shift // die "usage: trees.pl extract BASE | copy BASE TPL\n";
chdir $base or die "$base: $!\n";
if    ( $what eq 'extract' ) { extract() }
elsif ( $what eq 'copy' )    { copy_template(shift) }
else                         { die "usage: trees.pl extract BASE | copy BASE TPL\n" }
