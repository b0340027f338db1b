package dev.codeexec.e2b;

/**
 * The sandbox template this engine was configured with does not exist for this API key (HTTP 404 on sandbox
 * creation). Not retried: fix {@code E2bEngine.Builder.template} or build the template first.
 */
public final class E2bTemplateNotFoundException extends E2bApiException {

    private final String template;

    public E2bTemplateNotFoundException(String message, String template, int httpStatus, String errorCode) {
        super(message, httpStatus, errorCode);
        this.template = template;
    }

    /** The template that was asked for. */
    public String template() {
        return template;
    }
}
