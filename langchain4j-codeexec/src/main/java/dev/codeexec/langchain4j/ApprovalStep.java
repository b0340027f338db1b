package dev.codeexec.langchain4j;

/**
 * Asks the approver about a call that uses the workspace ({@link CallApproval}), before the workspace lock is taken:
 * a call waiting for a human holds up nothing but itself. A denied call ends here, having run and changed nothing.
 */
final class ApprovalStep implements ToolStep {

    private final CallApproval approval;

    ApprovalStep(CallApproval approval) {
        this.approval = approval;
    }

    @Override
    public ToolResult intercept(ToolChain chain) {
        if (chain.work().usesWorkspace()) {
            chain.call().approved(approval.review(chain.call()));
        }
        return chain.proceed();
    }
}
