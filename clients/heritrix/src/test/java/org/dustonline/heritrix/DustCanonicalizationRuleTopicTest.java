package org.dustonline.heritrix;

import static org.dustonline.rules.testing.RulesTopic.rule;
import static org.dustonline.rules.testing.RulesTopic.until;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.dustonline.rules.testing.RulesTopic;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.io.TempDir;

/**
 * DustCanonicalizationRule following the rules topic on the real local broker
 * (tests/test_heritrix_rule.py passes its address as -Dkafka.bootstrap): a rules file is the
 * snapshot it starts from, and its keys follow the topic while the crawl runs (a new
 * version, then a retirement).
 */
@EnabledIfSystemProperty(named = "kafka.bootstrap", matches = ".+")
class DustCanonicalizationRuleTopicTest {
    @TempDir
    static Path tmp; // JUnit deletes it after the class: nothing is left in the system temp dir

    static void await(DustCanonicalizationRule r, String url, String key) throws InterruptedException {
        assertTrue(until(() -> key.equals(r.canonicalize(url)), 60), url + " -> " + r.canonicalize(url));
    }

    @Test
    void followsTheRulesTopic() throws Exception {
        Path snapshot = Files.createTempFile(tmp, "rules", ".jsonl");
        Files.writeString(snapshot, rule("rs", "s.com", "http://s.com/snap/$1", 1, "active") + "\n");
        try (RulesTopic topic = new RulesTopic("dust.rules.heritrix-")) {
            topic.send("ra", rule("ra", "a.com", "http://a.com/v1/$1", 1, "active"));
            DustCanonicalizationRule r = new DustCanonicalizationRule();
            r.setRulesFile(snapshot.toString());
            r.setBootstrap(RulesTopic.BOOTSTRAP);
            r.setTopic(topic.name);
            r.start(); // waits until the topic is read to its end
            try {
                assertEquals("http://a.com/v1/7", r.canonicalize("http://www.a.com/p/7"));
                assertEquals("http://s.com/snap/7", r.canonicalize("http://www.s.com/p/7"));
                topic.send("ra", rule("ra", "a.com", "http://a.com/v2/$1", 2, "active"));
                await(r, "http://www.a.com/p/8", "http://a.com/v2/8");
                topic.send("ra", rule("ra", "a.com", "http://a.com/v2/$1", 3, "retired"));
                await(r, "http://www.a.com/p/9", "http://www.a.com/p/9");
                assertEquals("http://s.com/snap/9", r.canonicalize("http://s.com/p/9"));
            } finally {
                r.stop();
            }
        }
    }
}
