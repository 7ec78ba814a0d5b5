package org.dustonline.rules;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.logging.Logger;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * Keeps a live {@link RuleSet} from the rules topic, as Python's
 * {@code dustonline_stream.subscriber.RuleSubscriber}: a background thread reads the
 * compacted topic from the beginning (no consumer group, no commits), applies each record
 * to a {@link RuleBook} (versions, retirements, tombstones) and swaps in a new RuleSet after
 * each batch (one volatile write: a crawler thread sees the old set or the new one). A
 * record that is not applied is logged with its offset and counted ({@link #refused()});
 * broker errors are retried from the last offsets, the rule set staying usable meanwhile.
 */
public final class RuleSubscriber implements AutoCloseable {
    private static final Logger LOG = Logger.getLogger("org.dustonline.rules.subscriber");

    private final Properties props;
    private final String topic;
    private final RuleBook book = new RuleBook();
    private final Map<Integer, Long> offsets = new HashMap<>(); // partition -> next offset
    private final CountDownLatch current = new CountDownLatch(1);
    private final Map<String, Integer> failed = new HashMap<>();
    private volatile RuleSet rules;
    private volatile Map<String, Integer> refused = Map.of();
    private volatile boolean stop;
    private volatile long brokerErrors;
    private Thread thread;

    /** {@code bootstrap}: host:port[,...]; {@code topic}: the rules topic (dust.rules). */
    public RuleSubscriber(String bootstrap, String topic) {
        this(consumerProps(bootstrap), topic, RuleSet.of(List.of()));
    }

    /** Consumer properties of your own (security, client id); a snapshot to start from. */
    public RuleSubscriber(Properties props, String topic, RuleSet snapshot) {
        this.props = props;
        this.topic = topic;
        for (Rule r : snapshot.rules()) {
            book.update(r);
        }
        this.rules = book.ruleset();
    }

    public static Properties consumerProps(String bootstrap) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.CLIENT_ID_CONFIG, "dustonline-java-subscriber");
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        return p;
    }

    public RuleSet rules() {
        return rules;
    }

    public String canonicalize(String url) {
        return rules.canonicalize(url);
    }

    /** Records refused so far, by reason (RuleException reasons; "error" for anything else). */
    public Map<String, Integer> refused() {
        return refused;
    }

    public long brokerErrors() {
        return brokerErrors;
    }

    public RuleSubscriber start() {
        thread = new Thread(this::run, "dustonline-rules");
        thread.setDaemon(true);
        thread.start();
        return this;
    }

    /** Blocks until the topic was read to its end (as of when reading began). */
    public boolean waitUntilCurrent(long timeout, TimeUnit unit) throws InterruptedException {
        return current.await(timeout, unit);
    }

    @Override
    public void close() throws InterruptedException {
        stop = true;
        if (thread != null) {
            thread.join(10_000);
        }
    }

    private void run() {
        while (!stop) {
            try (KafkaConsumer<byte[], byte[]> c =
                    new KafkaConsumer<>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
                List<TopicPartition> tps = assign(c);
                if (tps == null) {
                    sleep(500); // the topic is not there yet
                    continue;
                }
                follow(c, tps);
            } catch (KafkaException e) {
                brokerErrors++;
                LOG.warning("rules topic: " + e + "; retrying");
                sleep(1000);
            }
        }
    }

    private List<TopicPartition> assign(KafkaConsumer<byte[], byte[]> c) {
        List<PartitionInfo> parts = c.partitionsFor(topic, Duration.ofSeconds(10));
        if (parts == null || parts.isEmpty()) {
            return null;
        }
        List<TopicPartition> tps = new ArrayList<>();
        for (PartitionInfo p : parts) {
            tps.add(new TopicPartition(topic, p.partition()));
        }
        c.assign(tps);
        for (TopicPartition tp : tps) {
            Long next = offsets.get(tp.partition());
            if (next != null) {
                c.seek(tp, next);
            } else {
                c.seekToBeginning(List.of(tp));
            }
        }
        return tps;
    }

    private void follow(KafkaConsumer<byte[], byte[]> c, List<TopicPartition> tps) {
        Map<TopicPartition, Long> ends = c.endOffsets(tps);
        long lastCheck = System.nanoTime();
        while (!stop) {
            ConsumerRecords<byte[], byte[]> batch = c.poll(Duration.ofMillis(200));
            boolean changed = false;
            for (ConsumerRecord<byte[], byte[]> rec : batch) {
                try {
                    changed |= book.apply(rec.key(), rec.value());
                } catch (RuleException e) {
                    LOG.warning("rules topic offset " + rec.offset() + ": refused (" + e.reason() + "): " + e.getMessage());
                } catch (RuntimeException e) { // no record may end the thread
                    failed.merge("error", 1, Integer::sum);
                    LOG.warning("rules topic offset " + rec.offset() + ": refused (" + e + ")");
                }
                offsets.put(rec.partition(), rec.offset() + 1);
            }
            if (changed) {
                rules = book.ruleset(); // the atomic swap
            }
            Map<String, Integer> r = book.refused();
            failed.forEach((k, v) -> r.merge(k, v, Integer::sum));
            refused = Map.copyOf(r);
            if (current.getCount() > 0) {
                boolean done = true;
                for (TopicPartition tp : tps) {
                    done &= c.position(tp) >= ends.get(tp);
                }
                if (done) {
                    current.countDown();
                } else if (System.nanoTime() - lastCheck > 5_000_000_000L) {
                    ends = c.endOffsets(tps);
                    lastCheck = System.nanoTime();
                }
            }
        }
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
