package io.lancecontext.core.internal.lance;

import java.io.IOException;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.VectorUnloader;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * An {@link ArrowReader} that yields existing batches of one schema, in order, sharing their buffers (no
 * copy). lance-core takes its input as readers; the source batches stay owned by the caller and must
 * outlive the reader.
 */
public final class BatchesReader extends ArrowReader {
  private final Schema schema;
  private final List<VectorSchemaRoot> sources;
  private int next;

  public BatchesReader(VectorSchemaRoot source, BufferAllocator allocator) {
    this(List.of(source), allocator);
  }

  /** {@code sources}: at least one batch; all of the first one's schema. */
  public BatchesReader(List<VectorSchemaRoot> sources, BufferAllocator allocator) {
    this(schemaOf(sources), sources, allocator);
  }

  private BatchesReader(Schema schema, List<VectorSchemaRoot> sources, BufferAllocator allocator) {
    super(allocator);
    this.schema = schema;
    this.sources = List.copyOf(sources);
  }

  /** A reader of no batches of {@code schema}. */
  public static BatchesReader none(Schema schema, BufferAllocator allocator) {
    return new BatchesReader(schema, List.of(), allocator);
  }

  private static Schema schemaOf(List<VectorSchemaRoot> sources) {
    if (sources.isEmpty()) {
      throw new IllegalArgumentException("no batches");
    }
    return sources.get(0).getSchema();
  }

  @Override
  public boolean loadNextBatch() throws IOException {
    ensureInitialized();
    if (next >= sources.size()) {
      return false;
    }
    try (ArrowRecordBatch batch = new VectorUnloader(sources.get(next++)).getRecordBatch()) {
      loadRecordBatch(batch);
    }
    return true;
  }

  @Override
  public long bytesRead() {
    return 0;
  }

  @Override
  protected void closeReadSource() {}

  @Override
  protected Schema readSchema() {
    return schema;
  }
}
