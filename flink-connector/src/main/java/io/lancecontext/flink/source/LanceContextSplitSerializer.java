package io.lancecontext.flink.source;

import io.lancecontext.core.read.ReadSplit;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import org.apache.flink.core.io.SimpleVersionedSerializer;

/**
 * Splits in checkpoints and on the wire: the split id, the rows emitted, and core's {@link ReadSplit}
 * (Java-serialized; it holds no {@code storage.*} value, so no secret reaches a checkpoint), then the split's
 * generation (version 2; version 1 splits, of bounded scans, read as generation 0).
 */
public final class LanceContextSplitSerializer implements SimpleVersionedSerializer<LanceContextSplit> {
  public static final LanceContextSplitSerializer INSTANCE = new LanceContextSplitSerializer();
  private static final int VERSION = 2;

  @Override
  public int getVersion() {
    return VERSION;
  }

  @Override
  public byte[] serialize(LanceContextSplit split) throws IOException {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (DataOutputStream out = new DataOutputStream(bytes)) {
      out.writeUTF(split.id());
      out.writeLong(split.emitted());
      ByteArrayOutputStream object = new ByteArrayOutputStream();
      try (ObjectOutputStream o = new ObjectOutputStream(object)) {
        o.writeObject(split.split());
      }
      out.writeInt(object.size());
      object.writeTo(out);
      out.writeLong(split.generation());
    }
    return bytes.toByteArray();
  }

  @Override
  public LanceContextSplit deserialize(int version, byte[] serialized) throws IOException {
    if (version != VERSION && version != 1) {
      throw new IOException("unknown lancecontext split version " + version + " (this connector writes " + VERSION + ")");
    }
    try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(serialized))) {
      String id = in.readUTF();
      long emitted = in.readLong();
      byte[] object = new byte[in.readInt()];
      in.readFully(object);
      ReadSplit split;
      try (ObjectInputStream o = new ObjectInputStream(new ByteArrayInputStream(object))) {
        split = (ReadSplit) o.readObject();
      } catch (ClassNotFoundException e) {
        throw new IOException("cannot read a lancecontext split", e);
      }
      return new LanceContextSplit(id, split, emitted, version == 1 ? 0 : in.readLong());
    }
  }
}
