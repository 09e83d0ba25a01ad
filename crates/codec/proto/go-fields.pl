#!/usr/bin/perl
# Derives go-fields.txt from the upstream Go types (see README.md). Input on stdin: lines
# "<proto package>\t<Go source line>". Output: one line per proto field whose JSON form cannot be
# read from the .proto files alone:
#   <message>.<field> json=<name>   the Go json tag differs from the proto field name
#   <message>.<field> inline        an embedded struct (`json:",inline"`): its fields are the parent's
#   <message>.<field> pointer       a pointer to a scalar: a zero value on the wire is kept
#   <message>.<field> always        a scalar without `omitempty`/`omitzero`, or a non-pointer Time
#                                   without `omitzero`: Go writes it
#                                   even when zero (as `null` for a Time)
use strict;
use warnings;

my @lines = <STDIN>;
my %scalar = map { $_ => 1 } qw(string bool byte int int32 int64 uint32 uint64 float32 float64 UID);
for (@lines) {
    my (undef, $line) = split /\t/, $_, 2;
    $scalar{$1} = 1 if $line =~ /^type\s+(\w+)\s+(string|bool|u?int(32|64)?|float64)\s*(\/\/.*)?$/;
}
my $struct = "";
for (@lines) {
    my ($pkg, $line) = split /\t/, $_, 2;
    if ($line =~ /^type\s+(\w+)\s+struct\s*\{/) { $struct = $1; next; }
    if ($line =~ /^\}/) { $struct = ""; next; }
    next unless $struct;
    # An embedded struct with `json:",inline"`: its fields appear in the parent's JSON object.
    if ($line =~ /^\s+\*?[\w.]+\s+`json:",inline".*protobuf:"\w+,\d+,opt,name=([^,"]+)/) {
        print "$pkg.$struct.$1 inline\n";
        next;
    }
    next unless $line =~ /^\s+\w+\s+(\S+)\s+`.*json:"([^"]*)".*protobuf:"\w+,\d+,(opt|req|rep),name=([^,"]+)/;
    my ($type, $json, $card, $name) = ($1, $2, $3, $4);
    my @facts;
    my ($json_name) = split /,/, $json;
    push @facts, "json=$json_name" if $json_name ne "" && $json_name ne "-" && $json_name ne $name;
    (my $base = $type) =~ s/^\*//;
    $base =~ s/^\w+\.//;
    if ($card ne "rep" && $scalar{$base}) {
        if ($type =~ /^\*/) { push @facts, "pointer"; }
        elsif ($json !~ /,omit(empty|zero)/) { push @facts, "always"; }
    }
    # A non-pointer Time is a struct, which `omitempty` never drops (only `omitzero` does): Go
    # writes `null` when zero.
    push @facts, "always" if $card ne "rep" && $type =~ /^(\w+\.)?(Micro)?Time$/ && $json !~ /,omitzero/;
    print "$pkg.$struct.$name @facts\n" if @facts;
}
