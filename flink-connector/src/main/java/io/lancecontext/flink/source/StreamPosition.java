package io.lancecontext.flink.source;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * Where a continuous source is, in its enumerator's checkpoint: the last snapshot it turned into splits (its
 * {@code lastGeneration}-th position), the positions it still keeps tagged ({@link StreamTags}, by generation),
 * and the splits its readers were given and had not reported finished (by id, with their generation): together
 * with the pending splits, what a restore needs kept.
 *
 * @param streamId chosen when the job first starts and kept by every restore: the name of the job's tags
 */
public record StreamPosition(String streamId, String lastToken, long lastGeneration, SortedMap<Long, String> kept,
    Map<String, Long> assigned) {
  public StreamPosition {
    kept = new TreeMap<>(kept);
    assigned = new LinkedHashMap<>(assigned);
  }

  void write(DataOutputStream out) throws IOException {
    out.writeUTF(streamId);
    out.writeUTF(lastToken);
    out.writeLong(lastGeneration);
    out.writeInt(kept.size());
    for (Map.Entry<Long, String> e : kept.entrySet()) {
      out.writeLong(e.getKey());
      out.writeUTF(e.getValue());
    }
    out.writeInt(assigned.size());
    for (Map.Entry<String, Long> e : assigned.entrySet()) {
      out.writeUTF(e.getKey());
      out.writeLong(e.getValue());
    }
  }

  static StreamPosition read(DataInputStream in) throws IOException {
    String id = in.readUTF();
    String last = in.readUTF();
    long generation = in.readLong();
    SortedMap<Long, String> kept = new TreeMap<>();
    for (int i = in.readInt(); i > 0; i--) {
      kept.put(in.readLong(), in.readUTF());
    }
    Map<String, Long> assigned = new LinkedHashMap<>();
    for (int i = in.readInt(); i > 0; i--) {
      assigned.put(in.readUTF(), in.readLong());
    }
    return new StreamPosition(id, last, generation, kept, assigned);
  }
}
