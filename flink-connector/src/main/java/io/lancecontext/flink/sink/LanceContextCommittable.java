package io.lancecontext.flink.sink;

import io.lancecontext.core.result.WriteSummary;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import org.apache.flink.core.io.SimpleVersionedSerializer;

/**
 * What the committer publishes for one Flink checkpoint: the transactions the writer subtasks staged under,
 * each with the summaries of every subtask's write handle. Normally one transaction, named after the
 * checkpoint; two or more only when an aborted checkpoint reached some writers and not others (see
 * {@link LanceContextSink}). Transactions are published in {@link #transactions()} order. Carries no option
 * and no secret. Immutable.
 */
public final class LanceContextCommittable {
  private final long checkpointId;
  private final Map<String, List<byte[]>> transactions;

  /**
   * @param checkpointId the Flink checkpoint that carries it
   * @param transactions per transaction id, the subtasks' summaries (any order: they are ordered by
   *     {@link LanceContextSinkWriter#transactionOrder})
   */
  public LanceContextCommittable(long checkpointId, Map<String, List<byte[]>> transactions) {
    this.checkpointId = checkpointId;
    Map<String, List<byte[]>> sorted = new TreeMap<>(LanceContextSinkWriter.transactionOrder());
    transactions.forEach((txn, summaries) -> sorted.put(txn, summaries.stream().map(byte[]::clone).toList()));
    this.transactions = Collections.unmodifiableMap(new LinkedHashMap<>(sorted));
  }

  public long checkpointId() {
    return checkpointId;
  }

  /** Transaction id to its summaries (bytes of {@link WriteSummary#toBytes()}), in publish order. */
  public Map<String, List<byte[]>> transactions() {
    return transactions;
  }

  /** The summaries of one transaction, decoded. */
  List<WriteSummary> summaries(String transactionId) {
    List<WriteSummary> out = new ArrayList<>();
    for (byte[] b : transactions.get(transactionId)) {
      out.add(WriteSummary.fromBytes(b));
    }
    return out;
  }

  @Override
  public boolean equals(Object o) {
    if (!(o instanceof LanceContextCommittable c) || c.checkpointId != checkpointId
        || !c.transactions.keySet().equals(transactions.keySet())) {
      return false;
    }
    for (var e : transactions.entrySet()) {
      List<byte[]> other = c.transactions.get(e.getKey());
      if (other.size() != e.getValue().size()) {
        return false;
      }
      for (int i = 0; i < other.size(); i++) {
        if (!java.util.Arrays.equals(other.get(i), e.getValue().get(i))) {
          return false;
        }
      }
    }
    return true;
  }

  @Override
  public int hashCode() {
    return Objects.hash(checkpointId, transactions.keySet());
  }

  @Override
  public String toString() {
    Map<String, Integer> parts = new LinkedHashMap<>();
    transactions.forEach((t, s) -> parts.put(t, s.size()));
    return "LanceContextCommittable[checkpoint=" + checkpointId + ", summaries per transaction=" + parts + "]";
  }

  /**
   * Version 1: checkpoint id (long), transaction count (int), then per transaction its id (UTF), summary
   * count (int) and each summary's length (int) and bytes.
   */
  static final class Serializer implements SimpleVersionedSerializer<LanceContextCommittable> {
    static final int VERSION = 1;

    @Override
    public int getVersion() {
      return VERSION;
    }

    @Override
    public byte[] serialize(LanceContextCommittable c) throws IOException {
      ByteArrayOutputStream bytes = new ByteArrayOutputStream(256);
      try (DataOutputStream out = new DataOutputStream(bytes)) {
        out.writeLong(c.checkpointId);
        out.writeInt(c.transactions.size());
        for (var e : c.transactions.entrySet()) {
          out.writeUTF(e.getKey());
          out.writeInt(e.getValue().size());
          for (byte[] s : e.getValue()) {
            out.writeInt(s.length);
            out.write(s);
          }
        }
      }
      return bytes.toByteArray();
    }

    @Override
    public LanceContextCommittable deserialize(int version, byte[] serialized) throws IOException {
      if (version != VERSION) {
        throw new IOException("a lancecontext committable of serializer version " + version + "; this build reads "
            + "version " + VERSION);
      }
      try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(serialized))) {
        long checkpoint = in.readLong();
        int n = LanceContextWriteResult.checkedLength(in.readInt(), serialized.length);
        Map<String, List<byte[]>> txns = new LinkedHashMap<>();
        for (int i = 0; i < n; i++) {
          String txn = in.readUTF();
          int m = LanceContextWriteResult.checkedLength(in.readInt(), serialized.length);
          List<byte[]> summaries = new ArrayList<>(m);
          for (int j = 0; j < m; j++) {
            byte[] s = new byte[LanceContextWriteResult.checkedLength(in.readInt(), serialized.length)];
            in.readFully(s);
            summaries.add(s);
          }
          txns.put(txn, summaries);
        }
        return new LanceContextCommittable(checkpoint, txns);
      }
    }
  }
}
