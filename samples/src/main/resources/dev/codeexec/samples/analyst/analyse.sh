# Revenue by region from work/inputs/sales.csv with awk, for a backend whose Python cannot run the analysis:
# the same Markdown summary and an SVG chart in out/.
set -eu
work=${WORK_DIR:-work}
out=${OUTPUT_DIR:-out}
awk -F, -v out="$out" '
NR > 1 && $2 != "" { rev[$2] += $4 * $5; units[$2] += $4; total += $4 * $5 }
END {
  n = 0
  for (r in rev) names[++n] = r
  for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (rev[names[j]] > rev[names[i]]) {
    t = names[i]; names[i] = names[j]; names[j] = t
  }
  md = out "/summary.md"; svg = out "/revenue_by_region.svg"
  print "# Revenue by region, Q1 2024\n" > md
  print "| region | units | revenue | share |" > md
  print "|---|---:|---:|---:|" > md
  for (i = 1; i <= n; i++) {
    r = names[i]
    line = sprintf("| %s | %d | %.2f | %.0f%% |", r, units[r], rev[r], 100 * rev[r] / total)
    print line > md; print line
  }
  best = names[1]
  printf "\n**%s** brings in the most revenue: %.2f of %.2f (%.0f%%).\n\n", best, rev[best], total, 100 * rev[best] / total > md
  print "![revenue by region](revenue_by_region.svg)" > md
  # The same chart as the fallback of analyse.py: a white background, a y axis with ticks, an x axis.
  left = 70; top_y = 40; base = 250; bar = 80; gap = 30
  top = rev[best]; step = 10 ^ (length(sprintf("%d", top)) - 1)
  while (top / step > 5) step *= 2
  ymax = step * (int(top / step) + 1); scale = (base - top_y) / ymax; right = left + gap + n * (bar + gap)
  printf "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"300\" font-family=\"sans-serif\">\n", \
    (right + 10 > 520 ? right + 10 : 520) > svg
  print "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>" > svg
  printf "<text x=\"%d\" y=\"22\" font-size=\"15\">Revenue by region, Q1 2024</text>\n", left > svg
  mid = int((top_y + base) / 2)
  printf "<text x=\"16\" y=\"%d\" font-size=\"12\" transform=\"rotate(-90 16 %d)\" text-anchor=\"middle\">revenue</text>\n", mid, mid > svg
  for (tick = 0; tick <= ymax; tick += step) {
    y = base - tick * scale
    printf "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/>\n", left, y, right, y > svg
    printf "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"black\"/>\n", left - 5, y, left, y > svg
    printf "<text x=\"%d\" y=\"%.1f\" font-size=\"11\" text-anchor=\"end\">%d</text>\n", left - 8, y + 4, tick > svg
  }
  for (i = 1; i <= n; i++) {
    h = rev[names[i]] * scale; x = left + gap + (i - 1) * (bar + gap)
    printf "<rect x=\"%d\" y=\"%.1f\" width=\"%d\" height=\"%.1f\" fill=\"#4C72B0\"/>\n", x, base - h, bar, h > svg
    printf "<text x=\"%d\" y=\"%d\" font-size=\"12\" text-anchor=\"middle\">%s</text>\n", x + bar / 2, base + 18, names[i] > svg
    printf "<text x=\"%d\" y=\"%.1f\" font-size=\"11\" text-anchor=\"middle\">%.0f</text>\n", x + bar / 2, base - h - 5, rev[names[i]] > svg
  }
  printf "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"black\"/>\n", left, top_y, left, base > svg
  printf "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"black\"/>\n", left, base, right, base > svg
  print "</svg>" > svg
  print "chart: out/revenue_by_region.svg (drawn with awk)"
  print "summary: out/summary.md"
}' "$work/inputs/sales.csv"
