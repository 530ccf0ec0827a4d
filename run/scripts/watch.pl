# run/scripts/watch.pl: the server watch of `provision run`. One long-lived process on the
# server: every INTERVAL seconds it reads /proc (no process started per sample) and prints one
# line of rates since the last one:
#   pv-watch cpu= usr= sys= iowait= (% of all cores) smbd= winbindd= samba= self= (% of one
#   core: the processes of that program, this sampler) mem_used= mem_avail= dirty= (MiB) rd= wr=
#   (kB/s, whole disks) inflight= (I/O in flight) net=IFACE:RX:TX,... (kB/s, lo left out)
# It waits on its stdin between samples: the end of stdin (provision stopping the watch, or
# gone) ends it. Run as: perl -e "$prog" -- INTERVAL
use strict;
use warnings;
use IO::Select;
use POSIX qw(sysconf _SC_CLK_TCK);
use Time::HiRes qw(time);

$| = 1;
my $interval = shift || 2;
my $hz = sysconf(_SC_CLK_TCK) || 100;
my %watched = map { $_ => 1 } qw(smbd winbindd samba);

sub slurp {
	open( my $f, '<', $_[0] ) or return '';
	local $/;
	my $s = <$f>;
	close $f;
	return $s // '';
}

sub snapshot {
	my %s = ( t => time );
	my ($cpu) = slurp('/proc/stat') =~ /^cpu\s+(.*)$/m;
	my @c = split ' ', $cpu // '';
	$s{total} = 0;
	$s{total} += $_ for @c[ 0 .. ( $#c < 7 ? $#c : 7 ) ];
	$s{idle}   = ( $c[3] // 0 ) + ( $c[4] // 0 );
	$s{usr}    = ( $c[0] // 0 ) + ( $c[1] // 0 );
	$s{sys}    = ( $c[2] // 0 ) + ( $c[5] // 0 ) + ( $c[6] // 0 );
	$s{iowait} = $c[4] // 0;
	# CPU ticks by program: each process's own and those of its children it has reaped
	# (cutime, cstime). A connection's smbd is reaped by the smbd that forked it, so its ticks
	# stay in the sum when it ends between two samples; the difference of two sums is what the
	# program used in between, short-lived processes included. The program is the executable's
	# name (the AD DC's workers rename themselves, "ldap[worker 0]", but run /usr/sbin/samba),
	# else the process's.
	if ( opendir( my $d, '/proc' ) ) {
		for my $pid ( grep { /^\d+$/ } readdir $d ) {
			my $st = slurp("/proc/$pid/stat");
			next unless $st =~ /^\d+ \((.*)\) \S+ (?:\S+ ){10}(\d+) (\d+) (\d+) (\d+)/s;
			my ( $comm, @t ) = ( $1, $2, $3, $4, $5 );
			my $exe = readlink "/proc/$pid/exe";
			my $name = defined $exe ? ( $exe =~ s{.*/}{}r =~ s/ \(deleted\)$//r ) : $comm;
			if ( $pid == $$ ) {
				$s{ticks}{self} += $t[0] + $t[1];
			} elsif ( $watched{$name} ) {
				$s{ticks}{$name} += $t[0] + $t[1] + $t[2] + $t[3];
			}
		}
		closedir $d;
	}
	my %whole = map { $_ => 1 } grep { !/^(loop|ram|zram|dm-)/ } map { s{.*/}{}r } glob '/sys/block/*';
	( $s{rd}, $s{wr}, $s{inflight} ) = ( 0, 0, 0 );
	for ( split /\n/, slurp('/proc/diskstats') ) {
		my @f = split ' ';
		next unless @f >= 12 && $whole{ $f[2] };
		$s{rd} += $f[5];
		$s{wr} += $f[9];
		$s{inflight} += $f[11];
	}
	for ( split /\n/, slurp('/proc/net/dev') ) {
		next unless /^\s*([^:\s]+):\s*(.*)$/;
		next if $1 eq 'lo';
		my @f = split ' ', $2;
		$s{net}{$1} = [ $f[0], $f[8] ];
	}
	my $m = slurp('/proc/meminfo');
	for my $k (qw(MemTotal MemAvailable Dirty Writeback)) {
		$s{$k} = $m =~ /^$k:\s+(\d+)/m ? $1 : 0;
	}
	return \%s;
}

sub line {
	my ( $a, $b ) = @_;
	my $dt = $b->{t} - $a->{t} || 1;
	my $dtot = $b->{total} - $a->{total} || 1;
	my %p;
	for my $name ( keys %{ $b->{ticks} } ) {
		my $d = $b->{ticks}{$name} - ( $a->{ticks}{$name} // 0 );
		$p{$name} = $d > 0 ? $d / $hz / $dt * 100 : 0;
	}
	my @net = map {
		my $o = $a->{net}{$_} // $b->{net}{$_};
		sprintf '%s:%.1f:%.1f', $_, ( $b->{net}{$_}[0] - $o->[0] ) / 1024 / $dt,
		  ( $b->{net}{$_}[1] - $o->[1] ) / 1024 / $dt
	} sort keys %{ $b->{net} };
	return sprintf "pv-watch cpu=%.1f usr=%.1f sys=%.1f iowait=%.1f smbd=%.1f winbindd=%.1f "
	  . "samba=%.1f self=%.2f mem_used=%.1f mem_avail=%.1f dirty=%.1f rd=%.1f wr=%.1f "
	  . "inflight=%d net=%s\n",
	  100 * ( 1 - ( $b->{idle} - $a->{idle} ) / $dtot ), 100 * ( $b->{usr} - $a->{usr} ) / $dtot,
	  100 * ( $b->{sys} - $a->{sys} ) / $dtot, 100 * ( $b->{iowait} - $a->{iowait} ) / $dtot,
	  $p{smbd} // 0, $p{winbindd} // 0, $p{samba} // 0, $p{self} // 0,
	  ( $b->{MemTotal} - $b->{MemAvailable} ) / 1024, $b->{MemAvailable} / 1024,
	  ( $b->{Dirty} + $b->{Writeback} ) / 1024, ( $b->{rd} - $a->{rd} ) / 2 / $dt,
	  ( $b->{wr} - $a->{wr} ) / 2 / $dt, $b->{inflight}, join( ',', @net ) || '-';
}

my $sel = IO::Select->new( \*STDIN );
my $prev = snapshot();
printf "pv-watch-start interval=%s hz=%d\n", $interval, $hz;
my $next = $prev->{t} + $interval;
while (1) {
	my $wait = $next - time;
	if ( $wait > 0 && $sel->can_read($wait) ) {
		my $buf;
		exit 0 if !sysread( STDIN, $buf, 4096 );    # the end of stdin: stop
		next;
	}
	my $now = snapshot();
	print line( $prev, $now );
	$prev = $now;
	$next += $interval;
	$next = time + $interval if $next < time;
}
