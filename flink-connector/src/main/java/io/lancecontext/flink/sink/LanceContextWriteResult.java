package io.lancecontext.flink.sink;

import io.lancecontext.core.result.WriteSummary;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.Arrays;
import java.util.Objects;
import org.apache.flink.core.io.SimpleVersionedSerializer;

/**
 * What one exactly-once writer subtask staged for one checkpoint: the transaction it staged under and the
 * summary its write handle's {@code commit()} returned ({@link WriteSummary#toBytes()}: staged part names and
 * row counts, no option, no {@code storage.*} value, no store location). The pre-commit aggregator gathers the
 * results of every subtask into one {@link LanceContextCommittable} per checkpoint. Immutable.
 */
public final class LanceContextWriteResult {
  private final String transactionId;
  private final int subtask;
  private final byte[] summary;

  public LanceContextWriteResult(String transactionId, int subtask, byte[] summary) {
    this.transactionId = Objects.requireNonNull(transactionId, "transactionId");
    this.subtask = subtask;
    this.summary = summary.clone();
  }

  public String transactionId() {
    return transactionId;
  }

  public int subtask() {
    return subtask;
  }

  /** The write handle's summary in its stable byte form. */
  public byte[] summary() {
    return summary.clone();
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof LanceContextWriteResult r && r.transactionId.equals(transactionId) && r.subtask == subtask
        && Arrays.equals(r.summary, summary);
  }

  @Override
  public int hashCode() {
    return Objects.hash(transactionId, subtask, Arrays.hashCode(summary));
  }

  @Override
  public String toString() {
    return "LanceContextWriteResult[transaction=" + transactionId + ", subtask=" + subtask + ", summary="
        + WriteSummary.fromBytes(summary) + "]";
  }

  /** Version 1: transaction id (UTF), subtask (int), summary length (int) and bytes. */
  static final class Serializer implements SimpleVersionedSerializer<LanceContextWriteResult> {
    static final int VERSION = 1;

    @Override
    public int getVersion() {
      return VERSION;
    }

    @Override
    public byte[] serialize(LanceContextWriteResult r) throws IOException {
      ByteArrayOutputStream bytes = new ByteArrayOutputStream(64 + r.summary.length);
      try (DataOutputStream out = new DataOutputStream(bytes)) {
        out.writeUTF(r.transactionId);
        out.writeInt(r.subtask);
        out.writeInt(r.summary.length);
        out.write(r.summary);
      }
      return bytes.toByteArray();
    }

    @Override
    public LanceContextWriteResult deserialize(int version, byte[] serialized) throws IOException {
      if (version != VERSION) {
        throw new IOException("a lancecontext write result of serializer version " + version + "; this build reads "
            + "version " + VERSION);
      }
      try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(serialized))) {
        String txn = in.readUTF();
        int subtask = in.readInt();
        byte[] summary = new byte[checkedLength(in.readInt(), serialized.length)];
        in.readFully(summary);
        return new LanceContextWriteResult(txn, subtask, summary);
      }
    }
  }

  static int checkedLength(int n, int available) throws IOException {
    if (n < 0 || n > available) {
      throw new IOException("corrupt lancecontext committable (length " + n + ")");
    }
    return n;
  }
}
