package io.lancecontext.flink.table;

import io.lancecontext.core.options.StoreOptions;
import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.ConfigOptions;
import org.apache.flink.table.factories.FactoryUtil;
import org.apache.flink.connector.base.DeliveryGuarantee;
import org.apache.flink.table.connector.source.lookup.LookupOptions;

/**
 * The table options of {@code 'connector' = 'lancecontext'}: every core option under the same key
 * (docs/options.md; parsed and checked by core, so Spark, Flink and core accept the same values), plus
 * Flink's standard {@code lookup.*} and {@code sink.*} options. {@code storage.*} keys go to the object store unchecked.
 */
public final class FlinkOptions {
  private FlinkOptions() {}

  /** Core's options as Flink options, typed as strings (core parses and validates them). */
  public static final List<ConfigOption<String>> CORE = StoreOptions.ALL.stream()
      .map(o -> {
        var b = ConfigOptions.key(o.key()).stringType();
        ConfigOption<String> option = o.isRequired() || o.defaultText() == null ? b.noDefaultValue()
            : b.defaultValue(o.defaultText());
        return option.withDescription(o.description());
      })
      .toList();

  public static final ConfigOption<String> PATH = CORE.stream().filter(o -> o.key().equals(StoreOptions.PATH.key()))
      .findFirst().orElseThrow();

  /** Flink's standard sink option (see {@link io.lancecontext.flink.sink.LanceContextSink}). */
  public static final ConfigOption<DeliveryGuarantee> DELIVERY_GUARANTEE = ConfigOptions.key("sink.delivery-guarantee")
      .enumType(DeliveryGuarantee.class).defaultValue(DeliveryGuarantee.EXACTLY_ONCE)
      .withDescription("exactly-once: each checkpoint's rows are staged and published together when it completes "
          + "(readers never see part of a checkpoint; a restored job re-publishing one changes nothing); "
          + "at-least-once (or none): rows are durable and visible as each buffer is put, every checkpoint waits "
          + "until all rows before it are durable, and a restored job replays rows, which upsert the same keys");

  public static final ConfigOption<Duration> BUFFER_FLUSH_INTERVAL = ConfigOptions.key("sink.buffer-flush.interval")
      .durationType().defaultValue(io.lancecontext.flink.sink.LanceContextSink.DEFAULT_FLUSH_INTERVAL)
      .withDescription("put buffered rows at least this often (0 s: only when a buffer is full and at checkpoints)");

  /** The snapshot a scan reads (a token or tag); default: the store as it is when the job plans its read. */
  public static final ConfigOption<String> SCAN_SNAPSHOT = ConfigOptions.key("scan.snapshot").stringType().noDefaultValue()
      .withDescription("read the store as it was when this snapshot was taken: a token (ContextStore.snapshot()) or a "
          + "tag (ContextStore.tag); a bounded scan, or, continuous, the first snapshot emitted. Default: the store as it "
          + "is when the job plans its read");

  /** Whether a scan reads one snapshot and ends, or keeps emitting what changes. */
  public enum ScanMode {
    BATCH, CONTINUOUS;

    @Override
    public String toString() {
      return name().toLowerCase(java.util.Locale.ROOT);
    }
  }

  public static final ConfigOption<ScanMode> SCAN_MODE = ConfigOptions.key("scan.mode").enumType(ScanMode.class)
      .defaultValue(ScanMode.BATCH)
      .withDescription("batch: a scan reads the store as of one snapshot and ends (a bounded source); continuous: it "
          + "emits that snapshot, then every scan.discovery-interval what changed since, as an upsert changelog on the "
          + "store's key (needs PRIMARY KEY (id) NOT ENFORCED), exactly once across failover (an unbounded source)");

  public static final ConfigOption<Duration> SCAN_DISCOVERY_INTERVAL = ConfigOptions.key("scan.discovery-interval")
      .durationType().defaultValue(Duration.ofSeconds(1))
      .withDescription("continuous: how often the store is asked whether it changed (an unchanged store costs one "
          + "read of its positions and writes nothing)");

  public static final ConfigOption<String> SCAN_SINCE = ConfigOptions.key("scan.since").stringType().noDefaultValue()
      .withDescription("continuous: start after this snapshot (a token or tag), emitting only what changed since, "
          + "instead of the whole store first");

  public static Set<ConfigOption<?>> required() {
    return Set.of(PATH);
  }

  public static Set<ConfigOption<?>> optional() {
    Set<ConfigOption<?>> options = new LinkedHashSet<>(CORE);
    options.remove(PATH);
    options.add(LookupOptions.CACHE_TYPE);
    options.add(LookupOptions.PARTIAL_CACHE_MAX_ROWS);
    options.add(LookupOptions.PARTIAL_CACHE_EXPIRE_AFTER_WRITE);
    options.add(LookupOptions.PARTIAL_CACHE_EXPIRE_AFTER_ACCESS);
    options.add(LookupOptions.PARTIAL_CACHE_CACHE_MISSING_KEY);
    options.add(LookupOptions.MAX_RETRIES);
    options.add(DELIVERY_GUARANTEE);
    options.add(BUFFER_FLUSH_INTERVAL);
    options.add(FactoryUtil.SINK_PARALLELISM);
    options.add(FactoryUtil.SOURCE_PARALLELISM);
    options.add(SCAN_SNAPSHOT);
    options.add(SCAN_MODE);
    options.add(SCAN_DISCOVERY_INTERVAL);
    options.add(SCAN_SINCE);
    return options;
  }

  /** Whether {@code key} is a Flink option of this connector rather than a store option. */
  static boolean isFlinkOnly(String key) {
    return key.equals("connector") || key.startsWith("lookup.") || key.startsWith("sink.")
        || key.equals(FactoryUtil.SOURCE_PARALLELISM.key()) || key.equals(SCAN_SNAPSHOT.key())
        || key.equals(SCAN_MODE.key()) || key.equals(SCAN_DISCOVERY_INTERVAL.key()) || key.equals(SCAN_SINCE.key());
  }
}
