# tests/fuzz/perl/Devel/PvCov.pm: the line coverage of one Perl file, for the fuzz target of
# samba/scripts/keytab.pl (tests/fuzz/fuzz_keytab.pl; no Devel::Cover needed): perl -d:PvCov
# calls DB::DB before every statement; report(FILE) prints "covered N of M", M being the
# lines of FILE that start a statement (B::Concise's nextstate ops).
package Devel::PvCov;
use strict;
use warnings;

my %hit;

sub report {
	my ($file) = @_;
	my ($base) = $file =~ m{([^/]+)$};
	my %all = map { $_ => 1 }
		`perl -MO=Concise,-exec,-stash=main,-main "$file" 2>/dev/null` =~ /\Q$base\E:(\d+)/g;
	my $n = grep { $all{$_} } keys %{$hit{$base} // {}};
	printf "covered %d of %d\n", $n, scalar keys %all;
}

package DB;

sub DB {
	my (undef, $f, $l) = caller;
	$hit{$1}{$l} = 1 if $f =~ m{([^/]+)$};
}

1;
