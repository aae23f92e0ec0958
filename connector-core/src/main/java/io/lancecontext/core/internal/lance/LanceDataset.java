package io.lancecontext.core.internal.lance;

import io.lancecontext.core.options.StoreConfig;
import java.io.IOException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.arrow.c.ArrowArrayStream;
import org.apache.arrow.c.Data;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.types.pojo.Schema;
import org.lance.Dataset;
import org.lance.Fragment;
import org.lance.ReadOptions;
import org.lance.WriteParams;
import org.lance.memwal.InitializeMemWalParams;

/**
 * An open Lance dataset (the base table, a flushed generation, a staged transaction part, a maintenance
 * handle): the handle through which code outside this package reads a dataset. A thin wrapper on purpose:
 * each method is one lance-core call, failures passed on as lance-core raises them (callers translate them
 * with {@link LanceErrors} where they did before), except {@link #open} and {@link #create}, which
 * translate. What takes more than one call lives in a class of its own here ({@link MergeCommits},
 * {@link LanceCompaction}, {@link VersionCleanup}, {@link KeyIndex}, {@link MemWalShardWriter},
 * {@link BlobMaterializer}), so that no class outside this package names a lance-core type and an upgrade
 * of lance-core changes this package only. Closing the handle closes the dataset. Thread-safety is
 * lance-core's {@code Dataset}'s.
 */
public final class LanceDataset implements AutoCloseable {
  private final Dataset dataset;

  private LanceDataset(Dataset dataset) {
    this.dataset = dataset;
  }

  /**
   * Opens {@code version} (the latest when negative) of the dataset at {@code uri} with the store's storage
   * options and {@code session} (null: lance-core gives the dataset a session of its own).
   */
  public static LanceDataset open(String uri, StoreConfig config, BufferAllocator allocator, long version,
      LanceSession session) {
    ReadOptions.Builder options = new ReadOptions.Builder().setStorageOptions(config.storageOptions());
    if (version >= 0) {
      options.setVersion(version);
    }
    var builder = Dataset.open().allocator(allocator).uri(uri).readOptions(options.build());
    if (session != null) {
      builder.session(session.lance());
    }
    return new LanceDataset(LanceErrors.call("open " + uri, builder::build));
  }

  /** Creates an empty dataset with {@code schema}; fails if one exists. */
  public static LanceDataset create(String uri, Schema schema, StoreConfig config, BufferAllocator allocator) {
    WriteParams params = new WriteParams.Builder().withMode(WriteParams.WriteMode.CREATE)
        .withStorageOptions(config.storageOptions()).build();
    return new LanceDataset(LanceErrors.call("create " + uri, () -> Dataset.create(allocator, uri, schema, params)));
  }

  /**
   * Writes {@code batches} (one schema; not closed) as a new dataset at {@code uri}, in their order and in one
   * data file, so that a row's offset is its place among them; {@code action} names the write in errors. Returns
   * its fragments.
   */
  public static List<LanceFragment> writeNew(String uri, List<VectorSchemaRoot> batches, StoreConfig config,
      BufferAllocator allocator, String action) {
    WriteParams params = new WriteParams.Builder().withMode(WriteParams.WriteMode.CREATE)
        .withMaxRowsPerFile(Integer.MAX_VALUE).withStorageOptions(config.storageOptions()).build();
    try (ArrowArrayStream stream = ArrowArrayStream.allocateNew(allocator);
        BatchesReader reader = new BatchesReader(batches, allocator)) {
      Data.exportArrayStream(allocator, reader, stream);
      try (Dataset ds = LanceErrors.call(action, () -> Dataset.create(allocator, stream, uri, params))) {
        // written and committed
        List<LanceFragment> out = new ArrayList<>();
        for (Fragment f : ds.getFragments()) {
          out.add(new LanceFragment(f.metadata()));
        }
        return out;
      }
    } catch (IOException e) {
      throw LanceErrors.translate(action, e);
    }
  }

  /**
   * A handle on a dataset opened with lance-core directly (tests, benchmarks); closing it closes
   * {@code dataset}. Main code outside this package never calls it (ArchitectureTest).
   */
  public static LanceDataset wrap(Dataset dataset) {
    return new LanceDataset(dataset);
  }

  /**
   * The lance-core dataset, for this package, tests and benchmarks; main code outside this package never
   * calls it (ArchitectureTest).
   */
  public Dataset lance() {
    return dataset;
  }

  public String uri() {
    return dataset.uri();
  }

  /** The version this handle is at. */
  public long version() {
    return dataset.version();
  }

  /** When the version this handle is at was committed (the time lance-core wrote into its manifest). */
  public Instant committedAt() {
    return dataset.getVersion().getDataTime().toInstant();
  }

  /** Moves this handle to the latest version. */
  public void checkoutLatest() {
    dataset.checkoutLatest();
  }

  /** The Arrow schema of the dataset. */
  public Schema schema() {
    return dataset.getSchema();
  }

  /** Whether the dataset has a top-level column {@code name}. */
  public boolean hasColumn(String name) {
    return dataset.getSchema().getFields().stream().anyMatch(f -> f.getName().equals(name));
  }

  /** Every fragment, in table order. */
  public List<LanceFragment> fragments() {
    List<LanceFragment> out = new ArrayList<>();
    for (Fragment f : dataset.getFragments()) {
      out.add(new LanceFragment(f.metadata()));
    }
    return out;
  }

  /** Live rows. */
  public long countRows() {
    return dataset.countRows();
  }

  /** Live rows matching {@code filter} (Lance SQL). */
  public long countRows(String filter) {
    return dataset.countRows(filter);
  }

  /** Deletes the rows matching {@code filter} (Lance SQL), in one commit. */
  public void delete(String filter) {
    dataset.delete(filter);
  }

  /** Opens a scan; the caller closes it. */
  public ScanHandle scan(ScanRequest request) {
    return ScanHandle.open(this, request);
  }

  /** The {@code columns} of the rows at {@code offsets} (ascending; row offsets in the dataset). */
  public ArrowReader take(List<Long> offsets, List<String> columns) throws IOException {
    return dataset.take(offsets, columns);
  }

  /** The {@code columns} of the rows with {@code rowIds} (as a scan with row ids returned them), in that order. */
  public ArrowReader takeRows(List<Long> rowIds, List<String> columns) throws IOException {
    return dataset.takeRows(rowIds, columns);
  }

  /** The dataset's configuration (key-value pairs kept in its manifest). */
  public Map<String, String> config() {
    return dataset.getConfig();
  }

  /** Sets configuration entries, in one commit. */
  public void updateConfig(Map<String, String> entries) {
    dataset.updateConfig(entries);
  }

  /** Whether the dataset has a MemWAL (its index details exist). */
  public boolean hasMemWal() {
    return dataset.memWalIndexDetails().isPresent();
  }

  /** Initializes the dataset's MemWAL, unsharded (lancecontext names its shards itself). */
  public void initializeMemWal() {
    dataset.initializeMemWal(new InitializeMemWalParams().withUnsharded());
  }

  @Override
  public void close() {
    dataset.close();
  }
}
