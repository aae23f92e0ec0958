package io.lancecontext.benchmarks;

import io.lancecontext.core.ContextStore;
import io.lancecontext.core.RowAppender;
import io.lancecontext.core.StoreWriter;
import io.lancecontext.core.WriterOptions;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * What a write handle's CPU costs per row before anything reaches Lance: the values the Flink benchmark writes (id,
 * session_id, role, a 200-byte text_payload, token_count) set through an atomic handle's {@link RowAppender} into
 * a {@code context} store of 4 shards (encoded in the preset's layout by bucket, the preset's other 21 columns null,
 * then validated, deduplicated and split as staging does; the handle is closed without a commit, so no part is
 * written), against the same values set into a plain Arrow batch of those 5 columns (what the Flink benchmark's
 * fragment sink fills). Usage: {@code RowEncodeBenchmark [rows=200000] [reps=8] [embeddingDim=8] [writeRows=0]}; the
 * best rep of each counts. With {@code writeRows} it also writes that many such rows into a new store through one
 * immediate handle (puts, as Flink's at-least-once sink) and prints the time. Last line:
 * {@code RESULT row_encode store_ns_per_row=… plain_arrow_ns_per_row=… store_vs_plain=… [write_s=…]}.
 */
public final class RowEncodeBenchmark {
  private RowEncodeBenchmark() {}

  private static final int BATCH = 8192;

  public static void main(String[] args) throws IOException {
    int rows = args.length > 0 ? Integer.parseInt(args[0]) : 200_000;
    int reps = args.length > 1 ? Integer.parseInt(args[1]) : 8;
    int dim = args.length > 2 ? Integer.parseInt(args[2]) : 8;
    int writeRows = args.length > 3 ? Integer.parseInt(args[3]) : 0;
    byte[][] keys = new byte[Math.max(rows, writeRows)][];
    for (int i = 0; i < keys.length; i++) {
      keys[i] = String.format(Locale.ROOT, "%016x-%08d", (long) i * 0x9E3779B97F4A7C15L, i).getBytes(StandardCharsets.UTF_8);
    }
    byte[] text = "t".repeat(200).getBytes(StandardCharsets.UTF_8);
    byte[] session = "session-0042".getBytes(StandardCharsets.UTF_8);
    byte[] role = "assistant".getBytes(StandardCharsets.UTF_8);
    double store = Double.MAX_VALUE;
    double plain = Double.MAX_VALUE;
    Path dir = Bench.scratch("row-encode");
    // staged rows stay in memory (no part written before the handle is closed) up to these sizes
    try (ContextStore target = ContextStore.open(Map.of("path", dir.resolve("encode").toString(), "schema", "context",
            "schema.embedding-dim", Integer.toString(dim), "shards", "4", "write.batch-bytes", "1GiB"));
        BufferAllocator allocator = new RootAllocator()) {
      for (int rep = 1; rep <= reps; rep++) {
        long t = System.nanoTime();
        try (StoreWriter writer = target.newWriter(WriterOptions.builder().commitMode(WriterOptions.CommitMode.ATOMIC)
            .transaction("encode-" + rep, "0").build())) {
          fill(writer.rows(), rows, keys, session, role, text);
        }
        double ns = (System.nanoTime() - t) / (double) rows;
        t = System.nanoTime();
        plainArrow(allocator, rows, keys, session, role, text);
        double pns = (System.nanoTime() - t) / (double) rows;
        System.out.printf(Locale.ROOT, "rep %d: store handle %.1f ns/row, plain Arrow %.1f ns/row%n", rep, ns, pns);
        store = Math.min(store, ns);
        plain = Math.min(plain, pns);
      }
    } finally {
      ContextStore.closeAllResident();
    }
    String write = "";
    if (writeRows > 0) {
      write = String.format(Locale.ROOT, " write_s=%.2f", write(dir.resolve("write"), writeRows, dim, keys, session, role, text));
    }
    Bench.delete(dir);
    System.out.printf(Locale.ROOT, "RESULT row_encode store_ns_per_row=%.1f plain_arrow_ns_per_row=%.1f store_vs_plain=%.2f%s%n",
        store, plain, store / plain, write);
  }

  private static void fill(RowAppender appender, int rows, byte[][] keys, byte[] session, byte[] role, byte[] text) {
    int id = appender.column("id");
    int s = appender.column("session_id");
    int r = appender.column("role");
    int tx = appender.column("text_payload");
    int tc = appender.column("token_count");
    for (int i = 0; i < rows; i++) {
      appender.setUtf8(id, keys[i]).setUtf8(s, session).setUtf8(r, role).setUtf8(tx, text).setInt(tc, i & 1023).endRow();
    }
  }

  /** Seconds to write {@code rows} rows into a new store through one immediate handle, committed. */
  private static double write(Path path, int rows, int dim, byte[][] keys, byte[] session, byte[] role, byte[] text) {
    try (ContextStore store = ContextStore.open(Map.of("path", path.toString(), "schema", "context",
        "schema.embedding-dim", Integer.toString(dim)))) {
      long t = System.nanoTime();
      try (StoreWriter writer = store.newWriter(WriterOptions.defaults())) {
        fill(writer.rows(), rows, keys, session, role, text);
        writer.commit();
      }
      return (System.nanoTime() - t) / 1e9;
    } finally {
      ContextStore.closeAllResident();
    }
  }

  private static void plainArrow(BufferAllocator allocator, int rows, byte[][] keys, byte[] session, byte[] role,
      byte[] text) {
    Schema schema = new Schema(java.util.List.of(Field.nullable("id", ArrowType.Utf8.INSTANCE),
        Field.nullable("session_id", ArrowType.Utf8.INSTANCE), Field.nullable("role", ArrowType.Utf8.INSTANCE),
        Field.nullable("text_payload", ArrowType.Utf8.INSTANCE), Field.nullable("token_count", new ArrowType.Int(32, true))));
    int i = 0;
    while (i < rows) {
      try (VectorSchemaRoot root = VectorSchemaRoot.create(schema, allocator)) {
        root.allocateNew();
        VarCharVector id = (VarCharVector) root.getVector(0);
        VarCharVector s = (VarCharVector) root.getVector(1);
        VarCharVector r = (VarCharVector) root.getVector(2);
        VarCharVector tx = (VarCharVector) root.getVector(3);
        IntVector tc = (IntVector) root.getVector(4);
        int n = 0;
        for (; n < BATCH && i < rows; n++, i++) {
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
