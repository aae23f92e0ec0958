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
 * The enumerator's checkpoint: the splits not yet assigned and, for a bounded scan (planned once, at the first
 * start), when the plan was made (a restored enumerator holds the plan readable, including the splits readers
 * hold); for a continuous source, its {@link StreamPosition} ({@code stream}, null for a bounded scan).
 */
public record PendingSplits(List<LanceContextSplit> splits, long plannedAtMillis, StreamPosition stream) {
  public PendingSplits {
    splits = List.copyOf(splits);
  }

  public PendingSplits(List<LanceContextSplit> splits, long plannedAtMillis) {
    this(splits, plannedAtMillis, null);
  }

  /** Serializes the pending splits with {@link LanceContextSplitSerializer}. */
  public static final class Serializer implements SimpleVersionedSerializer<PendingSplits> {
    /**
     * Version 3 adds the stream position (and holds version 2 splits); version 2 added the planning time;
     * version 1 states are read with the pending splits' own.
     */
    private static final int VERSION = 3;

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
        out.writeBoolean(state.stream() != null);
        if (state.stream() != null) {
          state.stream().write(out);
        }
      }
      return bytes.toByteArray();
    }

    @Override
    public PendingSplits deserialize(int version, byte[] serialized) throws IOException {
      if (version < 1 || version > VERSION) {
        throw new IOException("unknown lancecontext enumerator state version " + version);
      }
      int splitVersion = version < 3 ? 1 : LanceContextSplitSerializer.INSTANCE.getVersion();
      try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(serialized))) {
        long plannedAt = version == 1 ? -1 : in.readLong();
        int n = in.readInt();
        List<LanceContextSplit> splits = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
          byte[] b = new byte[in.readInt()];
          in.readFully(b);
          splits.add(LanceContextSplitSerializer.INSTANCE.deserialize(splitVersion, b));
        }
        StreamPosition stream = version >= 3 && in.readBoolean() ? StreamPosition.read(in) : null;
        if (plannedAt < 0) {
          plannedAt = splits.stream().mapToLong(sp -> sp.split().snapshot().plannedAt().toEpochMilli()).min()
              .orElse(System.currentTimeMillis());
        }
        return new PendingSplits(splits, plannedAt, stream);
      }
    }
  }
}
