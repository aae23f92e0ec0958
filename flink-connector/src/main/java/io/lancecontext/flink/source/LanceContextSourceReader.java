package io.lancecontext.flink.source;

import io.lancecontext.core.ContextStore;
import io.lancecontext.core.StoreReader;
import io.lancecontext.core.read.ScanSpec;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.apache.arrow.vector.BitVector;
import org.apache.flink.api.connector.source.ReaderOutput;
import org.apache.flink.api.connector.source.SourceReader;
import org.apache.flink.api.connector.source.SourceReaderContext;
import org.apache.flink.core.io.InputStatus;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.types.RowKind;

/**
 * Reads assigned splits one after the other in the task thread, asking the enumerator for the next split
 * when it has none. Splits carry no {@code storage.*} values: the reader opens the store with the source's
 * options (a resident store of the TaskManager's JVM, shared by its subtasks) and reads core's Arrow
 * batches as {@link RowData}.
 *
 * <p>Rows of a whole view are {@link RowKind#INSERT}s. Rows of what changed between two snapshots (a continuous
 * source's splits after its first) are {@link RowKind#UPDATE_AFTER} (a key added or upserted: its newest version)
 * or, where core marks them deleted ({@code _lc_deleted}, stores with capability {@code tombstones}),
 * {@link RowKind#DELETE} (holding the key, nulls elsewhere): an upsert changelog on the store's key. A continuous
 * source's reader also tells the enumerator which splits it holds when it starts and which it finished
 * ({@link ReaderProgress}).
 */
final class LanceContextSourceReader implements SourceReader<RowData, LanceContextSplit> {
  private final SourceReaderContext context;
  private final Map<String, String> options;
  private final RowDataConverter converter;
  private final boolean continuous;
  private final Deque<LanceContextSplit> queue = new ArrayDeque<>();
  private CompletableFuture<Void> available = new CompletableFuture<>();
  private boolean noMoreSplits;
  private boolean requested;

  private LanceContextSplit split;
  private ContextStore store;
  private StoreReader reader;
  private RowDataConverter.Getter[] getters;
  /** The batch's {@code _lc_deleted} column (a read of what changed on a store with tombstones), else null. */
  private BitVector deleted;
  private RowKind kind = RowKind.INSERT;
  private int row;
  private int rows;
  private long emitted;

  LanceContextSourceReader(SourceReaderContext context, Map<String, String> options, RowType type, boolean continuous) {
    this.context = context;
    this.options = options;
    this.converter = new RowDataConverter(type);
    this.continuous = continuous;
  }

  @Override
  public void start() {
    if (continuous) {
      Map<String, Long> held = new LinkedHashMap<>();
      queue.forEach(s -> held.put(s.id(), s.generation()));
      context.sendSourceEventToCoordinator(new ReaderProgress.Holding(held));
    }
    requestSplit();
  }

  @Override
  public InputStatus pollNext(ReaderOutput<RowData> output) {
    while (true) {
      if (reader == null && !openNext()) {
        if (noMoreSplits) {
          return InputStatus.END_OF_INPUT;
        }
        requestSplit();
        return InputStatus.NOTHING_AVAILABLE;
      }
      if (row < rows) {
        RowData out = RowDataConverter.row(getters, row);
        out.setRowKind(deleted != null && !deleted.isNull(row) && deleted.get(row) != 0 ? RowKind.DELETE : kind);
        row++;
        output.collect(out);
        emitted++;
        return InputStatus.MORE_AVAILABLE;
      }
      if (!advance()) {
        finishSplit();
      }
    }
  }

  private boolean openNext() {
    LanceContextSplit next = queue.poll();
    if (next == null) {
      return false;
    }
    split = next;
    store = ContextStore.openForSplit(next.split(), options);
    try {
      reader = store.read(next.split());
    } catch (RuntimeException e) {
      store.close();
      store = null;
      throw e;
    }
    kind = next.split().scan().incremental() ? RowKind.UPDATE_AFTER : RowKind.INSERT;
    emitted = 0;
    rows = 0;
    row = 0;
    // a restored split skips the rows emitted before the checkpoint
    while (emitted < next.emitted() && advance()) {
      long skip = Math.min(rows, next.emitted() - emitted);
      row = (int) skip;
      emitted += skip;
    }
    return true;
  }

  /** Loads the next batch of the split; false at its end. */
  private boolean advance() {
    if (!reader.next()) {
      return false;
    }
    getters = converter.bind(reader.batch());
    deleted = (BitVector) reader.batch().getVector(ScanSpec.DELETED);
    rows = reader.batch().getRowCount();
    row = 0;
    return true;
  }

  private void finishSplit() {
    closeSplit();
    if (continuous) {
      context.sendSourceEventToCoordinator(new ReaderProgress.Finished(new ArrayList<>(List.of(split.id()))));
    }
    split = null;
  }

  private void closeSplit() {
    try {
      if (reader != null) {
        reader.close();
      }
    } finally {
      reader = null;
      deleted = null;
      if (store != null) {
        store.close();
        store = null;
      }
    }
  }

  private void requestSplit() {
    if (!requested) {
      requested = true;
      context.sendSplitRequest();
    }
  }

  @Override
  public List<LanceContextSplit> snapshotState(long checkpointId) {
    List<LanceContextSplit> state = new ArrayList<>();
    if (split != null) {
      state.add(split.withEmitted(emitted));
    }
    state.addAll(queue);
    return state;
  }

  @Override
  public CompletableFuture<Void> isAvailable() {
    return available;
  }

  @Override
  public void addSplits(List<LanceContextSplit> splits) {
    queue.addAll(splits);
    requested = false;
    signal();
  }

  @Override
  public void notifyNoMoreSplits() {
    noMoreSplits = true;
    signal();
  }

  private void signal() {
    CompletableFuture<Void> f = available;
    available = new CompletableFuture<>();
    f.complete(null);
  }

  @Override
  public void close() {
    closeSplit();
  }
}
