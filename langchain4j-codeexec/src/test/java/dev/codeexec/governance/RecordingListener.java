package dev.codeexec.governance;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/** Keeps every event it receives, in order. */
public final class RecordingListener implements ExecutionListener {

    private final List<ExecutionEvent> events = new CopyOnWriteArrayList<>();

    @Override
    public void onEvent(ExecutionEvent event) {
        events.add(event);
    }

    public List<ExecutionEvent> events() {
        return List.copyOf(events);
    }

    public <T extends ExecutionEvent> List<T> of(Class<T> type) {
        return events.stream().filter(type::isInstance).map(type::cast).toList();
    }

    public void clear() {
        events.clear();
    }
}
