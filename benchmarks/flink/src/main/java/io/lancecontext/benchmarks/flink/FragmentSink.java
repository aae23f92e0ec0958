package io.lancecontext.benchmarks.flink;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.io.Serializable;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.flink.api.connector.sink2.Committer;
import org.apache.flink.api.connector.sink2.CommitterInitContext;
import org.apache.flink.api.connector.sink2.CommittingSinkWriter;
import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.api.connector.sink2.SinkWriter;
import org.apache.flink.api.connector.sink2.SupportsCommitter;
import org.apache.flink.api.connector.sink2.WriterInitContext;
import org.apache.flink.core.io.SimpleVersionedSerializer;
import org.apache.flink.types.Row;
import org.lance.Dataset;
import org.lance.Fragment;
import org.lance.FragmentMetadata;
import org.lance.FragmentOperation;
import org.lance.WriteParams;

/**
 * The baseline: the lance-flink approach as a Sink V2. Each writer subtask buffers rows into Arrow and writes
 * them as new, uncommitted Lance fragments ({@code Fragment.create}) every {@code batchRows} rows and at each
 * checkpoint; each committer subtask then appends its own writer's fragments in a commit of its own. So a
 * checkpoint becomes visible in as many steps as there are committer subtasks, there is no upsert, and a
 * run leaves about one fragment per {@code batchRows} rows per subtask. Plain (non-MemWAL) dataset with
 * the benchmark's five columns.
 */
@SuppressWarnings("deprecation") // Fragment.create and FragmentOperation.Append: the calls lance-flink makes
final class FragmentSink implements Sink<Row>, SupportsCommitter<FragmentSink.Fragments> {
  private static final long serialVersionUID = 1L;

  /** Columns of the baseline dataset, in {@link IngestRecords} order. */
  static final List<String> COLUMNS = List.of("id", "session_id", "role", "text_payload", "token_count");

  /** One entry per commit: {start ms, end ms, version, fragments, rows}. */
  static final ConcurrentLinkedQueue<long[]> COMMITS = new ConcurrentLinkedQueue<>();

  private final String uri;
  private final int batchRows;

  private FragmentSink(String uri, int batchRows) {
    this.uri = uri;
    this.batchRows = batchRows;
  }

  /** Creates the empty dataset (so committers only append) and the sink. */
  static FragmentSink create(String uri, int batchRows) {
    try (BufferAllocator a = new RootAllocator(); Dataset ds = Dataset.create(a, uri, schema(), new WriteParams.Builder().build())) {
      return new FragmentSink(uri, batchRows);
    }
  }

  static Schema schema() {
    List<Field> fields = new ArrayList<>();
    for (String c : COLUMNS) {
      ArrowType t = c.equals("token_count") ? new ArrowType.Int(32, true) : ArrowType.Utf8.INSTANCE;
      fields.add(new Field(c, c.equals("id") ? FieldType.notNullable(t) : FieldType.nullable(t), null));
    }
    return new Schema(fields);
  }

  @Override
  public SinkWriter<Row> createWriter(WriterInitContext context) {
    return new Writer(uri, batchRows);
  }

  @Override
  public Committer<Fragments> createCommitter(CommitterInitContext context) {
    return new FragmentCommitter(uri);
  }

  @Override
  public SimpleVersionedSerializer<Fragments> getCommittableSerializer() {
    return new FragmentsSerializer();
  }

  /** Fragments one writer subtask wrote for one checkpoint. */
  static final class Fragments implements Serializable {
    private static final long serialVersionUID = 1L;
    final ArrayList<FragmentMetadata> fragments;

    Fragments(List<FragmentMetadata> fragments) {
      this.fragments = new ArrayList<>(fragments);
    }
  }

  private static final class Writer implements CommittingSinkWriter<Row, Fragments> {
    private final String uri;
    private final int batchRows;
    private final BufferAllocator allocator = new RootAllocator();
    private final VectorSchemaRoot root;
    private final List<FragmentMetadata> pending = new ArrayList<>();
    private int rows;

    Writer(String uri, int batchRows) {
      this.uri = uri;
      this.batchRows = batchRows;
      this.root = VectorSchemaRoot.create(schema(), allocator);
    }

    @Override
    public void write(Row r, Context context) {
      for (int c = 0; c < 4; c++) {
        Object v = r.getField(c);
        if (v == null) {
          ((VarCharVector) root.getVector(c)).setNull(rows);
        } else {
          ((VarCharVector) root.getVector(c)).setSafe(rows, ((String) v).getBytes(StandardCharsets.UTF_8));
        }
      }
      ((IntVector) root.getVector(4)).setSafe(rows, (Integer) r.getField(4));
      if (++rows >= batchRows) {
        writeBatch();
      }
    }

    private void writeBatch() {
      if (rows == 0) {
        return;
      }
      root.setRowCount(rows);
      pending.addAll(Fragment.create(uri, allocator, root, new WriteParams.Builder().build()));
      root.clear();
      root.allocateNew();
      rows = 0;
    }

    @Override
    public void flush(boolean endOfInput) {
      writeBatch();
    }

    @Override
    public Collection<Fragments> prepareCommit() {
      writeBatch();
      if (pending.isEmpty()) {
        return List.of();
      }
      Fragments f = new Fragments(pending);
      pending.clear();
      return List.of(f);
    }

    @Override
    public void close() {
      root.close();
      allocator.close();
    }
  }

  private static final class FragmentCommitter implements Committer<Fragments> {
    private final String uri;
    private final BufferAllocator allocator = new RootAllocator();

    FragmentCommitter(String uri) {
      this.uri = uri;
    }

    @Override
    public void commit(Collection<CommitRequest<Fragments>> requests) {
      List<FragmentMetadata> all = new ArrayList<>();
      for (CommitRequest<Fragments> r : requests) {
        all.addAll(r.getCommittable().fragments);
      }
      if (all.isEmpty()) {
        return;
      }
      long start = System.currentTimeMillis();
      long readVersion;
      try (Dataset ds = Dataset.open(uri, allocator)) {
        readVersion = ds.latestVersion();
      }
      // not replay-safe: a retried commit appends the fragments again (the baseline has no idempotence)
      try (Dataset ds = Dataset.commit(allocator, uri, new FragmentOperation.Append(all), Optional.of(readVersion))) {
        long rows = all.stream().mapToLong(FragmentMetadata::getPhysicalRows).sum();
        COMMITS.add(new long[] {start, System.currentTimeMillis(), ds.version(), all.size(), rows});
      }
    }

    @Override
    public void close() {
      allocator.close();
    }
  }

  private static final class FragmentsSerializer implements SimpleVersionedSerializer<Fragments> {
    @Override
    public int getVersion() {
      return 1;
    }

    @Override
    public byte[] serialize(Fragments f) throws IOException {
      ByteArrayOutputStream bytes = new ByteArrayOutputStream();
      try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
        out.writeObject(f);
      }
      return bytes.toByteArray();
    }

    @Override
    public Fragments deserialize(int version, byte[] serialized) throws IOException {
      try (ObjectInputStream in = new ObjectInputStream(new ByteArrayInputStream(serialized))) {
        return (Fragments) in.readObject();
      } catch (ClassNotFoundException e) {
        throw new IOException(e);
      }
    }
  }
}
