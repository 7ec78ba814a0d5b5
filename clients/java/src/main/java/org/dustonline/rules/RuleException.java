package org.dustonline.rules;

/**
 * A rule record that is not applied, with a short {@link #reason()} to count it by, as
 * Python's {@code RuleError}: {@code unknown-format}, {@code bad-rule} (a context Java
 * cannot compile or a bad transformation), {@code not-a-rule} (not a rule record).
 */
public class RuleException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;
    private final String reason;
    private final String ruleId;

    public RuleException(String message, String reason, String ruleId) {
        super(message);
        this.reason = reason;
        this.ruleId = ruleId == null ? "" : ruleId;
    }

    public String reason() {
        return reason;
    }

    public String ruleId() {
        return ruleId;
    }
}
