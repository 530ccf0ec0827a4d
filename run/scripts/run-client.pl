# run/scripts/run-client.pl: one host's part of one step of `provision run`. Run as
#   perl -e "$prog" -- BASE STEP PASSWORD LABEL COMMAND
# It makes the run's folder BASE (mode 0700; on a later step it must be that folder: a folder,
# not a link, owned by us) and the step's folder BASE/STEP (new; one of ours left by a lost
# earlier run with the same id is made anew), and when PASSWORD is 1 puts
# the first line of its stdin into BASE/password (0600, removed when the step ends). It starts
# COMMAND with sh -c in a session and process group of its own, in BASE/STEP, with its stdout
# and stderr in files there, and tells provision on its stdout:
#   pv-started PGID        the command runs
#   pv-alive               every 2 s while it does (provision counts silence as a lost host)
#   pv-exit RC             the command ended on its own with status RC (128+N: signal N)
#   pv-stopped RC          it was stopped because provision said so
#   pv-error TEXT          nothing was started (TEXT says why)
# The end of its stdin is provision's order to stop (provision ending the step, or provision or
# the SSH session gone): the command's whole process group gets SIGTERM, and SIGKILL 5 s later.
# When the command ends on its own, what it left running in its group is stopped the same way.
use strict;
use warnings;
use Fcntl qw(O_WRONLY O_CREAT O_EXCL O_NOFOLLOW);
use File::Path qw(remove_tree);
use IO::Select;
use POSIX qw(setsid WNOHANG);
use Time::HiRes qw(time sleep);

$| = 1;
$SIG{PIPE} = 'IGNORE';
my ( $base, $step, $pw, $label, $cmd ) = @ARGV;
$0 = "provision-run $label";
umask 077;

sub refuse {
	print "pv-error $_[0]\n";
	exit 3;
}

defined $cmd or refuse('usage: BASE STEP PASSWORD LABEL COMMAND');
if ( lstat $base ) {
	refuse("$base exists and is not this run's folder (a folder of ours, not a link)")
	  unless -d _ && !-l _ && ( lstat _ )[4] == $>;
} else {
	mkdir $base, 0700 or refuse("cannot make $base: $!");
}
my $dir = "$base/$step";
if ( lstat $dir ) {
	# left by an earlier run with this id whose session was lost: ours, so made anew
	refuse("$dir exists and is not a folder of ours") unless -d _ && !-l _ && ( lstat _ )[4] == $>;
	remove_tree( $dir, { safe => 1 } );
}
mkdir $dir, 0700 or refuse("cannot make $dir: $!");
my $pwfile = "$base/password";
unlink $pwfile;
if ( $pw eq '1' ) {
	my ( $line, $c ) = ('');
	while ( sysread( STDIN, $c, 1 ) ) {
		last if $c eq "\n";
		$line .= $c;
	}
	sysopen( my $f, $pwfile, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0600 )
	  or refuse("cannot write $pwfile: $!");
	print $f "$line\n";
	close $f or refuse("cannot write $pwfile: $!");
}

my $pid = fork;
refuse("fork: $!") unless defined $pid;
if ( $pid == 0 ) {
	setsid();
	chdir $dir or exit 126;
	open( STDIN,  '<', '/dev/null' )   or exit 126;
	open( STDOUT, '>', "$dir/stdout" ) or exit 126;
	open( STDERR, '>', "$dir/stderr" ) or exit 126;
	exec '/bin/sh', '-c', $cmd;
	exit 127;
}
print "pv-started $pid\n";

my ( $rc, $stopped ) = ( undef, 0 );

# Reap the command when it has ended: its status in $rc (128+N for signal N).
sub reap {
	my ($flags) = @_;
	return if defined $rc;
	$rc = $? & 127 ? 128 + ( $? & 127 ) : $? >> 8 if waitpid( $pid, $flags ) == $pid;
}

# Stop what is left of the group: TERM, then KILL after grace seconds.
sub stop_group {
	my ($grace) = @_;
	kill 'TERM', -$pid;
	my $until = time + $grace;
	while ( time < $until ) {
		reap(WNOHANG);
		return unless kill 0, -$pid;
		sleep 0.1;
	}
	kill 'KILL', -$pid;
	reap(0);
}

my $sel = IO::Select->new( \*STDIN );
my $alive = time;
local $SIG{HUP} = local $SIG{TERM} = sub { $stopped = 1 };
while ( !defined $rc && !$stopped ) {
	if ( $sel->can_read(0.2) ) {
		my $buf;
		$stopped = 1 if !sysread( STDIN, $buf, 4096 );
	}
	reap(WNOHANG);
	if ( time - $alive >= 2 ) {
		print "pv-alive\n";
		$alive = time;
	}
}
if ( defined $rc ) {
	stop_group(2);
	unlink $pwfile;
	print "pv-exit $rc\n";
	exit 0;
}
stop_group(5);
reap(0);
unlink $pwfile;
print "pv-stopped " . ( $rc // -1 ) . "\n";
exit 0;
