package io.lancecontext.flink.sink;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Objects;
import org.apache.flink.core.io.SimpleVersionedSerializer;

/**
 * One writer subtask's state at a checkpoint: the checkpoint's id (exactly-once names its next transaction
 * above it) and, at-least-once, where its keyless rows' keys stand: the id seed of its write handle and the
 * ordinal of its next keyless row. A writer restored from it continues that seed at that ordinal, so the rows
 * the restored job replays after the checkpoint get the keys the failed attempt gave them (when they reach the
 * writer in the same order) and replace its rows instead of duplicating them. Immutable.
 *
 * @param checkpointId the checkpoint this state was taken at
 * @param idSeed the seed of keyless rows' keys, or null (exactly-once, or a state of version 1)
 * @param keylessOrdinal the ordinal of the next keyless row under {@code idSeed}
 */
public record LanceContextWriterState(long checkpointId, String idSeed, long keylessOrdinal) {

  /** Version 2: checkpoint id, then a flag, the seed (UTF) and the ordinal if there is a seed. Reads version 1 (8 bytes: the id). */
  static final class Serializer implements SimpleVersionedSerializer<LanceContextWriterState> {
    @Override
    public int getVersion() {
      return 2;
    }

    @Override
    public byte[] serialize(LanceContextWriterState state) throws IOException {
      ByteArrayOutputStream bytes = new ByteArrayOutputStream();
      try (DataOutputStream out = new DataOutputStream(bytes)) {
        out.writeLong(state.checkpointId());
        out.writeBoolean(state.idSeed() != null);
        if (state.idSeed() != null) {
          out.writeUTF(state.idSeed());
          out.writeLong(state.keylessOrdinal());
        }
      }
      return bytes.toByteArray();
    }

    @Override
    public LanceContextWriterState deserialize(int version, byte[] bytes) throws IOException {
      if (version == 1 && bytes.length == 8) {
        return new LanceContextWriterState(ByteBuffer.wrap(bytes).getLong(), null, 0);
      }
      if (version != 2) {
        throw new IOException("a lancecontext writer state of version " + version + " (" + bytes.length
            + " bytes); this build reads versions 1 and 2");
      }
      try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes))) {
        long id = in.readLong();
        if (!in.readBoolean()) {
          return new LanceContextWriterState(id, null, 0);
        }
        String seed = Objects.requireNonNull(in.readUTF());
        return new LanceContextWriterState(id, seed, in.readLong());
      }
    }
  }
}
