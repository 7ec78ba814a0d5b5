package org.dustonline.rules.testing;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * A compacted rules topic of its own on the real local broker (the Python tests pass its
 * address as {@code -Dkafka.bootstrap}), for the tests that follow one: the Java client's
 * subscriber, the StormCrawler filter and the Heritrix rule.
 */
public final class RulesTopic implements AutoCloseable {
    public static final String BOOTSTRAP = System.getProperty("kafka.bootstrap");

    public final String name;
    private final KafkaProducer<byte[], byte[]> producer;

    /** A new compacted topic of one partition, named {@code prefix} and a unique suffix. */
    public RulesTopic(String prefix) throws Exception {
        name = prefix + System.nanoTime();
        Properties ap = new Properties();
        ap.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, BOOTSTRAP);
        try (Admin admin = Admin.create(ap)) {
            admin.createTopics(List.of(new NewTopic(name, 1, (short) 1).configs(Map.of("cleanup.policy", "compact"))))
                    .all().get(30, TimeUnit.SECONDS);
        }
        Properties pp = new Properties();
        pp.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, BOOTSTRAP);
        producer = new KafkaProducer<>(pp, new ByteArraySerializer(), new ByteArraySerializer());
    }

    /** Publish a record (a null value is a tombstone) and wait until the broker has it. */
    public void send(String key, String value) {
        send(b(key), value);
    }

    public void send(byte[] key, String value) {
        producer.send(new ProducerRecord<>(name, key, b(value)));
        producer.flush();
    }

    @Override
    public void close() {
        producer.close();
    }

    /**
     * A rewrite rule of {@code host} and {@code www.host} for {@code http://host/<path>/N}
     * ({@code <path>} defaults to "p"), as the learner publishes one.
     */
    public static String rule(String id, String host, String path, String transformation, int version, String status,
            String extra) {
        String h = host.replace(".", "\\\\.");
        return "{\"id\":\"" + id + "\",\"hosts\":[\"" + host + "\",\"www." + host + "\"],"
                + "\"context\":\"^http\\\\:\\\\/\\\\/(?:www\\\\.)?" + h + "\\\\/" + path + "\\\\/([0-9]+)$\","
                + "\"transformation\":\"" + transformation + "\",\"support\":5,\"fpr\":0.0,\"freq\":3,\"version\":"
                + version + ",\"status\":\"" + status + "\",\"updated\":0.0" + extra + "}";
    }

    public static String rule(String id, String host, String transformation, int version, String status) {
        return rule(id, host, "p", transformation, version, status, "");
    }

    /** Whether {@code cond} holds within {@code seconds}, polled. */
    public static boolean until(BooleanSupplier cond, int seconds) throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        while (System.nanoTime() < end) {
            if (cond.getAsBoolean()) {
                return true;
            }
            Thread.sleep(50);
        }
        return cond.getAsBoolean();
    }

    private static byte[] b(String s) {
        return s == null ? null : s.getBytes(StandardCharsets.UTF_8);
    }
}
