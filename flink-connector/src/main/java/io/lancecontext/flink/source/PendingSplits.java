package io.lancecontext.flink.source;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.core.io.SimpleVersionedSerializer;

/**
 * The enumerator's checkpoint: the splits not yet assigned (the plan is made once, at the first start) and
 * when the plan was made (a restored enumerator holds the plan readable, including the splits readers hold).
 */
public record PendingSplits(List<LanceContextSplit> splits, long plannedAtMillis) {
  public PendingSplits {
    splits = List.copyOf(splits);
  }

  /** Serializes the pending splits with {@link LanceContextSplitSerializer}. */
  public static final class Serializer implements SimpleVersionedSerializer<PendingSplits> {
    /** Version 2 adds the planning time; version 1 states are read with the pending splits' own. */
    private static final int VERSION = 2;

    @Override
    public int getVersion() {
      return VERSION;
    }

    @Override
    public byte[] serialize(PendingSplits state) throws IOException {
      ByteArrayOutputStream bytes = new ByteArrayOutputStream();
      try (DataOutputStream out = new DataOutputStream(bytes)) {
        out.writeLong(state.plannedAtMillis());
        out.writeInt(state.splits().size());
        for (LanceContextSplit s : state.splits()) {
          byte[] b = LanceContextSplitSerializer.INSTANCE.serialize(s);
          out.writeInt(b.length);
          out.write(b);
        }
      }
      return bytes.toByteArray();
    }

    @Override
    public PendingSplits deserialize(int version, byte[] serialized) throws IOException {
      if (version != VERSION && version != 1) {
        throw new IOException("unknown lancecontext enumerator state version " + version);
      }
      try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(serialized))) {
        long plannedAt = version == 1 ? -1 : in.readLong();
        int n = in.readInt();
        List<LanceContextSplit> splits = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
          byte[] b = new byte[in.readInt()];
          in.readFully(b);
          splits.add(LanceContextSplitSerializer.INSTANCE.deserialize(LanceContextSplitSerializer.INSTANCE.getVersion(), b));
        }
        if (plannedAt < 0) {
          plannedAt = splits.stream().mapToLong(sp -> sp.split().snapshot().plannedAt().toEpochMilli()).min()
              .orElse(System.currentTimeMillis());
        }
        return new PendingSplits(splits, plannedAt);
      }
    }
  }
}
