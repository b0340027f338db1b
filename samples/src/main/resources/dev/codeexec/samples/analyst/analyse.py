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
    width, height, bar = 480, 260, 80
    top = max(v for _, v in ranked)
    parts = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d">' % (width, height),
             '<text x="10" y="20" font-size="14">Revenue by region, Q1 2024</text>']
    for i, (r, v) in enumerate(ranked):
        h = int(180 * v / top)
        x = 30 + i * (bar + 30)
        parts.append('<rect x="%d" y="%d" width="%d" height="%d" fill="#4C72B0"/>' % (x, 220 - h, bar, h))
        parts.append('<text x="%d" y="240" font-size="12">%s</text>' % (x, r))
        parts.append('<text x="%d" y="%d" font-size="11">%.0f</text>' % (x, 215 - h, v))
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
