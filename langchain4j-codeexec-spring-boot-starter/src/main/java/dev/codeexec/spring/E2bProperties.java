package dev.codeexec.spring;

import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.boot.convert.DurationUnit;

/** Settings of the e2b backend (E2B cloud sandboxes, billed while they run). */
public class E2bProperties {

    /** The E2B API key (default: the environment variable E2B_API_KEY). Required one way or the other. */
    private String apiKey;

    /** The E2B domain (default: E2B_DOMAIN, else e2b.app). */
    private String domain;

    /** The control plane's URL (default: E2B_API_URL, else https://api.<domain>). */
    private String apiUrl;

    /** One data-plane URL for every sandbox, such as a proxy (default: E2B_SANDBOX_URL, else each sandbox's own). */
    private String sandboxUrl;

    /** The sandbox template (default code-interpreter-v1, E2B's Python code interpreter). */
    private String template;

    /**
     * sandbox-per-workspace (a VM each, the default) or shared-sandbox (one sandbox for all workspaces, which then
     * see each other's files and processes: only for workspaces that trust each other).
     */
    private String workspaceMode;

    /** An existing sandbox to keep all workspaces in (implies shared-sandbox); never killed by the engine. */
    private String sharedSandboxId;

    /** How long a sandbox lives past its last renewal, so that an abandoned one stops (default 300s, at least 10s). */
    @DurationUnit(ChronoUnit.SECONDS)
    private Duration sandboxTimeout;

    /** How long one request to E2B may take to be answered (default 60s). */
    @DurationUnit(ChronoUnit.SECONDS)
    private Duration requestTimeout;

    /** Whether programs in the sandboxes may reach the internet; default false. */
    private boolean internetAccess;

    /** Metadata added to every sandbox the engine creates, to find them in the E2B dashboard. */
    private Map<String, String> metadata = new LinkedHashMap<>();

    /** The Linux user of the sandbox that programs run as (default user, the templates' user). */
    private String user;

    /** The sandbox folder that holds the workspaces (default /home/<user>/workspaces). */
    private String baseDir;

    /**
     * Whether python code blocks run in the template's code interpreter, keeping state across blocks (default:
     * true for templates whose name starts with code-interpreter).
     */
    private Boolean codeInterpreter;

    public String getApiKey() {
        return apiKey;
    }

    public void setApiKey(String apiKey) {
        this.apiKey = apiKey;
    }

    public String getDomain() {
        return domain;
    }

    public void setDomain(String domain) {
        this.domain = domain;
    }

    public String getApiUrl() {
        return apiUrl;
    }

    public void setApiUrl(String apiUrl) {
        this.apiUrl = apiUrl;
    }

    public String getSandboxUrl() {
        return sandboxUrl;
    }

    public void setSandboxUrl(String sandboxUrl) {
        this.sandboxUrl = sandboxUrl;
    }

    public String getTemplate() {
        return template;
    }

    public void setTemplate(String template) {
        this.template = template;
    }

    public String getWorkspaceMode() {
        return workspaceMode;
    }

    public void setWorkspaceMode(String workspaceMode) {
        this.workspaceMode = workspaceMode;
    }

    public String getSharedSandboxId() {
        return sharedSandboxId;
    }

    public void setSharedSandboxId(String sharedSandboxId) {
        this.sharedSandboxId = sharedSandboxId;
    }

    public Duration getSandboxTimeout() {
        return sandboxTimeout;
    }

    public void setSandboxTimeout(Duration sandboxTimeout) {
        this.sandboxTimeout = sandboxTimeout;
    }

    public Duration getRequestTimeout() {
        return requestTimeout;
    }

    public void setRequestTimeout(Duration requestTimeout) {
        this.requestTimeout = requestTimeout;
    }

    public boolean isInternetAccess() {
        return internetAccess;
    }

    public void setInternetAccess(boolean internetAccess) {
        this.internetAccess = internetAccess;
    }

    public Map<String, String> getMetadata() {
        return metadata;
    }

    public void setMetadata(Map<String, String> metadata) {
        this.metadata = metadata;
    }

    public String getUser() {
        return user;
    }

    public void setUser(String user) {
        this.user = user;
    }

    public String getBaseDir() {
        return baseDir;
    }

    public void setBaseDir(String baseDir) {
        this.baseDir = baseDir;
    }

    public Boolean getCodeInterpreter() {
        return codeInterpreter;
    }

    public void setCodeInterpreter(Boolean codeInterpreter) {
        this.codeInterpreter = codeInterpreter;
    }

    /** Never shows the key. */
    @Override
    public String toString() {
        return "E2b{apiKey=" + (apiKey == null ? "unset" : "****") + ", apiUrl=" + apiUrl + ", template="
                + template + ", workspaceMode=" + workspaceMode + "}";
    }
}
