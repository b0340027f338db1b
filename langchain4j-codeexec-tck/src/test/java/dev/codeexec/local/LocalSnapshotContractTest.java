package dev.codeexec.local;

import dev.codeexec.engine.Engine;
import dev.codeexec.tck.SnapshotContractTest;

class LocalSnapshotContractTest extends SnapshotContractTest {

    @Override
    protected Engine createEngine() {
        return LocalEngine.create();
    }
}
