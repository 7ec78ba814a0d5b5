package org.dustonline.rules;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Set;

/**
 * One rule record (clients/conformance/rule.schema.json, docs/formats.md "Rules"). Read as
 * Python reads it (msgspec): the four required fields must be there, every field must have
 * its JSON type (an integer field takes no 1.5 and no 1e2), unknown fields are ignored.
 */
public final class Rule {
    public static final String ACTIVE = "active";
    public static final String RETIRED = "retired";
    /** The record formats this reader knows; absent is 1. */
    public static final Set<Long> FORMATS = Set.of(1L);
    /** {@code hosts == ["*"]}: a parameter rule of every host but {@code except_hosts}. */
    public static final String EVERY_HOST = "*";

    private static final ObjectMapper JSON = new ObjectMapper();

    public final String id;
    public final List<String> hosts;
    public final String context;
    public final String transformation;
    public final long support;
    public final double fpr;
    public final long freq;
    public final long version;
    public final String status;
    public final double updated;
    /** null when the record has none (a rewrite or scheme rule). */
    public final String dropParam;
    /** null when the record has none. */
    public final String canonicalScheme;
    /** A host rule's target (Python's {@code canonical_host}): null when the record has none. */
    public final String canonicalHost;
    /** A path-edit rule's edit (Python's {@code normalize}): null when the record has none. */
    public final String normalize;
    /** null when the record has none (format 1). */
    public final Long format;
    /** A parameter rule of every host ({@code hosts == ["*"]}): the hosts it does not apply
     * on (Python's {@code except_hosts}); empty when the record has none. */
    public final List<String> exceptHosts;
    /** A rewrite rule that only does what this path edit does (Python's {@code subsumed_by}:
     * {@code sort-query}, {@code lowercase-path}): not tried on a host that has the edit. Null
     * when the record has none. */
    public final String subsumedBy;

    public Rule(String id, List<String> hosts, String context, String transformation, long support, double fpr,
            long freq, long version, String status, double updated, String dropParam, String canonicalScheme,
            Long format) {
        this(id, hosts, context, transformation, support, fpr, freq, version, status, updated, dropParam,
                canonicalScheme, null, format);
    }

    public Rule(String id, List<String> hosts, String context, String transformation, long support, double fpr,
            long freq, long version, String status, double updated, String dropParam, String canonicalScheme,
            String canonicalHost, Long format) {
        this(id, hosts, context, transformation, support, fpr, freq, version, status, updated, dropParam,
                canonicalScheme, canonicalHost, null, format);
    }

    public Rule(String id, List<String> hosts, String context, String transformation, long support, double fpr,
            long freq, long version, String status, double updated, String dropParam, String canonicalScheme,
            String canonicalHost, String normalize, Long format) {
        this(id, hosts, context, transformation, support, fpr, freq, version, status, updated, dropParam,
                canonicalScheme, canonicalHost, normalize, format, List.of());
    }

    public Rule(String id, List<String> hosts, String context, String transformation, long support, double fpr,
            long freq, long version, String status, double updated, String dropParam, String canonicalScheme,
            String canonicalHost, String normalize, Long format, List<String> exceptHosts) {
        this(id, hosts, context, transformation, support, fpr, freq, version, status, updated, dropParam,
                canonicalScheme, canonicalHost, normalize, format, exceptHosts, null);
    }

    public Rule(String id, List<String> hosts, String context, String transformation, long support, double fpr,
            long freq, long version, String status, double updated, String dropParam, String canonicalScheme,
            String canonicalHost, String normalize, Long format, List<String> exceptHosts, String subsumedBy) {
        this.id = id;
        this.subsumedBy = subsumedBy;
        this.exceptHosts = Collections.unmodifiableList(new ArrayList<>(exceptHosts));
        this.hosts = Collections.unmodifiableList(new ArrayList<>(hosts));
        this.context = context;
        this.transformation = transformation;
        this.support = support;
        this.fpr = fpr;
        this.freq = freq;
        this.version = version;
        this.status = status;
        this.updated = updated;
        this.dropParam = dropParam;
        this.canonicalScheme = canonicalScheme;
        this.canonicalHost = canonicalHost;
        this.normalize = normalize;
        this.format = format;
    }

    public boolean isActive() {
        return ACTIVE.equals(status);
    }

    /** A host rule: a non-empty {@code canonical_host} (an empty one is no host rule, as in Python). */
    public boolean isHostRule() {
        return canonicalHost != null && !canonicalHost.isEmpty();
    }

    /** A path-edit rule: a non-empty {@code normalize} (an empty one is none, as in Python). */
    public boolean isEditRule() {
        return normalize != null && !normalize.isEmpty();
    }

    /** A rule record from one JSON line (a rules file's line, a rules topic message's value). */
    public static Rule parse(String json) {
        JsonNode node;
        try {
            node = JSON.readTree(json);
        } catch (JsonProcessingException e) {
            throw new RuleException("not a rule record: " + e.getOriginalMessage(), "not-a-rule", "");
        }
        return fromJson(node);
    }

    public static Rule fromJson(JsonNode n) {
        if (n == null || !n.isObject()) {
            throw new RuleException("not a rule record: expected an object", "not-a-rule", "");
        }
        String id = str(n, "id", null, true);
        JsonNode hs = n.get("hosts");
        if (hs == null) {
            throw bad("missing field 'hosts'");
        }
        if (!hs.isArray()) {
            throw bad("'hosts' must be an array");
        }
        List<String> hosts = strings(hs, "hosts");
        JsonNode ex = n.get("except_hosts");
        List<String> exceptHosts = ex == null || ex.isNull() ? List.of() : strings(ex, "except_hosts");
        return new Rule(id, hosts, str(n, "context", null, true), str(n, "transformation", null, true),
                integer(n, "support", 0L), number(n, "fpr", 0.0), integer(n, "freq", 0L), integer(n, "version", 1L),
                str(n, "status", ACTIVE, false), number(n, "updated", 0.0), str(n, "drop_param", null, false),
                str(n, "canonical_scheme", null, false), str(n, "canonical_host", null, false),
                str(n, "normalize", null, false), n.has("format") ? integer(n, "format", 1L) : null, exceptHosts,
                str(n, "subsumed_by", null, false));
    }

    /** A rule of every host but {@link #exceptHosts}: a parameter rule whose hosts are {@code ["*"]}. */
    public boolean isEveryHost() {
        return dropParam != null && !dropParam.isEmpty() && hosts.size() == 1 && EVERY_HOST.equals(hosts.get(0))
                && !isHostRule() && !isEditRule() && (canonicalScheme == null || canonicalScheme.isEmpty())
                && context.isEmpty() && transformation.isEmpty();
    }

    private static List<String> strings(JsonNode a, String field) {
        if (!a.isArray()) {
            throw bad("'" + field + "' must be an array");
        }
        List<String> out = new ArrayList<>();
        for (JsonNode h : a) {
            if (!h.isTextual()) {
                throw bad("'" + field + "' must hold strings");
            }
            out.add(h.textValue());
        }
        return out;
    }

    private static RuleException bad(String what) {
        return new RuleException("not a rule record: " + what, "not-a-rule", "");
    }

    private static String str(JsonNode n, String field, String dflt, boolean required) {
        JsonNode v = n.get(field);
        if (v == null) {
            if (required) {
                throw bad("missing field '" + field + "'");
            }
            return dflt;
        }
        if (!v.isTextual()) {
            throw bad("'" + field + "' must be a string");
        }
        return v.textValue();
    }

    private static long integer(JsonNode n, String field, long dflt) {
        JsonNode v = n.get(field);
        if (v == null) {
            return dflt;
        }
        if (!v.isIntegralNumber() || !v.canConvertToLong()) {
            throw bad("'" + field + "' must be an integer");
        }
        return v.longValue();
    }

    private static double number(JsonNode n, String field, double dflt) {
        JsonNode v = n.get(field);
        if (v == null) {
            return dflt;
        }
        if (!v.isNumber()) {
            throw bad("'" + field + "' must be a number");
        }
        return v.doubleValue();
    }

    /** RuleException {@code unknown-format} for a record of a format this reader does not know. */
    public void checkFormat() {
        if (format != null && !FORMATS.contains(format)) {
            throw new RuleException("rule " + id + ": record format " + format + " is not one this reader knows (1)",
                    "unknown-format", id);
        }
    }

    @Override
    public String toString() {
        return "Rule(" + id + " v" + version + " " + status + ")";
    }
}
