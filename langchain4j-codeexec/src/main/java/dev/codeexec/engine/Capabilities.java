package dev.codeexec.engine;

import java.util.EnumSet;
import java.util.Set;

/**
 * What an engine really does. Never over-claimed: a caller that needs a capability the engine lacks gets an
 * {@link UnsupportedCapabilityException}, not a weaker run.
 *
 * @param isolation        what separates programs from the host
 * @param networkAllowed   true when programs can reach a network by default
 * @param readOnlyMount    true when {@link StageOptions#readOnly()} is enforced (staged directories cannot be written)
 * @param streaming        true when {@link RunProgramSpec#outputListener()} receives output while the program runs
 * @param supportsCleanEnv true when {@link RunProgramSpec#cleanEnv()} really starts from a minimal environment; command
 *                         policies require it
 * @param interactive      true when {@link Engine#interactive()} offers long-running sessions with stdin
 * @param enforcedLimits   the {@link ResourceLimit}s the engine enforces; others are refused
 * @param diskQuota        true when a workspace's disk use is bounded: {@link WorkspacePolicy#maxDiskBytes()} is
 *                         enforced (engines without a quota refuse a policy that sets it)
 * @param commandAllowListEnforcement how far a command policy's allow list holds on this engine:
 *                         {@link CommandAllowListEnforcement#TEXT} (checked before the run; the default) or
 *                         {@link CommandAllowListEnforcement#KERNEL} (also enforced at exec time: the sandbox engine
 *                         built with {@code enforceAllowList(policy)}). Independently of it, the tools decide a
 *                         policy run on the files its command words reach only on engines that run programs on this
 *                         host's file system ({@link Isolation#NONE}, {@link Isolation#OS_SANDBOX}); on the others a
 *                         command written as a path is refused, since the file it names cannot be seen
 * @param egressControl    how an egress policy (the hosts programs may reach) is enforced:
 *                         {@link EgressControl#NONE} (no policy; the default), {@link EgressControl#PROXY} or
 *                         {@link EgressControl#PROVIDER}
 * @param statefulCells    true when python code blocks ({@code execute_code}) run as cells of one interpreter per
 *                         workspace, so that variables, imports and loaded data persist from one block to the next;
 *                         false when every block starts a fresh process
 */
public record Capabilities(Isolation isolation, boolean networkAllowed, boolean readOnlyMount, boolean streaming,
                           boolean supportsCleanEnv, boolean interactive, Set<ResourceLimit> enforcedLimits,
                           boolean diskQuota, CommandAllowListEnforcement commandAllowListEnforcement,
                           EgressControl egressControl, boolean statefulCells) {

    public Capabilities {
        if (isolation == null) {
            throw new IllegalArgumentException("isolation must not be null");
        }
        if (commandAllowListEnforcement == null) {
            commandAllowListEnforcement = CommandAllowListEnforcement.TEXT;
        }
        if (egressControl == null) {
            egressControl = EgressControl.NONE;
        }
        enforcedLimits = enforcedLimits == null || enforcedLimits.isEmpty()
                ? Set.of() : Set.copyOf(EnumSet.copyOf(enforcedLimits));
    }

    /** The capabilities before stateful cells were described: {@code statefulCells} false. */
    public Capabilities(Isolation isolation, boolean networkAllowed, boolean readOnlyMount, boolean streaming,
                        boolean supportsCleanEnv, boolean interactive, Set<ResourceLimit> enforcedLimits,
                        boolean diskQuota, CommandAllowListEnforcement commandAllowListEnforcement,
                        EgressControl egressControl) {
        this(isolation, networkAllowed, readOnlyMount, streaming, supportsCleanEnv, interactive, enforcedLimits,
                diskQuota, commandAllowListEnforcement, egressControl, false);
    }

    /** The capabilities before egress policies existed: {@link EgressControl#NONE}. */
    public Capabilities(Isolation isolation, boolean networkAllowed, boolean readOnlyMount, boolean streaming,
                        boolean supportsCleanEnv, boolean interactive, Set<ResourceLimit> enforcedLimits,
                        boolean diskQuota, CommandAllowListEnforcement commandAllowListEnforcement) {
        this(isolation, networkAllowed, readOnlyMount, streaming, supportsCleanEnv, interactive, enforcedLimits,
                diskQuota, commandAllowListEnforcement, EgressControl.NONE);
    }

    /**
     * Fails closed: throws {@link UnsupportedCapabilityException} naming the engine when it cannot enforce an egress
     * policy ({@link EgressControl#NONE}).
     */
    public void requireEgressControl(String engineName) {
        if (egressControl == EgressControl.NONE) {
            throw new UnsupportedCapabilityException(engineName + " cannot enforce an egress policy (hosts, ports and "
                    + "address ranges): its programs " + (isolation == Isolation.NONE ? "run on this host with its "
                    + "network" : "have no proxy or provider control") + ". Use the sandbox or container engine, or "
                    + "E2B for the rules it can express.");
        }
    }

    /**
     * The old name of {@link #diskQuota()}: it is a flag, not a number of bytes.
     *
     * @deprecated use {@link #diskQuota()}
     */
    @Deprecated
    public boolean maxDiskBytes() {
        return diskQuota;
    }

    /**
     * Fails closed: throws {@link UnsupportedCapabilityException} naming the engine and the limits it cannot enforce
     * when {@code limits} requests any of them.
     */
    public void requireLimits(ResourceLimits limits, String engineName) {
        if (limits == null) {
            return;
        }
        Set<ResourceLimit> missing = EnumSet.noneOf(ResourceLimit.class);
        missing.addAll(limits.requested());
        missing.removeAll(enforcedLimits);
        if (!missing.isEmpty()) {
            throw new UnsupportedCapabilityException(engineName + " cannot enforce the resource limits " + missing
                    + " (it enforces " + (enforcedLimits.isEmpty() ? "none" : enforcedLimits)
                    + "); refusing to run without them. Use a backend that enforces them, or drop the limit.");
        }
    }

    public static Builder builder() {
        return new Builder();
    }

    public Builder toBuilder() {
        return new Builder().isolation(isolation).networkAllowed(networkAllowed).readOnlyMount(readOnlyMount)
                .streaming(streaming).supportsCleanEnv(supportsCleanEnv).interactive(interactive)
                .enforcedLimits(enforcedLimits).diskQuota(diskQuota)
                .commandAllowListEnforcement(commandAllowListEnforcement).egressControl(egressControl)
                .statefulCells(statefulCells);
    }

    /** Builder for {@link Capabilities}; every flag defaults to false (claim nothing). */
    public static final class Builder {
        private Isolation isolation = Isolation.NONE;
        private boolean networkAllowed;
        private boolean readOnlyMount;
        private boolean streaming;
        private boolean supportsCleanEnv;
        private boolean interactive;
        private Set<ResourceLimit> enforcedLimits = Set.of();
        private boolean diskQuota;
        private CommandAllowListEnforcement commandAllowListEnforcement = CommandAllowListEnforcement.TEXT;
        private EgressControl egressControl = EgressControl.NONE;
        private boolean statefulCells;

        public Builder isolation(Isolation isolation) {
            this.isolation = isolation;
            return this;
        }

        public Builder networkAllowed(boolean v) {
            this.networkAllowed = v;
            return this;
        }

        public Builder readOnlyMount(boolean v) {
            this.readOnlyMount = v;
            return this;
        }

        public Builder streaming(boolean v) {
            this.streaming = v;
            return this;
        }

        public Builder supportsCleanEnv(boolean v) {
            this.supportsCleanEnv = v;
            return this;
        }

        public Builder interactive(boolean v) {
            this.interactive = v;
            return this;
        }

        public Builder enforcedLimits(Set<ResourceLimit> v) {
            this.enforcedLimits = v;
            return this;
        }

        /** Whether {@link WorkspacePolicy#maxDiskBytes()} is enforced; see {@link Capabilities#diskQuota()}. */
        public Builder diskQuota(boolean v) {
            this.diskQuota = v;
            return this;
        }

        /**
         * The old name of {@link #diskQuota(boolean)}.
         *
         * @deprecated use {@link #diskQuota(boolean)}
         */
        @Deprecated
        public Builder maxDiskBytes(boolean v) {
            return diskQuota(v);
        }

        /**
         * How far a command policy's allow list holds; see {@link Capabilities#commandAllowListEnforcement()}.
         * Default {@link CommandAllowListEnforcement#TEXT}: claim {@code KERNEL} only where the kernel refuses to
         * execute every program that is not on the list.
         */
        public Builder commandAllowListEnforcement(CommandAllowListEnforcement v) {
            this.commandAllowListEnforcement = v == null ? CommandAllowListEnforcement.TEXT : v;
            return this;
        }

        /** How an egress policy is enforced; default {@link EgressControl#NONE}: claim nothing. */
        public Builder egressControl(EgressControl v) {
            this.egressControl = v == null ? EgressControl.NONE : v;
            return this;
        }

        /** Whether python blocks keep their state between blocks; see {@link Capabilities#statefulCells()}. */
        public Builder statefulCells(boolean v) {
            this.statefulCells = v;
            return this;
        }

        public Capabilities build() {
            return new Capabilities(isolation, networkAllowed, readOnlyMount, streaming, supportsCleanEnv,
                    interactive, enforcedLimits, diskQuota, commandAllowListEnforcement, egressControl, statefulCells);
        }
    }
}
