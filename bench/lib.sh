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

# readme_block MARKER TABLE: put TABLE's text into README.md between
# <!-- MARKER --> and <!-- /MARKER -->.
readme_block()
{
	python3 - "$1" "$2" README.md <<'PY'
import re, sys
marker, table = sys.argv[1], open(sys.argv[2]).read().rstrip("\n")
readme = open(sys.argv[3]).read()
new, n = re.subn(r"(<!-- %s -->\n).*?(<!-- /%s -->)" % (marker, marker),
                 lambda m: m.group(1) + table + "\n" + m.group(2), readme, flags=re.S)
if n != 1:
    sys.exit("bench: README.md has no <!-- %s --> ... <!-- /%s --> block" % (marker, marker))
open(sys.argv[3], "w").write(new)
print("bench: README.md updated (%s)" % marker)
PY
}
