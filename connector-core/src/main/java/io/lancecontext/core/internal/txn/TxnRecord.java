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
 * bucket it touches and exactly the parts that became visible) or aborted. An aborted record is
 * {@code expired} when garbage collection decided it because no owner renewed the transaction within its
 * {@code txn.timeout} (see {@link TxnLiveness}), not because someone aborted it.
 *
 * @param sequences bucket → the write sequence every row of the transaction in that bucket reads as
 * @param parts the visible parts, in the order ties resolve (bucket, part id, index): the later wins
 */
public record TxnRecord(String txid, boolean published, long atMillis, Map<Integer, Long> sequences,
    List<WriteSummary.StagedPart> parts, boolean expired) {
  private static final int MAGIC = 0x4C435458;  // "LCTX"
  private static final byte VERSION = 1;
  /** Version 2 adds the expired flag; only expired records are written in it (others stay readable by older builds). */
  private static final byte VERSION_EXPIRED = 2;

  /** The order of parts within a bucket: ties of a key go to the later part. */
  public static final Comparator<WriteSummary.StagedPart> ORDER = Comparator
      .comparingInt(WriteSummary.StagedPart::bucket).thenComparing(WriteSummary.StagedPart::partId)
      .thenComparingInt(WriteSummary.StagedPart::index).thenComparing(WriteSummary.StagedPart::name);

  public TxnRecord(String txid, boolean published, long atMillis, Map<Integer, Long> sequences,
      List<WriteSummary.StagedPart> parts) {
    this(txid, published, atMillis, sequences, parts, false);
  }

  public TxnRecord {
    if (published && expired) {
      throw new IllegalArgumentException("a published transaction record cannot be expired");
    }
    sequences = Map.copyOf(new TreeMap<>(sequences));
    List<WriteSummary.StagedPart> sorted = new ArrayList<>(parts);
    sorted.sort(ORDER);
    parts = List.copyOf(sorted);
  }

  public static TxnRecord aborted(String txid, long atMillis) {
    return new TxnRecord(txid, false, atMillis, Map.of(), List.of());
  }

  /** The record garbage collection writes for a transaction nobody renewed within its timeout. */
  public static TxnRecord expired(String txid, long atMillis) {
    return new TxnRecord(txid, false, atMillis, Map.of(), List.of(), true);
  }

  public byte[] toBytes() {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (DataOutputStream out = new DataOutputStream(bytes)) {
      out.writeInt(MAGIC);
      out.writeByte(expired ? VERSION_EXPIRED : VERSION);
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
      if (in.readInt() != MAGIC) {
        throw new IOException("not a transaction record");
      }
      byte version = in.readByte();
      if (version != VERSION && version != VERSION_EXPIRED) {
        throw new IOException("a transaction record of an unknown version " + version);
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
      return new TxnRecord(txid, published, at, seqs, parts, version == VERSION_EXPIRED);
    } catch (java.io.EOFException e) {
      throw new IOException("a truncated transaction record", e);
    }
  }
}
