package io.lancecontext.flink.source;

import io.lancecontext.core.ContextStore;
import io.lancecontext.core.read.ReadSplit;
import io.lancecontext.core.read.ScanSpec;
import io.lancecontext.core.read.StoreSnapshot;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.flink.api.connector.source.SourceEvent;
import org.apache.flink.api.connector.source.SplitEnumerator;
import org.apache.flink.api.connector.source.SplitEnumeratorContext;
import org.apache.flink.api.connector.source.SplitsAssignment;
import org.apache.flink.util.FlinkRuntimeException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The enumerator of a continuous source. Its positions are snapshots (generation 0: the start, then one per change
 * it saw); every discovery interval it asks core whether the view changed since the last one
 * ({@code snapshotIfChanged}: nothing is written while the store is idle) and turns each change into the split(s)
 * of {@code between(last, new)}.
 *
 * <p>Order. Every split goes to reader 0, in generation order, so each key's versions reach the stream in the
 * order they were written (readers of other subtasks stay idle).
 *
 * <p>Exactly once across failover. The checkpoint holds the last position and the splits not assigned yet;
 * readers' checkpoints hold their unfinished splits. Each position is tagged ({@link StreamTags}) before any
 * state refers to it, so a restore from any checkpoint finds it however long the job was stopped. At each
 * checkpoint the enumerator records the oldest generation its state or its readers' may refer to (the last
 * position, pending splits, splits readers were given and have not reported finished); when that checkpoint
 * completes, the tags of older positions are dropped: a restore uses that checkpoint or a later one. Until the job
 * takes its first checkpoint, nothing can be restored, and a tag is dropped as soon as readers are past it.
 */
final class ContinuousSplitEnumerator implements SplitEnumerator<LanceContextSplit, PendingSplits> {
  private static final Logger LOG = LoggerFactory.getLogger(ContinuousSplitEnumerator.class);
  private static final Comparator<LanceContextSplit> ORDER =
      Comparator.comparingLong(LanceContextSplit::generation).thenComparing(LanceContextSplit::id);
  /** The subtask that reads every split. */
  private static final int READER = 0;
  /** Splits of a restored state no reader has confirmed yet (they may still be held). */
  private static final int RESTORED = -1;

  private final SplitEnumeratorContext<LanceContextSplit> context;
  private final Map<String, String> options;
  private final ScanSpec template;
  private final long intervalMillis;
  private final int maxSplits;
  private final String streamId;
  private final StreamTags tags;
  private final TreeSet<LanceContextSplit> pending = new TreeSet<>(ORDER);
  /** Splits given to readers and not reported finished: subtask to split id to generation. */
  private final Map<Integer, Map<String, Long>> assigned = new HashMap<>();
  private final Set<Integer> heldReported = new HashSet<>();
  private final SortedMap<Long, String> kept;
  private final TreeMap<Long, Long> floorAtCheckpoint = new TreeMap<>();
  private final Set<Integer> waiting = new HashSet<>();
  private final AtomicBoolean discovering = new AtomicBoolean();
  private final boolean restored;
  private volatile String lastToken;
  private volatile long lastGeneration;
  private boolean checkpointed;
  private volatile boolean closed;

  private ContinuousSplitEnumerator(SplitEnumeratorContext<LanceContextSplit> context, Map<String, String> options,
      ScanSpec template, long intervalMillis, int maxSplits, List<LanceContextSplit> splits, StreamPosition at,
      boolean restored) {
    this.context = context;
    this.options = options;
    this.template = template;
    this.intervalMillis = intervalMillis;
    this.maxSplits = maxSplits;
    this.streamId = at.streamId();
    this.tags = new StreamTags(streamId);
    this.pending.addAll(splits);
    this.kept = new TreeMap<>(at.kept());
    this.lastToken = at.lastToken();
    this.lastGeneration = at.lastGeneration();
    this.restored = restored;
    this.checkpointed = restored;
    if (!at.assigned().isEmpty()) {
      assigned.put(RESTORED, new HashMap<>(at.assigned()));
    }
  }

  /**
   * A new stream: tags its start (the store as it is now, or {@code start}, a token or tag) as generation 0 and,
   * unless {@code startAfter}, plans the first splits: the whole view at that snapshot.
   */
  static ContinuousSplitEnumerator create(SplitEnumeratorContext<LanceContextSplit> context, Map<String, String> options,
      ScanSpec template, long intervalMillis, int maxSplits, String start, boolean startAfter) {
    String streamId = UUID.randomUUID().toString();
    StreamTags tags = new StreamTags(streamId);
    List<LanceContextSplit> splits = new ArrayList<>();
    StoreSnapshot first;
    try (ContextStore store = ContextStore.open(options)) {
      first = start == null ? tags.tagNow(store, 0) : tags.tag(store, 0, start);
      if (!startAfter) {
        List<ReadSplit> planned = store.planRead(template.atSnapshot(first.token()), maxSplits).splits();
        for (int i = 0; i < planned.size(); i++) {
          splits.add(new LanceContextSplit(splitId(0, i), planned.get(i), 0, 0));
        }
      }
    }
    return new ContinuousSplitEnumerator(context, options, template, intervalMillis, maxSplits, splits,
        new StreamPosition(streamId, first.token(), 0, new TreeMap<>(Map.of(0L, first.token())), Map.of()), false);
  }

  static ContinuousSplitEnumerator restore(SplitEnumeratorContext<LanceContextSplit> context,
      Map<String, String> options, ScanSpec template, long intervalMillis, int maxSplits, PendingSplits state) {
    return new ContinuousSplitEnumerator(context, options, template, intervalMillis, maxSplits, state.splits(),
        state.stream(), true);
  }

  private static String splitId(long generation, int i) {
    return String.format("g%d-%06d", generation, i);
  }

  @Override
  public void start() {
    LOG.info("continuous lancecontext source on {} {} at position {}; its positions are tagged {}<n> (drop them once "
        + "the job is retired for good)", options.get("path"), restored ? "restored" : "started", lastGeneration,
        tags.name(0).substring(0, tags.name(0).length() - 1));
    if (restored) {
      // tags of positions an attempt took after the checkpoint this one restored from
      try (ContextStore store = ContextStore.open(options)) {
        tags.dropAllBut(store, kept.keySet());
      }
    }
    context.callAsync(this::discover, this::discovered, intervalMillis, intervalMillis);
  }

  /** A change turned into splits, not yet part of the enumerator's state. */
  private record Discovered(String from, long generation, String token, List<LanceContextSplit> splits) {}

  /** In a worker thread: the next position and its splits, if the view changed; null when one is under way. */
  private Optional<Discovered> discover() {
    if (closed || !discovering.compareAndSet(false, true)) {
      return null;
    }
    String from = lastToken;
    long generation = lastGeneration + 1;
    try (ContextStore store = ContextStore.open(options)) {
      Optional<StoreSnapshot> changed = store.snapshotIfChanged(from);
      if (changed.isEmpty()) {
        return Optional.empty();
      }
      // tagged before any state refers to it
      String token = tags.tag(store, generation, changed.get().token()).token();
      List<ReadSplit> planned = store.planRead(template.between(from, token), maxSplits).splits();
      List<LanceContextSplit> splits = new ArrayList<>();
      for (int i = 0; i < planned.size(); i++) {
        // a diff reads positions generation - 1 and generation
        splits.add(new LanceContextSplit(splitId(generation, i), planned.get(i), 0, generation - 1));
      }
      return Optional.of(new Discovered(from, generation, token, splits));
    }
  }

  /** In the coordinator thread: a discovered change becomes part of the state. */
  private void discovered(Optional<Discovered> result, Throwable error) {
    if (result == null && error == null) {
      return;  // skipped: the previous discovery was still under way
    }
    discovering.set(false);
    if (error != null) {
      throw new FlinkRuntimeException("the lancecontext continuous source could not look for changes of "
          + options.get("path") + " since its last position", error);
    }
    if (closed || result.isEmpty()) {
      return;
    }
    Discovered d = result.get();
    if (!d.from().equals(lastToken)) {
      return;
    }
    kept.put(d.generation(), d.token());
    lastToken = d.token();
    lastGeneration = d.generation();
    pending.addAll(d.splits());
    assignPending();
  }

  @Override
  public void handleSplitRequest(int subtask, String host) {
    waiting.add(subtask);
    assignPending();
  }

  private void assignPending() {
    if (pending.isEmpty() || !waiting.contains(READER) || !context.registeredReaders().containsKey(READER)) {
      return;
    }
    List<LanceContextSplit> splits = new ArrayList<>(pending);
    pending.clear();
    waiting.remove(READER);
    Map<String, Long> given = assigned.computeIfAbsent(READER, k -> new HashMap<>());
    splits.forEach(s -> given.put(s.id(), s.generation()));
    context.assignSplits(new SplitsAssignment<>(Map.of(READER, splits)));
  }

  @Override
  public void addSplitsBack(List<LanceContextSplit> splits, int subtask) {
    Map<String, Long> given = assigned.computeIfAbsent(subtask, k -> new HashMap<>());
    splits.forEach(s -> given.remove(s.id()));
    pending.addAll(splits);
    waiting.remove(subtask);
  }

  @Override
  public void addReader(int subtask) {}

  @Override
  public void handleSourceEvent(int subtask, SourceEvent event) {
    if (event instanceof ReaderProgress.Finished f) {
      Map<String, Long> given = assigned.computeIfAbsent(subtask, k -> new HashMap<>());
      f.splitIds().forEach(given::remove);
      if (!checkpointed) {
        dropBelow(floor());  // no checkpoint taken yet: nothing can be restored
      }
    } else if (event instanceof ReaderProgress.Holding h) {
      assigned.put(subtask, new HashMap<>(h.splits()));
      heldReported.add(subtask);
      if (heldReported.size() >= context.currentParallelism()) {
        assigned.remove(RESTORED);
      }
    }
  }

  /** The oldest generation the enumerator's state or its readers' may refer to now. */
  private long floor() {
    long floor = lastGeneration;
    if (!pending.isEmpty()) {
      floor = Math.min(floor, pending.first().generation());
    }
    for (Map<String, Long> given : assigned.values()) {
      for (long g : given.values()) {
        floor = Math.min(floor, g);
      }
    }
    return floor;
  }

  @Override
  public PendingSplits snapshotState(long checkpointId) {
    checkpointed = true;
    floorAtCheckpoint.put(checkpointId, floor());
    Map<String, Long> given = new HashMap<>();
    assigned.values().forEach(given::putAll);
    return new PendingSplits(List.copyOf(pending), 0,
        new StreamPosition(streamId, lastToken, lastGeneration, kept, given));
  }

  /** A restore uses this checkpoint or a later one: positions older than its floor are not needed any more. */
  @Override
  public void notifyCheckpointComplete(long checkpointId) {
    Long floor = floorAtCheckpoint.get(checkpointId);
    floorAtCheckpoint.headMap(checkpointId, true).clear();
    if (floor != null) {
      dropBelow(floor);
    }
  }

  private void dropBelow(long generation) {
    SortedMap<Long, String> old = kept.headMap(generation);
    if (old.isEmpty()) {
      return;
    }
    List<Long> generations = List.copyOf(old.keySet());
    try (ContextStore store = ContextStore.open(options)) {
      tags.drop(store, generations);
    }
    generations.forEach(kept::remove);
  }

  @Override
  public void close() {
    closed = true;
  }
}
