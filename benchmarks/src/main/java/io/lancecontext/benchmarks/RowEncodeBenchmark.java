package io.lancecontext.benchmarks;

import io.lancecontext.core.ContextStore;
import io.lancecontext.core.RowAppender;
import io.lancecontext.core.StoreWriter;
import io.lancecontext.core.WriterOptions;
import io.lancecontext.core.internal.codec.KeyIds;
import io.lancecontext.core.internal.codec.RowBuffer;
import io.lancecontext.core.internal.write.Buckets;
import io.lancecontext.core.schema.SchemaPresets;
import io.lancecontext.core.schema.SchemaSpec;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * What encoding a row costs before any Lance write: the values the Flink benchmark writes (id, session_id, role, a
 * 200-byte text_payload, token_count) encoded into the {@code context} preset's layout by the buffer every write
 * handle fills (by bucket, 4 buckets, batches of 8,192 rows; the preset's other 21 columns null), against the same
 * values set into a plain Arrow batch of those 5 columns (what the fragment sink of the Flink benchmark fills).
 * Usage: {@code RowEncodeBenchmark [rows=2000000] [reps=8] [embeddingDim=8] [writeRows=0]}; the best rep of each
 * counts. With {@code writeRows} it also writes that many such rows into a new store of that dimension through one
 * immediate write handle (puts, as Flink's at-least-once sink) and prints the time. Last line:
 * {@code RESULT row_encode store_ns_per_row=… plain_arrow_ns_per_row=… store_vs_plain=… [write_s=…]}.
 */
public final class RowEncodeBenchmark {
  private RowEncodeBenchmark() {}

  private static final int BATCH = 8192;

  public static void main(String[] args) throws java.io.IOException {
    int rows = args.length > 0 ? Integer.parseInt(args[0]) : 2_000_000;
    int reps = args.length > 1 ? Integer.parseInt(args[1]) : 8;
    int dim = args.length > 2 ? Integer.parseInt(args[2]) : 8;
    int writeRows = args.length > 3 ? Integer.parseInt(args[3]) : 0;
    SchemaSpec spec = SchemaPresets.context(dim);
    byte[][] keys = new byte[rows][];
    for (int i = 0; i < rows; i++) {
      keys[i] = String.format(Locale.ROOT, "%016x-%08d", (long) i * 0x9E3779B97F4A7C15L, i).getBytes(StandardCharsets.UTF_8);
    }
    byte[] text = "t".repeat(200).getBytes(StandardCharsets.UTF_8);
    byte[] session = "session-0042".getBytes(StandardCharsets.UTF_8);
    byte[] role = "assistant".getBytes(StandardCharsets.UTF_8);
    double store = Double.MAX_VALUE;
    double plain = Double.MAX_VALUE;
    try (BufferAllocator allocator = new RootAllocator()) {
      for (int rep = 1; rep <= reps; rep++) {
        long t = System.nanoTime();
        try (RowBuffer buffer = new RowBuffer(spec, allocator, KeyIds.random(), 4, (u, o, l) -> Buckets.of(u, o, l, 4))) {
          int id = buffer.column("id");
          int s = buffer.column("session_id");
          int r = buffer.column("role");
          int tx = buffer.column("text_payload");
          int tc = buffer.column("token_count");
          for (int i = 0; i < rows; i++) {
            buffer.setUtf8(id, keys[i]);
            buffer.setUtf8(s, session);
            buffer.setUtf8(r, role);
            buffer.setUtf8(tx, text);
            buffer.set(tc, i & 1023);
            buffer.endRow();
            if (buffer.rows() == BATCH) {
              buffer.takeAll().forEach(VectorSchemaRoot::close);
            }
          }
          buffer.takeAll().forEach(VectorSchemaRoot::close);
        }
        double ns = (System.nanoTime() - t) / (double) rows;
        t = System.nanoTime();
        plainArrow(allocator, keys, session, role, text);
        double pns = (System.nanoTime() - t) / (double) rows;
        System.out.printf(Locale.ROOT, "rep %d: store layout %.1f ns/row, plain Arrow %.1f ns/row%n", rep, ns, pns);
        store = Math.min(store, ns);
        plain = Math.min(plain, pns);
      }
    }
    String write = "";
    if (writeRows > 0) {
      write = String.format(Locale.ROOT, " write_s=%.2f", write(writeRows, dim, keys, session, role, text));
    }
    System.out.printf(Locale.ROOT, "RESULT row_encode store_ns_per_row=%.1f plain_arrow_ns_per_row=%.1f store_vs_plain=%.2f%s%n",
        store, plain, store / plain, write);
  }

  /** Seconds to write {@code rows} rows into a new store through one immediate handle, committed. */
  private static double write(int rows, int dim, byte[][] keys, byte[] session, byte[] role, byte[] text)
      throws java.io.IOException {
    java.nio.file.Path dir = Bench.scratch("row-encode");
    try (ContextStore store = ContextStore.open(java.util.Map.of("path", dir.resolve("store").toString(),
        "schema", "context", "schema.embedding-dim", Integer.toString(dim)))) {
      long t = System.nanoTime();
      try (StoreWriter writer = store.newWriter(WriterOptions.defaults())) {
        RowAppender appender = writer.rows();
        int id = appender.column("id");
        int s = appender.column("session_id");
        int r = appender.column("role");
        int tx = appender.column("text_payload");
        int tc = appender.column("token_count");
        for (int i = 0; i < rows; i++) {
          appender.setUtf8(id, keys[i % keys.length]).setUtf8(s, session).setUtf8(r, role).setUtf8(tx, text)
              .setInt(tc, i & 1023).endRow();
        }
        writer.commit();
      }
      return (System.nanoTime() - t) / 1e9;
    } finally {
      ContextStore.closeAllResident();
      Bench.delete(dir);
    }
  }

  private static void plainArrow(BufferAllocator allocator, byte[][] keys, byte[] session, byte[] role, byte[] text) {
    Schema schema = new Schema(java.util.List.of(Field.nullable("id", ArrowType.Utf8.INSTANCE),
        Field.nullable("session_id", ArrowType.Utf8.INSTANCE), Field.nullable("role", ArrowType.Utf8.INSTANCE),
        Field.nullable("text_payload", ArrowType.Utf8.INSTANCE), Field.nullable("token_count", new ArrowType.Int(32, true))));
    int i = 0;
    while (i < keys.length) {
      try (VectorSchemaRoot root = VectorSchemaRoot.create(schema, allocator)) {
        root.allocateNew();
        VarCharVector id = (VarCharVector) root.getVector(0);
        VarCharVector s = (VarCharVector) root.getVector(1);
        VarCharVector r = (VarCharVector) root.getVector(2);
        VarCharVector tx = (VarCharVector) root.getVector(3);
        IntVector tc = (IntVector) root.getVector(4);
        int n = 0;
        for (; n < BATCH && i < keys.length; n++, i++) {
          id.setSafe(n, keys[i]);
          s.setSafe(n, session);
          r.setSafe(n, role);
          tx.setSafe(n, text);
          tc.setSafe(n, i & 1023);
        }
        root.setRowCount(n);
      }
    }
  }
}
