package dev.codeexec.benchmarks;

import java.util.Arrays;

/** Order statistics of timing samples, in microseconds. */
public final class Stats {

    private final long[] micros;

    public Stats(long[] nanos) {
        this.micros = Arrays.stream(nanos).map(n -> n / 1000).sorted().toArray();
    }

    public double median() {
        return percentile(50);
    }

    public double percentile(double p) {
        int i = (int) Math.round(p / 100.0 * (micros.length - 1));
        return micros[i];
    }

    @Override
    public String toString() {
        return String.format("median %.0f us, p10 %.0f us, p90 %.0f us (n=%d)", median(), percentile(10),
                percentile(90), micros.length);
    }
}
