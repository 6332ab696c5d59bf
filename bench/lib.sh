# bench/lib.sh: helpers shared by bench/run.sh and bench/net.sh (sourced).

# median: the median of the numbers on stdin, one a line.
median()
{
	sort -g | awk '{ v[NR] = $1 } END { if (NR) print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# fmt_ratio A B: A / B, the slowdown when A is the better of the two.
fmt_ratio()
{
	awk -v a="$1" -v b="$2" 'BEGIN {
		if (a == "na" || b == "na" || a == "" || b == "" || b == 0) { print "n/a"; exit }
		r = a / b
		if (r < 10) printf "%.2f×\n", r; else printf "%.0f×\n", r
	}'
}
