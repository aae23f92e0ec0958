package io.lancecontext.core.internal.lance;

import java.io.IOException;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.VectorUnloader;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * An {@link ArrowReader} that yields one existing batch, sharing its buffers (no copy). lance-core
 * takes its input as readers; the source batch stays owned by the caller and must outlive the reader.
 */
public final class SingleBatchReader extends ArrowReader {
  private final VectorSchemaRoot source;
  private boolean done;

  public SingleBatchReader(VectorSchemaRoot source, BufferAllocator allocator) {
    super(allocator);
    this.source = source;
  }

  @Override
  public boolean loadNextBatch() throws IOException {
    if (done) {
      return false;
    }
    done = true;
    ensureInitialized();
    try (ArrowRecordBatch batch = new VectorUnloader(source).getRecordBatch()) {
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
    return source.getSchema();
  }
}
