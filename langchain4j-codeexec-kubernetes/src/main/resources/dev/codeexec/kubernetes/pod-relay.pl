# codeexec-relay: the egress relay of a workspace pod (see PodRelay.java and TunnelFrames.java).
# argv: PORT. Listens on 127.0.0.1:PORT and carries each accepted connection over stdin/stdout as frames
# [type u8][id u32][length u32][payload]; prints a READY frame once it listens. One process, one select loop; a
# connection whose program does not read is buffered up to HIGH bytes in all, then stdin waits. Exits on the end of
# stdin, on BYE, or on a malformed frame (status 3); when it cannot listen, status 125 and the reason on stderr.
use strict; use Socket; use Fcntl;
my ($READY, $OPEN, $DATA, $END, $CLOSE, $BYE) = (1, 2, 3, 4, 5, 6);
my ($MAXP, $MAXC, $HIGH) = (32768, 512, 1 << 20);
my $port = $ARGV[0];
$SIG{PIPE} = 'IGNORE';
binmode STDIN; binmode STDOUT;
sub fail { print STDERR "codeexec-relay: $_[0]\n"; exit 125 }
sub nb { my $f = fcntl($_[0], F_GETFL, 0); fcntl($_[0], F_SETFL, $f | O_NONBLOCK) }
sub out {
    my $p = defined $_[2] ? $_[2] : '';
    my $b = pack('CNN', $_[0], $_[1], length $p) . $p;
    while (length $b) {
        my $n = syswrite(STDOUT, $b);
        if (!defined $n) { next if $!{EINTR}; exit 0 }
        substr($b, 0, $n) = '';
    }
}
socket(my $l, PF_INET, SOCK_STREAM, 0) or fail("socket: $!");
setsockopt($l, SOL_SOCKET, SO_REUSEADDR, 1);
my $bound;
for (1 .. 100) {
    if (bind($l, pack_sockaddr_in($port, inet_aton('127.0.0.1')))) { $bound = 1; last }
    select(undef, undef, undef, 0.1);  # a relay that is ending may hold the port a moment longer
}
$bound or fail("cannot listen on 127.0.0.1:$port: $!");
listen($l, 128) or fail("cannot listen on 127.0.0.1:$port: $!");
nb($l);
my (%c, $in, $next);
$in = ''; $next = 0;
sub settle {
    my $k = shift; my $x = $c{$k} or return;
    return if length $x->{out};
    if ($x->{close} || ($x->{shut} && $x->{eof})) {
        close $x->{s}; delete $c{$k};
        out($CLOSE, $k) unless $x->{close};
    } elsif ($x->{shut} && !$x->{shutdone}) {
        shutdown($x->{s}, 1); $x->{shutdone} = 1;
    }
}
sub drop { my $k = shift; close $c{$k}{s}; delete $c{$k}; out($CLOSE, $k) }
sub bad { print STDERR "codeexec-relay: a malformed frame from the engine\n"; exit 3 }
sub frames {
    while (length($in) >= 9) {
        my ($t, $id, $len) = unpack('CNN', $in);
        if ($t == $DATA) { bad() if $len > $MAXP } elsif ($t == $END || $t == $CLOSE || $t == $BYE) { bad() if $len } else { bad() }
        last if length($in) < 9 + $len;
        my $p = substr($in, 9, $len); substr($in, 0, 9 + $len) = '';
        exit 0 if $t == $BYE;
        my $x = $c{$id};
        if (!$x) { out($CLOSE, $id) unless $t == $CLOSE; next }  # not ours (any more): the engine forgets it too
        if ($t == $DATA) { $x->{out} .= $p unless $x->{shut} || $x->{close} }
        elsif ($t == $END) { $x->{shut} = 1 }
        else { $x->{close} = 1; $x->{eof} = 1 }
        settle($id);
    }
}
out($READY, 0);
while (1) {
    my ($r, $w) = ('', '');
    my $held = 0; $held += length $_->{out} for values %c;
    vec($r, fileno(STDIN), 1) = 1 if $held < $HIGH;
    vec($r, fileno($l), 1) = 1 if keys(%c) < $MAXC;
    for my $x (values %c) {
        vec($r, fileno($x->{s}), 1) = 1 unless $x->{eof};
        vec($w, fileno($x->{s}), 1) = 1 if length $x->{out};
    }
    my $n = select($r, $w, undef, undef);
    if ($n < 0) { next if $!{EINTR}; exit 1 }
    if (vec($r, fileno($l), 1) && accept(my $s, $l)) {
        nb($s); $next++; $c{$next} = { s => $s, out => '' }; out($OPEN, $next);
    }
    for my $k (keys %c) {
        my $x = $c{$k} or next;
        my $f = fileno($x->{s});
        if (length $x->{out} && vec($w, $f, 1)) {
            my $m = syswrite($x->{s}, $x->{out});
            if (defined $m) { substr($x->{out}, 0, $m) = '' } elsif (!$!{EAGAIN} && !$!{EINTR}) { drop($k); next }
        }
        if (!$x->{eof} && vec($r, $f, 1)) {
            my $buf; my $m = sysread($x->{s}, $buf, $MAXP);
            if ($m) { out($DATA, $k, $buf) }
            elsif (defined $m) { $x->{eof} = 1; out($END, $k) }
            elsif (!$!{EAGAIN} && !$!{EINTR}) { drop($k); next }
        }
        settle($k);
    }
    if (vec($r, fileno(STDIN), 1)) {
        my $m = sysread(STDIN, $in, 65536, length $in);
        if (!defined $m) { next if $!{EINTR}; exit 0 }
        exit 0 if $m == 0;
        frames();
    }
}
