package org.dustonline.rules;

import static org.dustonline.rules.testing.RulesTopic.until;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.dustonline.rules.testing.RulesTopic;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * RuleSubscriber against a real broker (tests/test_java_client.py passes the local
 * broker's address as -Dkafka.bootstrap): versions, retirements, tombstones, refusals by
 * reason, and a hot swap after the topic was read. The expected keys are those of a
 * RuleSet of the records that should be in force.
 */
@EnabledIfSystemProperty(named = "kafka.bootstrap", matches = ".+")
class RuleSubscriberTest {
    /** A rule of a.com for {@code http://a.com/<id>/N}. */
    static String rule(String id, String transformation, int version, String status, String extra) {
        return RulesTopic.rule(id, "a.com", id, transformation, version, status, extra);
    }

    @Test
    void followsTheRulesTopic() throws Exception {
        String a1 = rule("ra", "http://a.com/a/$1", 1, "active", "");
        String b1 = rule("rb", "http://a.com/b/$1", 1, "active", "");
        try (RulesTopic topic = new RulesTopic("dust.rules.java-")) {
            for (String[] kv : new String[][] {
                {"ra", a1}, {"rb", b1},
                {"x", "not json"},                                                  // not-a-rule
                {"ra", rule("ra", "http://a.com/v2/$1", 2, "active", ",\"format\":2")}, // unknown-format
                {"rb", b1},                                                         // same version: ignored
                {"rb", rule("rb", "http://a.com/b/$1", 2, "retired", "")},          // retired
                {"rb", null},                                                       // tombstone
                {"rc", rule("rc", "http://a.com/c/$5", 1, "active", "")},           // bad-rule
                {"rd", rule("re", "http://a.com/e/$1", 1, "active", "")},           // bad-key
            }) {
                topic.send(kv[0], kv[1]);
            }
            topic.send(new byte[] {(byte) 0xff, (byte) 0xfe}, null); // bad-key

            try (RuleSubscriber sub = new RuleSubscriber(RulesTopic.BOOTSTRAP, topic.name).start()) {
                assertTrue(sub.waitUntilCurrent(60, TimeUnit.SECONDS), "read the topic to its end");
                RuleSet expected = RuleSet.of(List.of(Rule.parse(a1)));
                for (String url : List.of("http://www.a.com/ra/7", "http://www.a.com/rb/7", "http://a.com/rc/7")) {
                    assertEquals(expected.canonicalize(url), sub.canonicalize(url), url);
                }
                assertEquals("http://a.com/a/7", sub.canonicalize("http://www.a.com/ra/7"));
                assertEquals(List.of("ra"), sub.rules().rules().stream().map(r -> r.id).toList());
                assertEquals(Map.of("not-a-rule", 1, "unknown-format", 1, "bad-rule", 1, "bad-key", 2), sub.refused());

                // hot swap: a newer version applies while the subscriber runs, a retirement removes it
                String a3 = rule("ra", "http://a.com/v3/$1", 3, "active", "");
                topic.send("ra", a3);
                String want = RuleSet.of(List.of(Rule.parse(a3))).canonicalize("http://www.a.com/ra/7");
                assertTrue(until(() -> want.equals(sub.canonicalize("http://www.a.com/ra/7")), 20), "v3 applied");
                topic.send("ra", rule("ra", "x", 4, "retired", ""));
                assertTrue(until(() -> sub.rules().size() == 0, 20), "retired");
                assertEquals("http://www.a.com/ra/7", sub.canonicalize("http://www.a.com/ra/7"));
            }
        }
    }
}
