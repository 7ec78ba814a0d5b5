package org.dustonline.heritrix;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
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
 * DustCanonicalizationRule following the rules topic on the real local broker
 * (tests/test_heritrix_rule.py passes its address as -Dkafka.bootstrap): a rules file is the
 * snapshot it starts from, and its keys follow the topic while the crawl runs (a new
 * version, then a retirement).
 */
@EnabledIfSystemProperty(named = "kafka.bootstrap", matches = ".+")
class DustCanonicalizationRuleTopicTest {
    static final String BOOTSTRAP = System.getProperty("kafka.bootstrap");

    static String rule(String id, String host, String transformation, int version, String status) {
        String h = host.replace(".", "\\\\.");
        return "{\"id\":\"" + id + "\",\"hosts\":[\"" + host + "\",\"www." + host + "\"],"
                + "\"context\":\"^http\\\\:\\\\/\\\\/(?:www\\\\.)?" + h + "\\\\/p\\\\/([0-9]+)$\","
                + "\"transformation\":\"" + transformation + "\",\"support\":5,\"version\":" + version
                + ",\"status\":\"" + status + "\"}";
    }

    static byte[] b(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    static void await(DustCanonicalizationRule r, String url, String key) throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!key.equals(r.canonicalize(url)) && System.nanoTime() < end) {
            Thread.sleep(100);
        }
        assertEquals(key, r.canonicalize(url), url);
    }

    @Test
    void followsTheRulesTopic() throws Exception {
        String topic = "dust.rules.heritrix-" + System.nanoTime();
        Properties ap = new Properties();
        ap.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, BOOTSTRAP);
        try (Admin admin = Admin.create(ap)) {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1).configs(Map.of("cleanup.policy", "compact"))))
                    .all().get(30, TimeUnit.SECONDS);
        }
        Path snapshot = Files.createTempFile("rules", ".jsonl");
        Files.writeString(snapshot, rule("rs", "s.com", "http://s.com/snap/$1", 1, "active") + "\n");
        Properties pp = new Properties();
        pp.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, BOOTSTRAP);
        try (KafkaProducer<byte[], byte[]> p = new KafkaProducer<>(pp, new ByteArraySerializer(), new ByteArraySerializer())) {
            p.send(new ProducerRecord<>(topic, b("ra"), b(rule("ra", "a.com", "http://a.com/v1/$1", 1, "active"))));
            p.flush();
            DustCanonicalizationRule r = new DustCanonicalizationRule();
            r.setRulesFile(snapshot.toString());
            r.setBootstrap(BOOTSTRAP);
            r.setTopic(topic);
            r.start(); // waits until the topic is read to its end
            try {
                assertEquals("http://a.com/v1/7", r.canonicalize("http://www.a.com/p/7"));
                assertEquals("http://s.com/snap/7", r.canonicalize("http://www.s.com/p/7"));
                p.send(new ProducerRecord<>(topic, b("ra"), b(rule("ra", "a.com", "http://a.com/v2/$1", 2, "active"))));
                p.flush();
                await(r, "http://www.a.com/p/8", "http://a.com/v2/8");
                p.send(new ProducerRecord<>(topic, b("ra"), b(rule("ra", "a.com", "http://a.com/v2/$1", 3, "retired"))));
                p.flush();
                await(r, "http://www.a.com/p/9", "http://www.a.com/p/9");
                assertEquals("http://s.com/snap/9", r.canonicalize("http://s.com/p/9"));
            } finally {
                r.stop();
            }
        }
    }
}
