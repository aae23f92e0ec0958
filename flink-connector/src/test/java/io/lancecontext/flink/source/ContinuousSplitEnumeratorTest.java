package io.lancecontext.flink.source;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancecontext.core.ContextStore;
import io.lancecontext.core.read.ScanSpec;
import io.lancecontext.core.read.StoreSnapshot;
import java.lang.reflect.Proxy;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.Callable;
import java.util.function.BiConsumer;
import java.util.stream.Collectors;
import org.apache.flink.api.connector.source.ReaderInfo;
import org.apache.flink.api.connector.source.SplitEnumeratorContext;
import org.apache.flink.api.connector.source.SplitsAssignment;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The continuous enumerator's rules, step by step (discoveries run by the test, not on a timer): which positions
 * stay tagged while a checkpoint may refer to them, when they are dropped, what a restore cleans up, and that an
 * unchanged store yields no split and no tag.
 */
class ContinuousSplitEnumeratorTest {
  @TempDir
  static Path dir;

  @AfterAll
  static void closeStores() {
    ContextStore.closeAllResident();
  }

  /** A context that records assignments and hands the periodic discovery to the test. */
  static final class Context {
    final List<LanceContextSplit> assigned = new ArrayList<>();
    Callable<Object> discover;
    BiConsumer<Object, Throwable> handler;

    @SuppressWarnings("unchecked")
    SplitEnumeratorContext<LanceContextSplit> proxy() {
      return (SplitEnumeratorContext<LanceContextSplit>) Proxy.newProxyInstance(getClass().getClassLoader(),
          new Class<?>[] {SplitEnumeratorContext.class}, (p, method, args) -> switch (method.getName()) {
            case "currentParallelism" -> 1;
            case "registeredReaders" -> Map.of(0, new ReaderInfo(0, "localhost"));
            case "assignSplits" -> {
              ((SplitsAssignment<LanceContextSplit>) args[0]).assignment().values().forEach(assigned::addAll);
              yield null;
            }
            case "callAsync" -> {
              discover = (Callable<Object>) args[0];
              handler = (BiConsumer<Object, Throwable>) args[1];
              yield null;
            }
            default -> null;
          });
    }

    /** Runs one discovery as the timer would: the callable, then its handler. */
    void discover() throws Exception {
      handler.accept(discover.call(), null);
    }

    List<String> take() {
      List<String> ids = assigned.stream().map(LanceContextSplit::id).toList();
      assigned.clear();
      return ids;
    }
  }

  private static Set<Long> tagged(ContextStore store) {
    return store.tags().stream().map(StoreSnapshot::tag).filter(t -> t.startsWith("stream-"))
        .map(t -> Long.parseLong(t.substring(t.lastIndexOf('-') + 1))).collect(Collectors.toCollection(TreeSet::new));
  }

  private static LanceContextSource source(Map<String, String> options) {
    return LanceContextSource.builder().options(options).scan(ScanSpec.all().withColumns(List.of("id", "reward")))
        .continuous(Duration.ofSeconds(1)).maxSplits(2).build();
  }

  @Test
  void positionsStayTaggedWhileACompletedCheckpointMayReferToThem() throws Exception {
    Map<String, String> options = Map.of("path", dir.resolve("floors").toString(), "schema", "rollout",
        "schema.embedding-dim", "2");
    try (ContextStore store = ContextStore.open(options)) {
      store.add(List.of(Map.of("id", "a", "reward", 1.0)));
      Context context = new Context();
      var enumerator = (ContinuousSplitEnumerator) source(options).createEnumerator(context.proxy());
      enumerator.start();
      assertEquals(Set.of(0L), tagged(store), "the start is tagged");

      enumerator.handleSplitRequest(0, "localhost");
      List<String> first = context.take();
      assertTrue(!first.isEmpty() && first.stream().allMatch(id -> id.startsWith("g0-")), first.toString());

      context.discover();
      assertEquals(Set.of(0L), tagged(store), "an unchanged store: no position, no tag");
      assertEquals(List.of(), context.take());

      store.add(List.of(Map.of("id", "b", "reward", 2.0)));
      context.discover();
      assertEquals(Set.of(0L, 1L), tagged(store), "a change is tagged when it is discovered");
      assertEquals(List.of(), context.take(), "the reader still reads its first splits: it did not ask");

      // checkpoint 1: the reader holds the first splits (generation 0)
      PendingSplits atOne = enumerator.snapshotState(1);
      enumerator.notifyCheckpointComplete(1);
      assertEquals(Set.of(0L, 1L), tagged(store));

      enumerator.handleSourceEvent(0, new ReaderProgress.Finished(first));
      enumerator.handleSplitRequest(0, "localhost");
      List<String> second = context.take();
      assertEquals(List.of("g1-000000"), second, "the change's split, reading positions 0 and 1");

      // checkpoint 2: the reader holds the change's split, which reads position 0
      enumerator.snapshotState(2);
      enumerator.notifyCheckpointComplete(2);
      assertEquals(Set.of(0L, 1L), tagged(store), "a position a reader's split reads stays tagged");

      enumerator.handleSourceEvent(0, new ReaderProgress.Finished(second));
      enumerator.snapshotState(3);
      assertEquals(Set.of(0L, 1L), tagged(store), "dropped only once the checkpoint completed");
      enumerator.notifyCheckpointComplete(3);
      assertEquals(Set.of(1L), tagged(store), "past every completed checkpoint's floor: dropped");

      store.add(List.of(Map.of("id", "c", "reward", 3.0)));
      context.discover();
      assertEquals(Set.of(1L, 2L), tagged(store));
      enumerator.close();

      // a restore from checkpoint 1: its positions are tagged again or still, the later attempt's are dropped
      Context again = new Context();
      PendingSplits state = new PendingSplits.Serializer().deserialize(new PendingSplits.Serializer().getVersion(),
          new PendingSplits.Serializer().serialize(atOne));
      var restored = (ContinuousSplitEnumerator) source(options).restoreEnumerator(again.proxy(), state);
      restored.start();
      assertEquals(Set.of(1L), tagged(store), "position 2 was taken after checkpoint 1: dropped");
      restored.handleSourceEvent(0, new ReaderProgress.Holding(Map.of()));
      restored.handleSplitRequest(0, "localhost");
      assertEquals(List.of("g1-000000"), again.take(), "the pending change of checkpoint 1");
      restored.close();
    }
  }

  @Test
  void beforeTheFirstCheckpointATagIsDroppedOnceTheReaderIsPastIt() throws Exception {
    Map<String, String> options = Map.of("path", dir.resolve("live").toString(), "schema", "rollout",
        "schema.embedding-dim", "2");
    try (ContextStore store = ContextStore.open(options)) {
      store.add(List.of(Map.of("id", "a", "reward", 1.0)));
      Context context = new Context();
      var enumerator = (ContinuousSplitEnumerator) source(options).createEnumerator(context.proxy());
      enumerator.start();
      enumerator.handleSplitRequest(0, "localhost");
      List<String> first = context.take();
      store.add(List.of(Map.of("id", "b", "reward", 2.0)));
      context.discover();
      enumerator.handleSourceEvent(0, new ReaderProgress.Finished(first));
      enumerator.handleSplitRequest(0, "localhost");
      List<String> second = context.take();
      assertEquals(Set.of(0L, 1L), tagged(store));
      enumerator.handleSourceEvent(0, new ReaderProgress.Finished(second));
      assertEquals(Set.of(1L), tagged(store), "no checkpoint can be restored: only the last position is kept");
      enumerator.close();
    }
  }
}
