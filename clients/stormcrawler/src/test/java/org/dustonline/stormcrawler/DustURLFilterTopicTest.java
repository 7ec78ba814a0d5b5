package org.dustonline.stormcrawler;

import static org.dustonline.rules.testing.RulesTopic.rule;
import static org.dustonline.rules.testing.RulesTopic.until;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import org.dustonline.rules.testing.RulesTopic;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.io.TempDir;

/**
 * DustURLFilter following the rules topic on the real local broker (tests/test_stormcrawler.py
 * passes its address as -Dkafka.bootstrap): the topology config names the broker and topic,
 * a rules file is the snapshot it starts from, and the filter's keys follow the topic while
 * it runs (a new version, then a retirement).
 */
@EnabledIfSystemProperty(named = "kafka.bootstrap", matches = ".+")
class DustURLFilterTopicTest {
    @TempDir
    static Path tmp; // JUnit deletes it after the class: nothing is left in the system temp dir

    static void await(DustURLFilter f, String url, String key) throws InterruptedException {
        assertTrue(until(() -> key.equals(f.filter(null, null, url)), 60), url + " -> " + f.filter(null, null, url));
    }

    @Test
    void followsTheRulesTopic() throws Exception {
        Path snapshot = Files.createTempFile(tmp, "rules", ".jsonl");
        Files.writeString(snapshot, rule("rs", "s.com", "http://s.com/snap/$1", 1, "active") + "\n");
        try (RulesTopic topic = new RulesTopic("dust.rules.stormcrawler-")) {
            topic.send("ra", rule("ra", "a.com", "http://a.com/v1/$1", 1, "active"));
            Map<String, Object> conf = new HashMap<>();
            conf.put("dustonline.kafka.bootstrap", RulesTopic.BOOTSTRAP);
            conf.put("dustonline.rules.topic", topic.name);
            ObjectNode params = new ObjectMapper().createObjectNode();
            params.put("rulesFile", snapshot.toString());
            DustURLFilter f = new DustURLFilter();
            f.configure(conf, params); // waits until the topic is read to its end
            try {
                assertEquals("http://a.com/v1/7", f.filter(null, null, "http://www.a.com/p/7"));
                assertEquals("http://s.com/snap/7", f.filter(null, null, "http://www.s.com/p/7"));
                topic.send("ra", rule("ra", "a.com", "http://a.com/v2/$1", 2, "active"));
                await(f, "http://www.a.com/p/8", "http://a.com/v2/8");
                topic.send("ra", rule("ra", "a.com", "http://a.com/v2/$1", 3, "retired"));
                await(f, "http://www.a.com/p/9", "http://www.a.com/p/9");
                assertEquals("http://s.com/snap/9", f.filter(null, null, "http://s.com/p/9"));
            } finally {
                f.close();
            }
        }
    }
}
