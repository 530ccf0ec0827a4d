# run/scripts/watch.pl: the server watch of `provision run`. One long-lived process on the
# server: every INTERVAL seconds it reads /proc (no process started per sample) and prints one
# line of rates since the last one:
#   pv-watch cpu= usr= sys= iowait= (% of all cores) smbd= winbindd= samba= self= (% of one
#   core: the processes of that program, this sampler) mem_used= mem_avail= dirty= (MiB) rd= wr=
#   (kB/s, whole disks) inflight= (I/O in flight) net=IFACE:RX:TX,... (kB/s, lo left out)
# With PROCS ("procs", for `copy`) the line also says, for the smbd processes busiest over the
# interval (8 at most), how each used its CPU:
#   procs=PID:CPU:THREADS:TOP:QUOTA,...  (CPU, TOP: % of one core, the process and its busiest
#   thread; QUOTA: % of one core that the CPU controller allows its group, cgroup v1
#   cpu.cfs_quota_us or v2 cpu.max, the tightest on its path; -1: none), or procs=-.
# It waits on its stdin between samples: the end of stdin (provision stopping the watch, or
# gone) ends it. Run as: perl -e "$prog" -- INTERVAL [PROCS]
use strict;
use warnings;
use IO::Select;
use POSIX qw(sysconf _SC_CLK_TCK);
use Time::HiRes qw(time);

$| = 1;
my $interval = shift || 2;
my $procs = ( shift // '' ) eq 'procs';
my $hz = sysconf(_SC_CLK_TCK) || 100;
my %quota_of;    # a cgroup path's quota, for one sample
# procs: only the smbds of this host's network namespace (a container's, or on one machine
# another lab host's, are not this server's)
my $netns = readlink '/proc/self/ns/net';
my %watched = map { $_ => 1 } qw(smbd winbindd samba);

sub slurp {
	open( my $f, '<', $_[0] ) or return '';
	local $/;
	my $s = <$f>;
	close $f;
	return $s // '';
}

# The % of one core the cpu controller lets the group of $pid use (the tightest quota on the
# group's path up to the root), or -1 when none holds it.
sub quota {
	my ($pid) = @_;
	my $best = -1;
	for ( split /\n/, slurp("/proc/$pid/cgroup") ) {
		my ( undef, $ctl, $path ) = split /:/, $_, 3;
		next unless defined $path;
		my @dirs;
		if ( $ctl eq '' ) {
			@dirs = ( [ '/sys/fs/cgroup', 'v2' ] );
		} elsif ( ",$ctl," =~ /,cpu,/ ) {
			@dirs = map { [ $_, 'v1' ] } grep { -d } glob '/sys/fs/cgroup/cpu*';
		} else {
			next;
		}
		for my $d (@dirs) {
			my ( $mnt, $kind ) = @$d;
			my $p = $path;
			while (1) {
				my $q = $quota_of{"$kind$mnt$p"} //= do {
					my $v = -1;
					if ( $kind eq 'v2' ) {
						my ( $max, $per ) = split ' ', slurp("$mnt$p/cpu.max");
						$v = 100 * $max / $per if defined $per && $max =~ /^\d+$/ && $per > 0;
					} else {
						my $max = slurp("$mnt$p/cpu.cfs_quota_us");
						my $per = slurp("$mnt$p/cpu.cfs_period_us");
						chomp( $max, $per );
						$v = 100 * $max / $per if $max =~ /^\d+$/ && $per =~ /^\d+$/ && $per > 0;
					}
					$v;
				};
				$best = $q if $q >= 0 && ( $best < 0 || $q < $best );
				last if $p eq '/' || $p eq '';
				$p =~ s{/[^/]*$}{};
				$p = '/' if $p eq '';
			}
		}
	}
	return $best;
}

# A smbd's CPU ticks: its own, and each of its threads'.
sub proc {
	my ( $pid, $ticks ) = @_;
	my %th;
	if ( opendir( my $d, "/proc/$pid/task" ) ) {
		for my $tid ( grep { /^\d+$/ } readdir $d ) {
			$th{$tid} = $1 + $2
			  if slurp("/proc/$pid/task/$tid/stat") =~ /^\d+ \(.*\) \S+ (?:\S+ ){10}(\d+) (\d+)/s;
		}
		closedir $d;
	}
	return { ticks => $ticks, threads => \%th, quota => quota($pid) };
}

sub snapshot {
	my %s = ( t => time );
	%quota_of = ();
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
				$s{proc}{$pid} = proc( $pid, $t[0] + $t[1] )
				  if $procs && $name eq 'smbd' && ( readlink("/proc/$pid/ns/net") // '' ) eq ( $netns // '' );
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
	my $plist = '';
	if ($procs) {
		my @p;
		for my $pid ( keys %{ $b->{proc} // {} } ) {
			my ( $x, $y ) = ( $a->{proc}{$pid}, $b->{proc}{$pid} );
			my $cpu = ( $y->{ticks} - ( $x ? $x->{ticks} : 0 ) ) / $hz / $dt * 100;
			my $top = 0;
			for my $tid ( keys %{ $y->{threads} } ) {
				my $d = $y->{threads}{$tid} - ( $x ? $x->{threads}{$tid} // 0 : 0 );
				$top = $d if $d > $top;
			}
			# the threads are read just after the process: a thread's share may come out
			# a tick above its process's, never really
			$top = $top / $hz / $dt * 100;
			$top = $cpu if $top > $cpu;
			push @p, [ $pid, $cpu, scalar keys %{ $y->{threads} }, $top, $y->{quota} ];
		}
		# (the package's $a and $b: this sub's own hold the snapshots)
		@p = ( sort { $::b->[1] <=> $::a->[1] || $::a->[0] <=> $::b->[0] } @p )[ 0 .. ( @p < 8 ? $#p : 7 ) ];
		$plist = ' procs=' . ( join( ',', map { sprintf '%d:%.1f:%d:%.1f:%.1f', @$_ } @p ) || '-' );
	}
	return sprintf "pv-watch cpu=%.1f usr=%.1f sys=%.1f iowait=%.1f smbd=%.1f winbindd=%.1f "
	  . "samba=%.1f self=%.2f mem_used=%.1f mem_avail=%.1f dirty=%.1f rd=%.1f wr=%.1f "
	  . "inflight=%d net=%s%s\n",
	  100 * ( 1 - ( $b->{idle} - $a->{idle} ) / $dtot ), 100 * ( $b->{usr} - $a->{usr} ) / $dtot,
	  100 * ( $b->{sys} - $a->{sys} ) / $dtot, 100 * ( $b->{iowait} - $a->{iowait} ) / $dtot,
	  $p{smbd} // 0, $p{winbindd} // 0, $p{samba} // 0, $p{self} // 0,
	  ( $b->{MemTotal} - $b->{MemAvailable} ) / 1024, $b->{MemAvailable} / 1024,
	  ( $b->{Dirty} + $b->{Writeback} ) / 1024, ( $b->{rd} - $a->{rd} ) / 2 / $dt,
	  ( $b->{wr} - $a->{wr} ) / 2 / $dt, $b->{inflight}, join( ',', @net ) || '-', $plist;
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
