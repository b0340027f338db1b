# Describes the revenue of each sale with tinystats, installed into work/lib from the package index.
import csv
import os
import sys

sys.path.insert(0, "work/lib")
import tinystats  # noqa: E402

with open("work/inputs/sales.csv", newline="") as f:
    revenue = [int(r["units"]) * float(r["unit_price"]) for r in csv.DictReader(f)]

print("tinystats", tinystats.__version__, "from", os.path.relpath(tinystats.__file__))
for key, value in tinystats.describe(revenue).items():
    print(f"{key}: {value}")
