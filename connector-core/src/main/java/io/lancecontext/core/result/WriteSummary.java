package io.lancecontext.core.result;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.Serializable;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * What a write handle's {@code commit()} made durable and visible since the previous commit: rows
 * written, keys deleted (both after dedupe by key within each put), and per MemWAL shard the epoch its
 * writer held it with and the WAL entries that hold the rows. Small and free of secrets (no option
 * value, no {@code storage.*} value, no store location), so an engine ships it as it is: Java-serializable
 * for a Spark {@code WriterCommitMessage}, and {@link #toBytes()}/{@link #fromBytes(byte[])} give a stable
 * byte form (a leading format version) for a Flink committable serializer. Immutable.
 *
 * <p>An atomic handle's summary also names its transaction and the parts it staged
 * ({@link #staged()}): exactly those parts become visible when the summary is passed to
 * {@code ContextStore.publish}; its {@link #shards()} are then empty.
 */
public final class WriteSummary implements Serializable {
  private static final long serialVersionUID = 1L;

  /** The version of the byte form {@link #toBytes()} writes; {@link #fromBytes} reads it and every older one. */
  public static final byte FORMAT_VERSION = 2;

  /**
   * The puts one handle made on one shard while its writer held epoch {@code epoch}: {@code puts} WAL
   * entries between {@code firstWalPosition} and {@code lastWalPosition} (inclusive; entries of other
   * writers' rows may lie between them). Rows shared with other callers of one put (group commit) are in
   * the same entry.
   */
  public record ShardPuts(int bucket, int lane, String shardId, long epoch, long firstWalPosition,
      long lastWalPosition, int puts) implements Serializable {
    private static final long serialVersionUID = 1L;

    public ShardPuts {
      Objects.requireNonNull(shardId, "shardId");
    }
  }

  /**
   * One part an atomic handle staged: the rows of one bucket written once, as a Lance dataset named
   * {@code name}, by writer {@code partId} as the {@code index}-th part it wrote (0, 1, ...). Within a
   * transaction a key's row in the part of the greater {@code (partId, index)} wins.
   */
  public record StagedPart(int bucket, String name, String partId, int index, long rows, long deletes)
      implements Serializable {
    private static final long serialVersionUID = 1L;

    public StagedPart {
      Objects.requireNonNull(name, "name");
      Objects.requireNonNull(partId, "partId");
    }

    /** Writes the part in its stable byte form (that of {@link #toBytes()}, shared by transaction records). */
    public void writeTo(DataOutputStream out) throws IOException {
      out.writeInt(bucket);
      out.writeUTF(name);
      out.writeUTF(partId);
      out.writeInt(index);
      out.writeLong(rows);
      out.writeLong(deletes);
    }

    /** Reads a part written by {@link #writeTo}. */
    public static StagedPart readFrom(DataInputStream in) throws IOException {
      return new StagedPart(in.readInt(), in.readUTF(), in.readUTF(), in.readInt(), in.readLong(), in.readLong());
    }
  }

  private static final WriteSummary EMPTY = new WriteSummary(0, 0, List.of());

  private final long rowsWritten;
  private final long keysDeleted;
  private final List<ShardPuts> shards;
  private final String transactionId;
  private final List<StagedPart> staged;

  public WriteSummary(long rowsWritten, long keysDeleted, List<ShardPuts> shards) {
    this(rowsWritten, keysDeleted, shards, null, List.of());
  }

  /** A summary of an atomic handle ({@code transactionId} not null) or of an immediate one. */
  public WriteSummary(long rowsWritten, long keysDeleted, List<ShardPuts> shards, String transactionId,
      List<StagedPart> staged) {
    this.rowsWritten = rowsWritten;
    this.keysDeleted = keysDeleted;
    this.shards = List.copyOf(shards);
    this.transactionId = transactionId;
    this.staged = List.copyOf(staged);
    if (transactionId == null && !this.staged.isEmpty()) {
      throw new IllegalArgumentException("staged parts without a transaction");
    }
  }

  /** The transaction an atomic handle staged under; empty for an immediate handle. */
  public java.util.Optional<String> transactionId() {
    return java.util.Optional.ofNullable(transactionId);
  }

  /** The parts an atomic handle staged since its previous commit, in the order they were written. */
  public List<StagedPart> staged() {
    return staged;
  }

  /** Nothing written. */
  public static WriteSummary empty() {
    return EMPTY;
  }

  /** Rows upserted (after dedupe by key within each put). */
  public long rowsWritten() {
    return rowsWritten;
  }

  /** Keys deleted (tombstones written, after dedupe by key within each put). */
  public long keysDeleted() {
    return keysDeleted;
  }

  /** Per shard and writer epoch, the WAL entries that hold the rows, in the order they were first written. */
  public List<ShardPuts> shards() {
    return shards;
  }

  /** The stable byte form: {@link #FORMAT_VERSION}, then the fields. */
  public byte[] toBytes() {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream(32 + 64 * shards.size());
    try (DataOutputStream out = new DataOutputStream(bytes)) {
      out.writeByte(FORMAT_VERSION);
      out.writeLong(rowsWritten);
      out.writeLong(keysDeleted);
      out.writeInt(shards.size());
      for (ShardPuts s : shards) {
        out.writeInt(s.bucket());
        out.writeInt(s.lane());
        out.writeUTF(s.shardId());
        out.writeLong(s.epoch());
        out.writeLong(s.firstWalPosition());
        out.writeLong(s.lastWalPosition());
        out.writeInt(s.puts());
      }
      out.writeBoolean(transactionId != null);
      if (transactionId != null) {
        out.writeUTF(transactionId);
      }
      out.writeInt(staged.size());
      for (StagedPart p : staged) {
        p.writeTo(out);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return bytes.toByteArray();
  }

  /**
   * Reads the byte form of this or an older version.
   *
   * @throws IllegalArgumentException if the bytes are not a summary, or of a newer format version
   */
  public static WriteSummary fromBytes(byte[] bytes) {
    try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes))) {
      byte version = in.readByte();
      if (version != 1 && version != FORMAT_VERSION) {
        throw new IllegalArgumentException("a write summary of format version " + version + "; this build reads "
            + "version " + FORMAT_VERSION);
      }
      long rows = in.readLong();
      long deleted = in.readLong();
      int n = in.readInt();
      if (n < 0 || n > bytes.length) {
        throw new IllegalArgumentException("not a write summary (" + n + " shards)");
      }
      List<ShardPuts> shards = new ArrayList<>(n);
      for (int i = 0; i < n; i++) {
        shards.add(new ShardPuts(in.readInt(), in.readInt(), in.readUTF(), in.readLong(), in.readLong(), in.readLong(),
            in.readInt()));
      }
      String txn = null;
      List<StagedPart> staged = new ArrayList<>();
      if (version >= 2) {
        if (in.readBoolean()) {
          txn = in.readUTF();
        }
        int m = in.readInt();
        if (m < 0 || m > bytes.length) {
          throw new IllegalArgumentException("not a write summary (" + m + " staged parts)");
        }
        for (int i = 0; i < m; i++) {
          staged.add(StagedPart.readFrom(in));
        }
      }
      if (in.available() > 0) {
        throw new IllegalArgumentException("not a write summary (" + in.available() + " bytes after its end)");
      }
      return new WriteSummary(rows, deleted, shards, txn, staged);
    } catch (IOException e) {
      throw new IllegalArgumentException("not a write summary: " + e, e);
    }
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof WriteSummary w && w.rowsWritten == rowsWritten && w.keysDeleted == keysDeleted
        && w.shards.equals(shards) && Objects.equals(w.transactionId, transactionId) && w.staged.equals(staged);
  }

  @Override
  public int hashCode() {
    return Objects.hash(rowsWritten, keysDeleted, shards, transactionId, staged);
  }

  @Override
  public String toString() {
    return "WriteSummary[rows=" + rowsWritten + ", deleted=" + keysDeleted + ", shards=" + shards
        + (transactionId == null ? "" : ", transaction=" + transactionId + ", staged=" + staged) + "]";
  }
}
