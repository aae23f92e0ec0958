package io.lancecontext.core.internal.txn;

import io.lancecontext.core.result.WriteSummary;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The one decision about a transaction, written once: published (with the publish sequence of every
 * bucket it touches and exactly the parts that became visible) or aborted.
 *
 * @param sequences bucket → the write sequence every row of the transaction in that bucket reads as
 * @param parts the visible parts, in the order ties resolve (bucket, part id, index): the later wins
 */
public record TxnRecord(String txid, boolean published, long atMillis, Map<Integer, Long> sequences,
    List<WriteSummary.StagedPart> parts) {
  private static final int MAGIC = 0x4C435458;  // "LCTX"
  private static final byte VERSION = 1;

  /** The order of parts within a bucket: ties of a key go to the later part. */
  public static final Comparator<WriteSummary.StagedPart> ORDER = Comparator
      .comparingInt(WriteSummary.StagedPart::bucket).thenComparing(WriteSummary.StagedPart::partId)
      .thenComparingInt(WriteSummary.StagedPart::index).thenComparing(WriteSummary.StagedPart::name);

  public TxnRecord {
    sequences = Map.copyOf(new TreeMap<>(sequences));
    List<WriteSummary.StagedPart> sorted = new ArrayList<>(parts);
    sorted.sort(ORDER);
    parts = List.copyOf(sorted);
  }

  public static TxnRecord aborted(String txid, long atMillis) {
    return new TxnRecord(txid, false, atMillis, Map.of(), List.of());
  }

  public byte[] toBytes() {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (DataOutputStream out = new DataOutputStream(bytes)) {
      out.writeInt(MAGIC);
      out.writeByte(VERSION);
      out.writeUTF(txid);
      out.writeBoolean(published);
      out.writeLong(atMillis);
      out.writeInt(sequences.size());
      for (var e : new TreeMap<>(sequences).entrySet()) {
        out.writeInt(e.getKey());
        out.writeLong(e.getValue());
      }
      out.writeInt(parts.size());
      for (WriteSummary.StagedPart p : parts) {
        p.writeTo(out);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return bytes.toByteArray();
  }

  /** @throws IOException if the bytes are not a whole record (a writer stopped while writing it) */
  public static TxnRecord fromBytes(byte[] bytes) throws IOException {
    try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes))) {
      if (in.readInt() != MAGIC || in.readByte() != VERSION) {
        throw new IOException("not a transaction record");
      }
      String txid = in.readUTF();
      boolean published = in.readBoolean();
      long at = in.readLong();
      int n = in.readInt();
      Map<Integer, Long> seqs = new TreeMap<>();
      for (int i = 0; i < n; i++) {
        seqs.put(in.readInt(), in.readLong());
      }
      int m = in.readInt();
      List<WriteSummary.StagedPart> parts = new ArrayList<>(m);
      for (int i = 0; i < m; i++) {
        parts.add(WriteSummary.StagedPart.readFrom(in));
      }
      return new TxnRecord(txid, published, at, seqs, parts);
    } catch (java.io.EOFException e) {
      throw new IOException("a truncated transaction record", e);
    }
  }
}
