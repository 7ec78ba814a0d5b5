package org.dustonline.rules;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The current rule set rebuilt from the rules topic's records (the port of
 * dustonline/rules/book.py): an active record adds or replaces, a retired one removes, a
 * null value (tombstone) forgets the id; a version at or below the one held is ignored.
 * A record that is not applied throws RuleException and is counted in {@link #refused()}.
 * Not thread-safe: one thread applies records, and hands out {@link #ruleset()}s.
 */
public final class RuleBook {
    private final Map<String, Rule> rules = new HashMap<>();
    private final Map<String, CompiledRule> compiled = new HashMap<>();
    private final Map<String, Integer> refused = new TreeMap<>();
    private long updates;

    /** Apply one record; true when it changed the active set or a version. */
    public boolean update(Rule rule) {
        rule.checkFormat();
        Rule cur = rules.get(rule.id);
        if (cur != null && cur.version >= rule.version) {
            return false;
        }
        CompiledRule c = rule.isActive() ? new CompiledRule(rule) : null;
        rules.put(rule.id, rule);
        if (c != null) {
            compiled.put(rule.id, c);
        } else {
            compiled.remove(rule.id);
        }
        updates++;
        return true;
    }

    /** One topic message (key and value as bytes; value null for a tombstone). */
    public boolean apply(byte[] key, byte[] value) {
        try {
            return applyRecord(key, value);
        } catch (RuleException e) {
            refused.merge(e.reason(), 1, Integer::sum);
            throw e;
        }
    }

    private boolean applyRecord(byte[] key, byte[] value) {
        if (value == null) {
            if (key == null) {
                throw new RuleException("tombstone without a key", "bad-key", "");
            }
            String id;
            try {
                id = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                        .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(key)).toString();
            } catch (CharacterCodingException e) {
                throw new RuleException("tombstone key is not UTF-8", "bad-key", "");
            }
            boolean gone = rules.remove(id) != null;
            compiled.remove(id);
            if (gone) {
                updates++;
            }
            return gone;
        }
        String text;
        try {
            text = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(value)).toString();
        } catch (CharacterCodingException e) {
            throw new RuleException("not a rule record: not UTF-8", "not-a-rule", "");
        }
        Rule rule = Rule.parse(text);
        if (key != null && !new String(key, StandardCharsets.UTF_8).equals(rule.id)) {
            throw new RuleException("message key is not the rule's id " + rule.id, "bad-key", rule.id);
        }
        return update(rule);
    }

    /** A new RuleSet of the active rules (compiled rules are reused). */
    public RuleSet ruleset() {
        return RuleSet.fromCompiled(new ArrayList<>(compiled.values()));
    }

    /** Records refused, by reason. */
    public Map<String, Integer> refused() {
        return new TreeMap<>(refused);
    }

    /** Every record held, retired ones included, by id. */
    public List<Rule> rules() {
        List<Rule> out = new ArrayList<>(rules.values());
        out.sort((a, b) -> RuleSet.compareCodePoints(a.id, b.id));
        return out;
    }

    public long updates() {
        return updates;
    }

    public int size() {
        return compiled.size();
    }
}
