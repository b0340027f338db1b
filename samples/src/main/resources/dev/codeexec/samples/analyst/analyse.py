# Revenue by region from work/inputs/sales.csv: a chart and a Markdown summary in out/.
# Plain Python (no csv or pandas module: a minimal Python has neither); matplotlib when it is installed.
import os

work = os.environ.get("WORK_DIR", "work")
out = os.environ.get("OUTPUT_DIR", "out")

revenue, units = {}, {}
with open(os.path.join(work, "inputs", "sales.csv")) as f:
    header = f.readline().strip().split(",")
    for line in f:
        row = dict(zip(header, line.strip().split(",")))
        if not row.get("region"):
            continue
        r = row["region"]
        revenue[r] = revenue.get(r, 0.0) + int(row["units"]) * float(row["unit_price"])
        units[r] = units.get(r, 0) + int(row["units"])

ranked = sorted(revenue.items(), key=lambda kv: -kv[1])
total = sum(revenue.values())

try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.5))
    ax.bar([r for r, _ in ranked], [v for _, v in ranked], color="#4C72B0")
    ax.set_title("Revenue by region, Q1 2024")
    ax.set_ylabel("revenue")
    fig.tight_layout()
    chart = "revenue_by_region.png"
    fig.savefig(os.path.join(out, chart), dpi=100)
    print("chart: out/%s (matplotlib)" % chart)
except ImportError:
    # No matplotlib on this backend: the same bar chart as SVG, drawn with plain Python.
    chart = "revenue_by_region.svg"
    # Drawn like the matplotlib chart: a white background, a y axis with ticks and labels, an x axis under the bars.
    width, height, bar, gap = 520, 300, 80, 30
    left, top_y, base = 70, 40, 250           # plot area: x from left, y from top_y down to the baseline
    top = max(v for _, v in ranked)
    step = 10 ** (len("%d" % top) - 1)         # a round tick step: 1000s for revenue in the thousands
    while top / step > 5:
        step *= 2
    ymax = step * (int(top / step) + 1)
    scale = (base - top_y) / ymax
    right = left + gap + len(ranked) * (bar + gap)
    parts = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif">'
             % (max(width, right + 10), height),
             '<rect width="100%" height="100%" fill="white"/>',
             '<text x="%d" y="22" font-size="15">Revenue by region, Q1 2024</text>' % left,
             '<text x="16" y="%d" font-size="12" transform="rotate(-90 16 %d)" text-anchor="middle">revenue</text>'
             % ((top_y + base) // 2, (top_y + base) // 2)]
    tick = 0
    while tick <= ymax:
        y = base - tick * scale
        parts.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/>' % (left, y, right, y))
        parts.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="black"/>' % (left - 5, y, left, y))
        parts.append('<text x="%d" y="%.1f" font-size="11" text-anchor="end">%d</text>' % (left - 8, y + 4, tick))
        tick += step
    for i, (r, v) in enumerate(ranked):
        h = v * scale
        x = left + gap + i * (bar + gap)
        parts.append('<rect x="%d" y="%.1f" width="%d" height="%.1f" fill="#4C72B0"/>' % (x, base - h, bar, h))
        parts.append('<text x="%d" y="%d" font-size="12" text-anchor="middle">%s</text>' % (x + bar // 2, base + 18,
                                                                                          r))
        parts.append('<text x="%d" y="%.1f" font-size="11" text-anchor="middle">%.0f</text>' % (x + bar // 2,
                                                                                              base - h - 5, v))
    parts.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>' % (left, top_y, left, base))   # y axis
    parts.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>' % (left, base, right, base))   # x axis
    parts.append("</svg>")
    with open(os.path.join(out, chart), "w") as f:
        f.write("\n".join(parts) + "\n")
    print("chart: out/%s (matplotlib is not installed here: drawn as SVG with plain Python)" % chart)

lines = ["# Revenue by region, Q1 2024", "",
         "| region | units | revenue | share |", "|---|---:|---:|---:|"]
for r, v in ranked:
    lines.append("| %s | %d | %.2f | %.0f%% |" % (r, units[r], v, 100 * v / total))
best, best_revenue = ranked[0]
lines += ["", "**%s** brings in the most revenue: %.2f of %.2f (%.0f%%)." % (best, best_revenue, total,
                                                                            100 * best_revenue / total),
          "", "![revenue by region](%s)" % chart, ""]
with open(os.path.join(out, "summary.md"), "w") as f:
    f.write("\n".join(lines))
print("\n".join(lines[2:2 + 2 + len(ranked)]))
print("summary: out/summary.md")
