package org.dustonline.rules;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
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
    static final String BOOTSTRAP = System.getProperty("kafka.bootstrap");

    static String rule(String id, String transformation, int version, String status, String extra) {
        return "{\"id\":\"" + id + "\",\"hosts\":[\"a.com\",\"www.a.com\"],"
                + "\"context\":\"^http\\\\:\\\\/\\\\/(?:www\\\\.)?a\\\\.com\\\\/" + id + "\\\\/([0-9]+)$\","
                + "\"transformation\":\"" + transformation + "\",\"support\":5,\"fpr\":0.0,\"freq\":3,\"version\":"
                + version + ",\"status\":\"" + status + "\",\"updated\":0.0" + extra + "}";
    }

    static byte[] b(String s) {
        return s == null ? null : s.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void followsTheRulesTopic() throws Exception {
        String topic = "dust.rules.java-" + System.nanoTime();
        Properties ap = new Properties();
        ap.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, BOOTSTRAP);
        try (Admin admin = Admin.create(ap)) {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1).configs(Map.of("cleanup.policy", "compact"))))
                    .all().get(30, TimeUnit.SECONDS);
        }
        Properties pp = new Properties();
        pp.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, BOOTSTRAP);
        String a1 = rule("ra", "http://a.com/a/$1", 1, "active", "");
        String b1 = rule("rb", "http://a.com/b/$1", 1, "active", "");
        try (KafkaProducer<byte[], byte[]> p = new KafkaProducer<>(pp, new ByteArraySerializer(), new ByteArraySerializer())) {
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
                p.send(new ProducerRecord<>(topic, b(kv[0]), b(kv[1])));
            }
            p.send(new ProducerRecord<>(topic, new byte[] {(byte) 0xff, (byte) 0xfe}, null)); // bad-key
            p.flush();

            try (RuleSubscriber sub = new RuleSubscriber(BOOTSTRAP, topic).start()) {
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
                p.send(new ProducerRecord<>(topic, b("ra"), b(a3)));
                p.flush();
                String want = RuleSet.of(List.of(Rule.parse(a3))).canonicalize("http://www.a.com/ra/7");
                assertTrue(until(() -> want.equals(sub.canonicalize("http://www.a.com/ra/7"))), "v3 applied");
                p.send(new ProducerRecord<>(topic, b("ra"), b(rule("ra", "x", 4, "retired", ""))));
                p.flush();
                assertTrue(until(() -> sub.rules().size() == 0), "retired");
                assertEquals("http://www.a.com/ra/7", sub.canonicalize("http://www.a.com/ra/7"));
            }
        }
    }

    static boolean until(java.util.function.BooleanSupplier cond) throws InterruptedException {
        long end = System.nanoTime() + 20_000_000_000L;
        while (System.nanoTime() < end) {
            if (cond.getAsBoolean()) {
                return true;
            }
            Thread.sleep(50);
        }
        return false;
    }
}
