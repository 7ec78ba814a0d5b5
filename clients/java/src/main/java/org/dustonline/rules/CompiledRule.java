package org.dustonline.rules;

import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

/**
 * A rule's context compiled once, with its transformation parsed. The context is matched
 * against the whole URL ({@link Matcher#matches()}, Python's {@code fullmatch}), with
 * {@link Pattern#UNIX_LINES} so that '.' stops only at '\n' as in Python; Java's default
 * \d \w \s are the ASCII classes Python compiles with {@code re.ASCII}.
 */
public final class CompiledRule {
    /** Deep backtracking over a long URL can exhaust a thread's stack: retried on one this big. */
    static final long DEEP_STACK = 1L << 30;

    public final Rule rule;
    private final Pattern pattern;
    private final Transformation transformation;

    CompiledRule(Rule rule) {
        this.rule = rule;
        PathEdits.admitSubsumed(rule); // first, as Python's _admit checks it
        if (rule.isHostRule()) { // a host rule from outside moves URLs: checked as Python checks it
            HostRules.admit(rule);
        } else if (rule.isEditRule()) {
            PathEdits.admit(rule);
        }
        try {
            this.pattern = Pattern.compile(rule.context, Pattern.UNIX_LINES);
        } catch (PatternSyntaxException e) {
            throw new RuleException("rule " + rule.id + ": bad context regex: " + e.getDescription(), "bad-rule",
                    rule.id);
        }
        try {
            this.transformation = Transformation.parse(rule.transformation, pattern.matcher("").groupCount());
        } catch (IllegalArgumentException e) {
            throw new RuleException("rule " + rule.id + ": " + e.getMessage(), "bad-rule", rule.id);
        }
    }

    /** The rule's output for {@code url}, or null when the context does not match it. */
    public String apply(String url) {
        try {
            return applyHere(url);
        } catch (StackOverflowError e) {
            return applyOnDeepStack(url);
        }
    }

    private String applyHere(String url) {
        Matcher m = pattern.matcher(url);
        return m.matches() ? transformation.apply(m) : null;
    }

    private String applyOnDeepStack(String url) {
        String[] out = new String[1];
        RuntimeException[] err = new RuntimeException[1];
        Thread t = new Thread(null, () -> {
            try {
                out[0] = applyHere(url);
            } catch (RuntimeException e) {
                err[0] = e;
            }
        }, "dustonline-deep-match", DEEP_STACK);
        t.start();
        try {
            t.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while matching rule " + rule.id, e);
        }
        if (err[0] != null) {
            throw err[0];
        }
        return out[0];
    }
}
