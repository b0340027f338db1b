package dev.codeexec.kubernetes;

import java.time.Duration;
import java.util.function.BooleanSupplier;

/** Waits for a condition the code under test brings about on its own threads; the bound only ends a hung test. */
final class Await {

    private Await() {
    }

    static void until(String what, BooleanSupplier condition) {
        long end = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > end) {
                throw new AssertionError("never happened: " + what);
            }
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted waiting for " + what);
            }
        }
    }
}
