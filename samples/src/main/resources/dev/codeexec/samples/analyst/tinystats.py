"""tinystats: descriptive statistics of a list of numbers, in plain Python (a package of the sample's own index)."""

__version__ = "0.1.0"


def describe(values):
    """Count, sum, mean, median, minimum and maximum of `values` (numbers or numeric strings)."""
    xs = sorted(float(v) for v in values)
    if not xs:
        raise ValueError("describe() needs at least one value")
    n = len(xs)
    mid = n // 2
    median = xs[mid] if n % 2 else (xs[mid - 1] + xs[mid]) / 2
    total = sum(xs)
    return {"count": n, "sum": round(total, 2), "mean": round(total / n, 2), "median": round(median, 2),
            "min": xs[0], "max": xs[-1]}
