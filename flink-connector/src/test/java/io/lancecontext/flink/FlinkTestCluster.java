package io.lancecontext.flink;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.testutils.InMemoryReporter;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.test.junit5.MiniClusterExtension;

/**
 * The MiniCluster of the Flink tests: one per test class ({@code @RegisterExtension static}), one task
 * manager with explicit slots, optionally reporting metrics to an {@link InMemoryReporter}. Test classes
 * close the JVM's resident stores after their last test ({@code ContextStore.closeAllResident()}), before
 * their temporary folders go.
 */
public final class FlinkTestCluster {
  private FlinkTestCluster() {}

  /** One task manager with {@code slots} slots. */
  public static MiniClusterExtension create(int slots) {
    return create(slots, new Configuration());
  }

  /** One task manager with {@code slots} slots and {@code config}. */
  public static MiniClusterExtension create(int slots, Configuration config) {
    return new MiniClusterExtension(new MiniClusterResourceConfiguration.Builder().setConfiguration(config)
        .setNumberTaskManagers(1).setNumberSlotsPerTaskManager(slots).build());
  }

  /** One task manager with {@code slots} slots whose metrics go to {@code reporter} (kept after a job ends). */
  public static MiniClusterExtension withReporter(int slots, InMemoryReporter reporter) {
    return create(slots, reporter.addToConfiguration(new Configuration()));
  }

  /** The first of {@code t} and its causes that is a {@code type}, if any (Flink keeps a job's failure cause). */
  public static <T extends Throwable> java.util.Optional<T> cause(Throwable t, Class<T> type) {
    for (Throwable c = t; c != null; c = c.getCause()) {
      if (type.isInstance(c)) {
        return java.util.Optional.of(type.cast(c));
      }
    }
    return java.util.Optional.empty();
  }

  /** The messages of {@code t} and its causes, for assertions on what an error names. */
  public static String messages(Throwable t) {
    StringBuilder sb = new StringBuilder();
    for (Throwable c = t; c != null; c = c.getCause()) {
      sb.append(c.getMessage()).append(" | ");
    }
    return sb.toString();
  }
}
